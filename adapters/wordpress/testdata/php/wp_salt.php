<?php
// Runs WordPress's own wp_salt() and wp_hash() from pluggable.php with
// stubbed option storage. Usage: php wp_salt.php PLUGGABLE_PHP < input.json
// input: {"constants": {...}, "options": {...}, "schemes": [...], "hash": [[data, scheme], ...]}
// output: JSON {"salts": {scheme: salt|null}, "hashes": [hash|null, ...]};
// null means wp_salt would have generated and stored a new salt.
$in = json_decode(stream_get_contents(STDIN), true);
foreach ($in['constants'] as $k => $v) {
	define($k, $v);
}
$GLOBALS['stub_options'] = $in['options'];
class Generated extends Exception {}
function get_site_option($name, $default = false) {
	return array_key_exists($name, $GLOBALS['stub_options']) ? $GLOBALS['stub_options'][$name] : $default;
}
function update_site_option($name, $value) { throw new Generated($name); }
// WordPress 6.6+ primes the option cache before reading the salts.
function wp_prime_site_option_caches($names) {}
function wp_generate_password($length = 12, $special = true, $extra = false) { return str_repeat('g', $length); }
function apply_filters($hook, $value) { return $value; }
function __($text) { return $text; }
$src = file_get_contents($argv[1]);
foreach (array('wp_salt', 'wp_hash') as $fn) {
	if (!preg_match('/\n\tfunction ' . $fn . '\(.*?\n\t}\n/s', $src, $m)) {
		fwrite(STDERR, "cannot find $fn\n");
		exit(1);
	}
	eval($m[0]);
}
$out = array('salts' => array(), 'hashes' => array());
foreach ($in['schemes'] as $s) {
	try { $out['salts'][$s] = wp_salt($s); } catch (Generated $e) { $out['salts'][$s] = null; }
}
foreach ($in['hash'] as $h) {
	try { $out['hashes'][] = wp_hash($h[0], $h[1]); } catch (Generated $e) { $out['hashes'][] = null; }
}
echo json_encode($out);
