<?php
/**
 * The takeover of wp_mail(): the function WordPress calls, defined here
 * before pluggable.php, unless another plugin defined it first; and the
 * source of a message, the plugin or theme that called wp_mail(), which
 * also decides whether the message is excluded from the takeover
 * (the service's excluded_sources directive).
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

if ( function_exists( 'wp_mail' ) ) {
	// Another plugin got there first: do not pretend to have taken over.
	add_action( 'admin_notices', 'mailsvc_bridge_conflict_notice' );
} else {
	/**
	 * Queues an email for the mailsvc delivery service, with the signature
	 * and semantics of WordPress's wp_mail().
	 *
	 * @param string|string[] $to          Array or comma-separated list of email addresses.
	 * @param string          $subject     Email subject.
	 * @param string          $message     Message contents.
	 * @param string|string[] $headers     Optional. Additional headers.
	 * @param string|string[] $attachments Optional. Paths to files to attach.
	 * @param string|string[] $embeds      Optional. Paths to files to embed
	 *                                     (WordPress 6.9's sixth argument;
	 *                                     taken on every version).
	 * @return bool Whether the email was queued.
	 */
	function wp_mail( $to, $subject, $message, $headers = '', $attachments = array(), $embeds = array() ) {
		return mailsvc_bridge_queue( $to, $subject, $message, $headers, $attachments, $embeds, func_num_args() >= 6 );
	}
	define( 'MAIL_SVC_WP_MAIL_TAKEOVER', true );
}

/**
 * Describes where the wp_mail() that is not ours was defined.
 *
 * @return string The defining file, relative to the content directory when inside it.
 */
function mailsvc_bridge_wp_mail_owner() {
	try {
		$fn   = new ReflectionFunction( 'wp_mail' );
		$file = (string) $fn->getFileName();
	} catch ( ReflectionException $e ) {
		return __( 'an unknown plugin', 'mailsvc' );
	}
	$file = wp_normalize_path( $file );
	foreach ( array( WPMU_PLUGIN_DIR, WP_PLUGIN_DIR, WP_CONTENT_DIR ) as $root ) {
		$root = trailingslashit( wp_normalize_path( $root ) );
		if ( 0 === strpos( $file, $root ) ) {
			return substr( $file, strlen( trailingslashit( wp_normalize_path( WP_CONTENT_DIR ) ) ) );
		}
	}
	return $file;
}

/**
 * Names the plugin or theme that called wp_mail(): the innermost stack
 * frame (the one nearest to wp_mail()) in a file of a plugin, a must-use
 * plugin or a theme. Frames in WordPress itself, drop-ins and this bridge
 * are passed over, so a core function that mails on a plugin's behalf
 * (wp_new_user_notification() called from a plugin's form handler) names
 * the plugin, and a call path that is WordPress's alone names "wordpress".
 *
 * PHP reports included files by their real path, so a plugin or theme
 * directory that is a symbolic link is recognised through WordPress's
 * $wp_plugin_paths (filled as active plugins load), the real paths of the
 * plugin, must-use plugin and theme roots, and the real paths of the active
 * theme and its parent.
 *
 * @return string A plugin slug, "theme:<slug>", or "wordpress".
 */
function mailsvc_bridge_source() {
	$roots = mailsvc_bridge_source_roots();
	$dir   = MAILSVC_BRIDGE_DIR . DIRECTORY_SEPARATOR;
	foreach ( debug_backtrace( DEBUG_BACKTRACE_IGNORE_ARGS ) as $frame ) {
		if ( empty( $frame['file'] ) || MAILSVC_BRIDGE_FILE === $frame['file'] || 0 === strpos( $frame['file'], $dir ) ) {
			continue;
		}
		$source = mailsvc_bridge_source_of( wp_normalize_path( $frame['file'] ), $roots );
		if ( null !== $source ) {
			return $source;
		}
	}
	return 'wordpress';
}

/**
 * Names the plugin or theme a file belongs to.
 *
 * @param string  $file  A normalized file path.
 * @param array[] $roots Roots as mailsvc_bridge_source_roots() returns them.
 * @return string|null A plugin slug or "theme:<slug>", or null when the file is in none.
 */
function mailsvc_bridge_source_of( $file, $roots ) {
	foreach ( $roots as $root ) {
		if ( 0 !== strncmp( $file, $root[0], strlen( $root[0] ) ) ) {
			continue;
		}
		if ( null !== $root[2] ) {
			return $root[2];
		}
		$rest  = (string) substr( $file, strlen( $root[0] ) );
		$slash = strpos( $rest, '/' );
		if ( false !== $slash ) {
			$slug = substr( $rest, 0, $slash );
		} else {
			// A single-file plugin, or a file eval()'d from one.
			$slug = preg_replace( '/\.php(\(\d+\) : .*)?$/i', '', $rest );
		}
		if ( '' === $slug ) {
			continue;
		}
		return $root[1] . $slug;
	}
	return null;
}

/**
 * Lists the directories whose files name a source, most specific first:
 * each is array( directory with a trailing slash, prefix of the slug,
 * fixed slug or null when the slug is the first path segment below it ).
 * The list is kept for the request and rebuilt when more plugins or theme
 * directories have been registered, or once the theme is set up.
 *
 * @return array[] Roots.
 */
function mailsvc_bridge_source_roots() {
	global $wp_plugin_paths, $wp_theme_directories;
	static $roots = null;
	static $key   = null;
	$themed = function_exists( 'did_action' ) && did_action( 'setup_theme' ) > 0;
	$now    = count( (array) $wp_plugin_paths ) . '/' . count( (array) $wp_theme_directories ) . '/' . ( $themed ? 1 : 0 );
	if ( null !== $roots && $key === $now ) {
		return $roots;
	}
	$list = array();
	$add  = function ( $dir, $prefix, $slug ) use ( &$list ) {
		$dir = (string) $dir;
		if ( '' === $dir ) {
			return;
		}
		$candidates = array( $dir );
		$real       = realpath( $dir );
		if ( false !== $real ) {
			$candidates[] = $real;
		}
		foreach ( $candidates as $path ) {
			$path = trailingslashit( wp_normalize_path( $path ) );
			if ( '/' !== $path && ! isset( $list[ $path ] ) ) {
				$list[ $path ] = array( $path, $prefix, $slug );
			}
		}
	};
	$add( WP_PLUGIN_DIR, '', null );
	$add( WPMU_PLUGIN_DIR, '', null );
	$theme_roots = array_filter( (array) $wp_theme_directories, 'is_string' );
	if ( function_exists( 'get_theme_root' ) ) {
		$theme_roots[] = get_theme_root();
	}
	foreach ( array_unique( $theme_roots ) as $dir ) {
		$add( $dir, 'theme:', null );
	}
	// Plugin directories that are symbolic links: WordPress maps each
	// active plugin's directory to its real path.
	$base = array_values( $list );
	foreach ( (array) $wp_plugin_paths as $dir => $realdir ) {
		$slug = mailsvc_bridge_source_of( trailingslashit( wp_normalize_path( $dir ) ) . 'plugin.php', $base );
		if ( null !== $slug ) {
			$add( $realdir, '', $slug );
		}
	}
	// The active theme and its parent, when their directories are links.
	if ( $themed && function_exists( 'get_stylesheet_directory' ) ) {
		$add( get_stylesheet_directory(), '', 'theme:' . get_stylesheet() );
		$add( get_template_directory(), '', 'theme:' . get_template() );
	}
	$roots = array_values( $list );
	usort(
		$roots,
		function ( $a, $b ) {
			return strlen( $b[0] ) - strlen( $a[0] );
		}
	);
	$key = $now;
	return $roots;
}

/**
 * The service's settings the bridge reads while sending, from
 * {$base_prefix}mailsvc_settings (values JSON) with one query on the first
 * call of a request and kept for the rest of it (a long-running PHP
 * process reads them again after a minute):
 *
 * - excluded_sources: the sources whose mail is left to WordPress's own
 *   mailer, as keys (the bridge directive excluded_sources, scope
 *   "bridge"); nothing is excluded when it is absent or not a list;
 * - from_email and from_name: the site's own sender (scope "general"),
 *   each '' when not set; an address that is not one is ''. On a network,
 *   a site the network lets keep its own settings (allow_site_overrides
 *   in scope "network", overrides_allowed in "network_site:{id}") uses
 *   the sender it set there, where it set one.
 *
 * When the table cannot be read, nothing is excluded and no sender is set:
 * the mail is queued as usual.
 *
 * @return array The three settings by name.
 */
function mailsvc_bridge_mail_settings() {
	global $wpdb;
	static $settings = null;
	static $read_at  = 0;
	if ( null !== $settings && time() - $read_at < 60 ) {
		return $settings;
	}
	$settings = array(
		'excluded_sources' => array(),
		'from_email'       => '',
		'from_name'        => '',
	);
	$read_at  = time();
	if ( ! isset( $wpdb ) || ! is_object( $wpdb ) ) {
		return $settings;
	}
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_settings';
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$site = 'network_site:' . ( is_multisite() ? (int) get_current_blog_id() : 0 );
	$rows = $wpdb->get_results(
		$wpdb->prepare(
			// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
			"SELECT scope, setting_key, setting_value FROM `{$table}` WHERE (scope = 'bridge' AND setting_key = 'excluded_sources') OR (scope IN ('general', %s) AND setting_key IN ('from_email', 'from_name', 'overrides_allowed')) OR (scope = 'network' AND setting_key = 'allow_site_overrides')",
			$site
		)
	);
	$wpdb->suppress_errors( $suppress );
	$own = array();
	foreach ( (array) $rows as $row ) {
		$value = json_decode( (string) $row->setting_value, true );
		if ( 'bridge' === $row->scope && is_array( $value ) ) {
			foreach ( $value as $slug ) {
				if ( is_string( $slug ) && '' !== $slug ) {
					$settings['excluded_sources'][ $slug ] = true;
				}
			}
		} elseif ( 'general' === $row->scope && is_string( $value ) ) {
			$settings[ $row->setting_key ] = trim( preg_replace( '/[\r\n]+/', '', $value ) );
		} else {
			$own[ $row->scope . '/' . $row->setting_key ] = $value;
		}
	}
	if ( ! empty( $own['network/allow_site_overrides'] ) && ! empty( $own[ $site . '/overrides_allowed' ] ) ) {
		foreach ( array( 'from_email', 'from_name' ) as $key ) {
			if ( isset( $own[ $site . '/' . $key ] ) && is_string( $own[ $site . '/' . $key ] ) && '' !== $own[ $site . '/' . $key ] ) {
				$settings[ $key ] = trim( preg_replace( '/[\r\n]+/', '', $own[ $site . '/' . $key ] ) );
			}
		}
	}
	if ( '' !== $settings['from_email'] && ! is_email( $settings['from_email'] ) ) {
		$settings['from_email'] = '';
	}
	return $settings;
}

/**
 * The sources whose mail is left to WordPress's own mailer (see
 * mailsvc_bridge_mail_settings()).
 *
 * @return array Excluded sources as keys.
 */
function mailsvc_bridge_excluded_sources() {
	$settings = mailsvc_bridge_mail_settings();
	return $settings['excluded_sources'];
}
