<?php
/**
 * Loads the bridge without WordPress for its unit tests: the few WordPress
 * functions the tested pieces call are defined here, small and faithful
 * to WordPress's for the inputs the tests give, and the actions and
 * filters the bridge adds while loading are recorded, not run.
 *
 * ABSPATH is a WordPress installation when one is found
 * (MAILSVC_TEST_WORDPRESS_DIR, else Debian's /usr/share/wordpress/), so that
 * the pieces that use WordPress's bundled PHPMailer can be tested with it;
 * tests that need it are skipped without one.
 *
 * @package mailsvc
 */

$mailsvc_test_wp = getenv( 'MAILSVC_TEST_WORDPRESS_DIR' );
if ( ! is_string( $mailsvc_test_wp ) || '' === $mailsvc_test_wp ) {
	$mailsvc_test_wp = '/usr/share/wordpress/';
}
define( 'ABSPATH', rtrim( $mailsvc_test_wp, '/' ) . '/' );
define( 'WPINC', 'wp-includes' );
unset( $mailsvc_test_wp );

/**
 * What the tests see of WordPress's hooks: the actions and filters added
 * (hook => list of callbacks), the filters a test sets (hook => callable
 * taking the filtered value and the arguments), and the actions done.
 */
final class Mailsvc_Test_Hooks {
	/**
	 * Hook => callbacks added by the bridge.
	 *
	 * @var array
	 */
	public static $added = array();
	/**
	 * Hook => callable a test set.
	 *
	 * @var array
	 */
	public static $filters = array();
	/**
	 * Actions done: array( hook, arguments ).
	 *
	 * @var array
	 */
	public static $done = array();

	/**
	 * Forgets the filters set and the actions done.
	 */
	public static function reset() {
		self::$filters = array();
		self::$done    = array();
	}
}

/**
 * WordPress's add_filter(), recording.
 *
 * @param string   $hook     Hook.
 * @param callable $callback Callback.
 * @return true
 */
function add_filter( $hook, $callback ) {
	Mailsvc_Test_Hooks::$added[ $hook ][] = $callback;
	return true;
}

/**
 * WordPress's add_action(), recording.
 *
 * @param string   $hook     Hook.
 * @param callable $callback Callback.
 * @return true
 */
function add_action( $hook, $callback ) {
	return add_filter( $hook, $callback );
}

/**
 * WordPress's apply_filters(): the filter a test set, else the value.
 *
 * @param string $hook  Hook.
 * @param mixed  $value The value.
 * @param mixed  ...$args More arguments.
 * @return mixed
 */
function apply_filters( $hook, $value, ...$args ) {
	if ( isset( Mailsvc_Test_Hooks::$filters[ $hook ] ) ) {
		return call_user_func( Mailsvc_Test_Hooks::$filters[ $hook ], $value, ...$args );
	}
	return $value;
}

/**
 * WordPress's do_action(), recording.
 *
 * @param string $hook    Hook.
 * @param mixed  ...$args Arguments.
 */
function do_action( $hook, ...$args ) {
	Mailsvc_Test_Hooks::$done[] = array( $hook, $args );
}

/**
 * WordPress's is_email() for the addresses the tests give: a local part
 * of its allowed characters, an @, and a domain of at least two labels.
 *
 * @param string $email Address.
 * @return string|false
 */
function is_email( $email ) {
	if ( strlen( $email ) < 6 || ! preg_match( '/^[a-zA-Z0-9!#$%&\'*+\/=?^_`{|}~\.-]+@([a-z0-9-]+\.)+[a-z0-9-]+$/i', $email ) ) {
		return false;
	}
	return $email;
}

/**
 * WordPress's wp_basename().
 *
 * @param string $path   Path.
 * @param string $suffix Suffix to cut.
 * @return string
 */
function wp_basename( $path, $suffix = '' ) {
	return urldecode( basename( str_replace( array( '%2F', '%5C' ), '/', urlencode( $path ) ), $suffix ) );
}

/**
 * WordPress's wp_check_filetype() for the extensions the tests use.
 *
 * @param string $filename File name.
 * @return array Array( 'ext' => ..., 'type' => ... ), false for both when unknown.
 */
function wp_check_filetype( $filename ) {
	$types = array(
		'txt' => 'text/plain',
		'png' => 'image/png',
		'pdf' => 'application/pdf',
	);
	$ext   = strtolower( pathinfo( $filename, PATHINFO_EXTENSION ) );
	return isset( $types[ $ext ] ) ? array(
		'ext'  => $ext,
		'type' => $types[ $ext ],
	) : array(
		'ext'  => false,
		'type' => false,
	);
}

/**
 * WordPress's wp_parse_url().
 *
 * @param string $url       URL.
 * @param int    $component A PHP_URL_* component, or -1.
 * @return mixed
 */
function wp_parse_url( $url, $component = -1 ) {
	return parse_url( $url, $component );
}

/**
 * What the tests give WordPress's translation functions: translations of
 * the default text domain by text ("context\x04text" with a context).
 * Empty, every string is its English self, as on a site without the
 * language's pack.
 */
final class Mailsvc_Test_L10n {
	/**
	 * Text (with its context) => translation.
	 *
	 * @var string[]
	 */
	public static $strings = array();
}

/**
 * WordPress's translate_with_gettext_context(), from Mailsvc_Test_L10n.
 *
 * @param string $text    Text.
 * @param string $context Context.
 * @return string
 */
function translate_with_gettext_context( $text, $context ) {
	return Mailsvc_Test_L10n::$strings[ $context . "\x04" . $text ] ?? $text;
}

/**
 * WordPress's __(), from Mailsvc_Test_L10n.
 *
 * @param string $text Text.
 * @return string
 */
function __( $text ) {
	return Mailsvc_Test_L10n::$strings[ $text ] ?? $text;
}

/**
 * WordPress's _x(), from Mailsvc_Test_L10n.
 *
 * @param string $text    Text.
 * @param string $context Context.
 * @return string
 */
function _x( $text, $context ) {
	return translate_with_gettext_context( $text, $context );
}

/**
 * WordPress's zeroise().
 *
 * @param int $number    Number.
 * @param int $threshold Digits.
 * @return string
 */
function zeroise( $number, $threshold ) {
	return sprintf( '%0' . $threshold . 's', $number );
}

require dirname( __DIR__ ) . '/mailsvc-bridge.php';
