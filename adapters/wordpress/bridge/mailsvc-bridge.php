<?php
/**
 * Plugin Name: mailsvc bridge
 * Description: Replaces wp_mail() so that the site's mail is queued for the mailsvc delivery service in the site's own database. Installed by `mailsvc wp install`; removed by `mailsvc uninstall`.
 * Version:     1.0.0
 * License:     GPL-2.0-or-later
 *
 * A must-use plugin: WordPress loads it before pluggable.php, so the
 * wp_mail() defined here is the one the site uses. It follows WordPress's
 * own wp_mail() (wp-includes/pluggable.php) step by step, but instead of
 * sending through PHPMailer it inserts one `queued` row into
 * {$wpdb->prefix}mailsvc_logs, which the service's workers deliver. The
 * row's `message` column is the JSON the service's store reads
 * (adapters/store/log.go, storedMessage); attachments are copied into it
 * as base64 so that they outlive the request's temporary files, and so are
 * the files wp_mail()'s sixth argument embeds (WordPress 6.9's $embeds),
 * as inline attachments with their Content-IDs.
 *
 * One exception: mail from a source the service names in its bridge
 * directive excluded_sources is not queued but sent the way WordPress's
 * own wp_mail() sends it (PHPMailer, phpmailer_init), so the site's
 * previous mail setup keeps handling it. The directive is read from
 * {$wpdb->base_prefix}mailsvc_settings (scope "bridge") once per request;
 * when it is absent or cannot be read, every message is queued.
 *
 * It also runs the service's events as WordPress actions
 * (mail_svc_delivered, wp_mail_failed, the mail_svc_* events): see the host
 * hooks section of this file and docs/hooks.md; and it stops the WordPress
 * core emails switched off by the email controls, counting each one: see
 * the email controls section at the end of this file.
 *
 * It reads nothing but $wpdb and needs no configuration. The table prefix is
 * $wpdb->base_prefix, the $table_prefix of wp-config.php that the service
 * reads too (the same as $wpdb->prefix except on a multisite network).
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

require_once __DIR__ . '/mailsvc-bridge/attention.php';

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
		return 'an unknown plugin';
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
 * Prints the admin notice shown when another plugin defined wp_mail().
 */
function mailsvc_bridge_conflict_notice() {
	if ( ! current_user_can( 'manage_options' ) ) {
		return;
	}
	printf(
		'<div class="notice notice-error"><p>%s</p></div>',
		esc_html(
			sprintf(
				'mailsvc: wp_mail() is already defined by %s, so the mailsvc bridge could not take over and this site\'s mail does not go through mailsvc. Deactivate that plugin to let mailsvc deliver the mail.',
				mailsvc_bridge_wp_mail_owner()
			)
		)
	);
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
	$self  = __FILE__;
	foreach ( debug_backtrace( DEBUG_BACKTRACE_IGNORE_ARGS ) as $frame ) {
		if ( empty( $frame['file'] ) || $frame['file'] === $self ) {
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
 * The sources whose mail is left to WordPress's own mailer: the list the
 * service writes as the bridge directive excluded_sources, read from
 * {$base_prefix}mailsvc_settings (scope "bridge", its value JSON) with one
 * query on the first call of a request and kept for the rest of it (a
 * long-running PHP process reads it again after a minute). When the
 * directive is absent, is not a list, or the table cannot be read,
 * nothing is excluded: the mail is queued as usual.
 *
 * @return array Excluded sources as keys.
 */
function mailsvc_bridge_excluded_sources() {
	global $wpdb;
	static $excluded = null;
	static $read_at  = 0;
	if ( null !== $excluded && time() - $read_at < 60 ) {
		return $excluded;
	}
	$excluded = array();
	$read_at  = time();
	if ( ! isset( $wpdb ) ) {
		return $excluded;
	}
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_settings';
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$value = $wpdb->get_var( "SELECT setting_value FROM `{$table}` WHERE scope = 'bridge' AND setting_key = 'excluded_sources'" );
	$wpdb->suppress_errors( $suppress );
	if ( ! is_string( $value ) ) {
		return $excluded;
	}
	$sources = json_decode( $value, true );
	if ( ! is_array( $sources ) ) {
		return $excluded;
	}
	foreach ( $sources as $slug ) {
		if ( is_string( $slug ) && '' !== $slug ) {
			$excluded[ $slug ] = true;
		}
	}
	return $excluded;
}

/**
 * Splits "Name <user@example.com>" as WordPress's wp_mail() does.
 *
 * @param string $address One address, with or without a display name.
 * @return array|null Array( 'name' => ..., 'email' => ... ), or null when the address is not valid.
 */
function mailsvc_bridge_address( $address ) {
	$name = '';
	if ( preg_match( '/(.*)<(.+)>/', $address, $matches ) && count( $matches ) === 3 ) {
		$name    = $matches[1];
		$address = $matches[2];
	}
	// As PHPMailer's addAnAddress(): trim, drop line breaks.
	$address = trim( $address );
	$name    = trim( preg_replace( '/[\r\n]+/', '', $name ) );
	$name    = trim( $name, "\"' \t" );
	if ( ! is_email( $address ) ) {
		return null;
	}
	$out = array( 'email' => $address );
	if ( '' !== $name ) {
		$out['name'] = $name;
	}
	return $out;
}

/**
 * Turns a list of address strings into addresses, skipping invalid ones
 * (as wp_mail() does when PHPMailer refuses one).
 *
 * @param string[] $list Addresses.
 * @return array[] Addresses as mailsvc_bridge_address() returns them.
 */
function mailsvc_bridge_addresses( $list ) {
	$out = array();
	foreach ( (array) $list as $address ) {
		$a = mailsvc_bridge_address( (string) $address );
		if ( null !== $a ) {
			$out[] = $a;
		}
	}
	return $out;
}

/**
 * Converts text in charset to UTF-8, the encoding of the queue.
 *
 * @param string $text    Text.
 * @param string $charset Its charset.
 * @return string UTF-8 text.
 */
function mailsvc_bridge_utf8( $text, $charset ) {
	$text = (string) $text;
	if ( '' === $charset || in_array( strtolower( $charset ), array( 'utf-8', 'utf8' ), true ) ) {
		return $text;
	}
	if ( function_exists( 'mb_convert_encoding' ) ) {
		$converted = @mb_convert_encoding( $text, 'UTF-8', $charset ); // phpcs:ignore WordPress.PHP.NoSilencedErrors
		if ( false !== $converted ) {
			return $converted;
		}
	}
	if ( function_exists( 'iconv' ) ) {
		$converted = @iconv( $charset, 'UTF-8//IGNORE', $text ); // phpcs:ignore WordPress.PHP.NoSilencedErrors
		if ( false !== $converted ) {
			return $converted;
		}
	}
	return $text;
}

/**
 * Splits a multipart body given with a boundary into its text/plain and
 * text/html parts, decoding quoted-printable and base64.
 *
 * @param string $body     The body as the caller gave it.
 * @param string $boundary The boundary from the Content-Type header.
 * @return array Array( 'text' => string, 'html' => string ).
 */
function mailsvc_bridge_multipart( $body, $boundary ) {
	$out   = array(
		'text' => '',
		'html' => '',
	);
	$body  = str_replace( "\r\n", "\n", $body );
	$parts = explode( '--' . $boundary, $body );
	foreach ( $parts as $part ) {
		$part = ltrim( $part, "\n" );
		if ( '' === trim( $part ) || 0 === strpos( $part, '--' ) ) {
			continue;
		}
		$split = strpos( $part, "\n\n" );
		if ( false === $split ) {
			continue;
		}
		$head    = substr( $part, 0, $split );
		$content = substr( $part, $split + 2 );
		$type    = 'text/plain';
		$charset = '';
		$enc     = '';
		foreach ( explode( "\n", preg_replace( '/\n[ \t]+/', ' ', $head ) ) as $line ) {
			if ( false === strpos( $line, ':' ) ) {
				continue;
			}
			list( $hname, $hvalue ) = explode( ':', $line, 2 );
			switch ( strtolower( trim( $hname ) ) ) {
				case 'content-type':
					$type = strtolower( trim( strtok( $hvalue, ';' ) ) );
					if ( preg_match( '/charset="?([^";\s]+)"?/i', $hvalue, $m ) ) {
						$charset = $m[1];
					}
					break;
				case 'content-transfer-encoding':
					$enc = strtolower( trim( $hvalue ) );
					break;
			}
		}
		$content = preg_replace( '/\n$/', '', $content );
		if ( 'base64' === $enc ) {
			$content = (string) base64_decode( $content );
		} elseif ( 'quoted-printable' === $enc ) {
			$content = quoted_printable_decode( $content );
		}
		$content = mailsvc_bridge_utf8( $content, $charset );
		if ( 'text/plain' === $type && '' === $out['text'] ) {
			$out['text'] = $content;
		} elseif ( 'text/html' === $type && '' === $out['html'] ) {
			$out['html'] = $content;
		}
	}
	return $out;
}

/**
 * Tells whether an attachment path may be opened: a path on this server,
 * not a stream wrapper. Any scheme:// (phar://, ftp://, http://, php://,
 * file://, ...) is refused, as PHPMailer's isPermittedPath() refuses it
 * (with the scheme spelled as PHP reads a wrapper's name: letters, digits,
 * "+", "-" and "."), so that a path that reached wp_mail() from a visitor
 * opens no archive and requests no other host.
 *
 * @param string $path Attachment path.
 * @return bool
 */
function mailsvc_bridge_permitted_path( $path ) {
	return ! preg_match( '#^[a-z\d+.-]+://#i', (string) $path );
}

/**
 * Returns the first attachment path that mailsvc_bridge_permitted_path()
 * refuses, or null when every one may be opened.
 *
 * @param array $attachments Attachment paths.
 * @return string|null
 */
function mailsvc_bridge_refused_attachment( $attachments ) {
	foreach ( $attachments as $attachment ) {
		if ( is_scalar( $attachment ) && ! mailsvc_bridge_permitted_path( $attachment ) ) {
			return (string) $attachment;
		}
	}
	return null;
}

/**
 * Reads one attachment into the form the queue keeps.
 *
 * @param string $path     Path of the file.
 * @param string $filename Name to give it; the file's base name when empty.
 * @return array|null The attachment, or null when the file cannot be read
 *                    or is not a local file.
 */
function mailsvc_bridge_attachment( $path, $filename ) {
	$path = (string) $path;
	if ( '' === trim( $path ) || ! mailsvc_bridge_permitted_path( $path ) || ! @is_file( $path ) || ! @is_readable( $path ) ) { // phpcs:ignore WordPress.PHP.NoSilencedErrors
		return null;
	}
	$data = @file_get_contents( $path ); // phpcs:ignore WordPress.PHP.NoSilencedErrors, WordPress.WP.AlternativeFunctions
	if ( false === $data ) {
		return null;
	}
	if ( '' === $filename ) {
		$filename = wp_basename( $path );
	}
	$type  = '';
	$check = wp_check_filetype( $filename );
	if ( ! empty( $check['type'] ) ) {
		$type = $check['type'];
	} elseif ( function_exists( 'finfo_open' ) ) {
		$finfo = finfo_open( FILEINFO_MIME_TYPE );
		if ( $finfo ) {
			$type = (string) finfo_file( $finfo, $path );
			finfo_close( $finfo );
		}
	}
	if ( '' === $type ) {
		$type = 'application/octet-stream';
	}
	return array(
		'filename'     => $filename,
		'content_type' => $type,
		'data'         => base64_encode( $data ),
	);
}

/**
 * Tells whether this WordPress's own wp_mail() takes embeds (6.9 and
 * later). There the arguments the wp_mail and pre_wp_mail filters get and
 * the $mail_data of wp_mail_succeeded and wp_mail_failed always carry
 * `embeds`, as core's do. Before 6.9 they carry it only when the caller
 * passed a sixth argument or a wp_mail filter set it, so that a
 * five-argument call sees exactly what it saw before.
 *
 * @global string $wp_version
 *
 * @return bool
 */
function mailsvc_bridge_core_embeds() {
	global $wp_version;
	return isset( $wp_version ) && version_compare( (string) $wp_version, '6.9-alpha', '>=' );
}

/**
 * The wp_mail() arguments as WordPress passes them to the wp_mail filter
 * and in $mail_data: `embeds` last, when the call carries them (see
 * mailsvc_bridge_core_embeds()).
 *
 * @param mixed $to          Recipients.
 * @param mixed $subject     Subject.
 * @param mixed $message     Body.
 * @param mixed $headers     Headers.
 * @param mixed $attachments Attachments.
 * @param mixed $embeds      Embeds.
 * @param bool  $with_embeds Whether `embeds` is there.
 * @return array
 */
function mailsvc_bridge_mail_data( $to, $subject, $message, $headers, $attachments, $embeds, $with_embeds ) {
	$data = compact( 'to', 'subject', 'message', 'headers', 'attachments' );
	if ( $with_embeds ) {
		$data['embeds'] = $embeds;
	}
	return $data;
}

/**
 * Runs wp_mail_embed_args for each embed, with WordPress's defaults: the
 * embed's key as its Content-ID, the file's base name, base64, an empty
 * type (the file name's type) and inline (wp-includes/pluggable.php,
 * WordPress 6.9).
 *
 * @param array $embeds Paths to files to embed, keyed by Content-ID or a list.
 * @return array[] Each embed's path, cid, name, encoding, type and disposition.
 */
function mailsvc_bridge_embed_args( $embeds ) {
	$defaults = array(
		'path'        => '',
		'cid'         => '',
		'name'        => '',
		'encoding'    => 'base64',
		'type'        => '',
		'disposition' => 'inline',
	);
	$out      = array();
	foreach ( $embeds as $key => $embed_path ) {
		/** This filter is documented in wp-includes/pluggable.php */
		$args = apply_filters(
			'wp_mail_embed_args',
			array(
				'path'        => $embed_path,
				'cid'         => (string) $key,
				'name'        => is_scalar( $embed_path ) ? basename( (string) $embed_path ) : '',
				'encoding'    => 'base64',
				'type'        => '',
				'disposition' => 'inline',
			)
		);
		$out[] = is_array( $args ) ? $args + $defaults : $defaults;
	}
	return $out;
}

/**
 * Reads one embed (its wp_mail_embed_args) into the form the queue keeps,
 * as PHPMailer's addEmbeddedImage() takes it: an inline part with its
 * Content-ID, or an attachment when the disposition is "attachment". It
 * is left out where PHPMailer leaves it out: a file it cannot read, an
 * encoding it does not know, or a disposition other than "inline" and
 * "attachment" (which PHPMailer never writes). The type, when empty, is
 * PHPMailer's for the path's extension; the name, when empty, the file's
 * base name. The bytes are delivered base64 whatever the encoding.
 *
 * @param array $args The embed's path, cid, name, encoding, type and disposition.
 * @return array|null The attachment, or null when it is left out.
 */
function mailsvc_bridge_embed( $args ) {
	$disposition = is_scalar( $args['disposition'] ) ? (string) $args['disposition'] : '';
	$encoding    = is_scalar( $args['encoding'] ) ? strtolower( (string) $args['encoding'] ) : '';
	if ( ( 'inline' !== $disposition && 'attachment' !== $disposition )
		|| ! in_array( $encoding, array( '7bit', '8bit', 'base64', 'binary', 'quoted-printable' ), true )
		|| ! is_scalar( $args['path'] ) ) {
		return null;
	}
	$path = (string) $args['path'];
	$name = is_scalar( $args['name'] ) ? (string) $args['name'] : '';
	$file = mailsvc_bridge_attachment( $path, $name );
	if ( null === $file ) {
		return null;
	}
	$type = is_scalar( $args['type'] ) ? (string) $args['type'] : '';
	if ( '' === $type ) {
		if ( ! class_exists( 'PHPMailer\\PHPMailer\\PHPMailer', false ) ) {
			require_once ABSPATH . WPINC . '/PHPMailer/PHPMailer.php';
			require_once ABSPATH . WPINC . '/PHPMailer/Exception.php';
		}
		$type = PHPMailer\PHPMailer\PHPMailer::filenameToType( $path );
	}
	$file['content_type'] = $type;
	if ( 'inline' === $disposition ) {
		$file['inline'] = true;
		$cid            = is_scalar( $args['cid'] ) ? (string) $args['cid'] : '';
		if ( '' !== $cid ) {
			$file['content_id'] = $cid;
		}
	}
	return $file;
}

/**
 * Renders addresses for the searchable recipients column.
 *
 * @param array[] $list Addresses.
 * @return string[] Rendered addresses.
 */
function mailsvc_bridge_render_addresses( $list ) {
	$out = array();
	foreach ( $list as $a ) {
		$out[] = isset( $a['name'] ) ? sprintf( '"%s" <%s>', addcslashes( $a['name'], '"\\' ), $a['email'] ) : $a['email'];
	}
	return $out;
}

/**
 * Fires wp_mail_failed as WordPress does and returns false.
 *
 * @param string $error Error message.
 * @param array  $data  The mail data.
 * @return false
 */
function mailsvc_bridge_fail( $error, $data ) {
	/** This action is documented in wp-includes/pluggable.php */
	do_action( 'wp_mail_failed', new WP_Error( 'wp_mail_failed', $error, $data ) );
	return false;
}

/**
 * Parses wp_mail()'s headers exactly as WordPress's wp_mail() does, for
 * both the queue and WordPress's own mailer path.
 *
 * @param string|string[] $headers Headers as wp_mail() takes them.
 * @return array The custom headers (name => value) under 'headers', the
 *               address lists 'cc', 'bcc' and 'reply_to', and, only when
 *               the headers gave them, 'from_name', 'from_email',
 *               'content_type', 'charset' and 'boundary'.
 */
function mailsvc_bridge_parse_headers( $headers ) {
	$out = array(
		'headers'  => array(),
		'cc'       => array(),
		'bcc'      => array(),
		'reply_to' => array(),
	);
	if ( empty( $headers ) ) {
		return $out;
	}
	if ( ! is_array( $headers ) ) {
		$tempheaders = explode( "\n", str_replace( "\r\n", "\n", $headers ) );
	} else {
		$tempheaders = $headers;
	}
	foreach ( (array) $tempheaders as $header ) {
		if ( strpos( $header, ':' ) === false ) {
			if ( false !== stripos( $header, 'boundary=' ) ) {
				$parts           = preg_split( '/boundary=/i', trim( $header ) );
				$out['boundary'] = trim( str_replace( array( "'", '"' ), '', $parts[1] ) );
			}
			continue;
		}
		list( $name, $content ) = explode( ':', trim( $header ), 2 );
		$name    = trim( $name );
		$content = trim( $content );
		switch ( strtolower( $name ) ) {
			case 'from':
				$bracket_pos = strpos( $content, '<' );
				if ( false !== $bracket_pos ) {
					if ( $bracket_pos > 0 ) {
						$from_name        = substr( $content, 0, $bracket_pos );
						$from_name        = str_replace( '"', '', $from_name );
						$out['from_name'] = trim( $from_name );
					}
					$from_email        = substr( $content, $bracket_pos + 1 );
					$from_email        = str_replace( '>', '', $from_email );
					$out['from_email'] = trim( $from_email );
				} elseif ( '' !== trim( $content ) ) {
					$out['from_email'] = trim( $content );
				}
				break;
			case 'content-type':
				if ( strpos( $content, ';' ) !== false ) {
					list( $type, $charset_content ) = explode( ';', $content );
					$out['content_type']            = trim( $type );
					if ( false !== stripos( $charset_content, 'charset=' ) ) {
						$out['charset'] = trim( str_replace( array( 'charset=', '"' ), '', $charset_content ) );
					} elseif ( false !== stripos( $charset_content, 'boundary=' ) ) {
						$out['boundary'] = trim( str_replace( array( 'BOUNDARY=', 'boundary=', '"' ), '', $charset_content ) );
						$out['charset']  = '';
					}
				} elseif ( '' !== trim( $content ) ) {
					$out['content_type'] = trim( $content );
				}
				break;
			case 'cc':
				$out['cc'] = array_merge( $out['cc'], explode( ',', $content ) );
				break;
			case 'bcc':
				$out['bcc'] = array_merge( $out['bcc'], explode( ',', $content ) );
				break;
			case 'reply-to':
				$out['reply_to'] = array_merge( $out['reply_to'], explode( ',', $content ) );
				break;
			case 'x-mailsvc-control':
				// The email controls' mark (see that section): never sent.
				break;
			default:
				$out['headers'][ trim( $name ) ] = trim( $content );
				break;
		}
	}
	return $out;
}

/**
 * The sender as WordPress's wp_mail() sets it, with the site's own sender
 * in place of WordPress's default: the From header's address and name,
 * else the From email and name set for the site (the service's from_email
 * and from_name settings), else "WordPress" <wordpress@{site host without
 * www.}>, passed through the wp_mail_from and wp_mail_from_name filters.
 * A plugin's own sender (a From header or a filter) is kept; a
 * connection's "Force from" replaces it later, in the service.
 *
 * @param array $parsed Headers as mailsvc_bridge_parse_headers() returns them.
 * @return array Array( from email, from name ), as the filters returned them.
 */
function mailsvc_bridge_from( $parsed ) {
	list( $site_email, $site_name ) = mailsvc_bridge_site_sender();
	$from_name                      = isset( $parsed['from_name'] ) ? $parsed['from_name'] : ( '' !== $site_name ? $site_name : 'WordPress' );
	if ( isset( $parsed['from_email'] ) ) {
		$from_email = $parsed['from_email'];
	} elseif ( '' !== $site_email ) {
		$from_email = $site_email;
	} else {
		$sitename   = wp_parse_url( network_home_url(), PHP_URL_HOST );
		$from_email = 'wordpress@';
		if ( null !== $sitename ) {
			if ( 'www.' === substr( $sitename, 0, 4 ) ) {
				$sitename = substr( $sitename, 4 );
			}
			$from_email .= $sitename;
		}
	}
	/** This filter is documented in wp-includes/pluggable.php */
	$from_email = apply_filters( 'wp_mail_from', $from_email );
	/** This filter is documented in wp-includes/pluggable.php */
	$from_name = apply_filters( 'wp_mail_from_name', $from_name );
	return array( $from_email, $from_name );
}

/**
 * The From email and name set for the site (the service's from_email and
 * from_name settings, in the "general" scope of
 * {$base_prefix}mailsvc_settings, JSON strings), each '' when not set or
 * not readable.
 *
 * @return string[] Array( from email, from name ).
 */
function mailsvc_bridge_site_sender() {
	global $wpdb;
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_settings';
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$rows = $wpdb->get_results( "SELECT setting_key, setting_value FROM `{$table}` WHERE scope = 'general' AND setting_key IN ('from_email', 'from_name')" );
	$wpdb->suppress_errors( $suppress );
	$out = array(
		'from_email' => '',
		'from_name'  => '',
	);
	foreach ( (array) $rows as $row ) {
		$value = json_decode( (string) $row->setting_value );
		if ( is_string( $value ) ) {
			$out[ $row->setting_key ] = trim( preg_replace( '/[\r\n]+/', '', $value ) );
		}
	}
	if ( '' !== $out['from_email'] && ! is_email( $out['from_email'] ) ) {
		$out['from_email'] = '';
	}
	return array( $out['from_email'], $out['from_name'] );
}

/**
 * Sends a message the way WordPress's own wp_mail() does, for mail that
 * is not taken over (a source the service excludes): PHPMailer
 * through the global $phpmailer, PHP's mail() unless a phpmailer_init hook
 * (an SMTP plugin's configuration) says otherwise, and wp_mail_succeeded or
 * wp_mail_failed as WordPress fires them. The wp_mail and pre_wp_mail
 * filters have already run.
 *
 * @global PHPMailer\PHPMailer\PHPMailer $phpmailer
 *
 * @param string[] $to          Recipients.
 * @param string   $subject     Subject.
 * @param string   $message     Body.
 * @param array    $parsed      Headers as mailsvc_bridge_parse_headers() returns them.
 * @param string[] $attachments Attachments; a string key names the file.
 * @param string[] $embeds      Files to embed, keyed by Content-ID or a list.
 * @param bool     $with_embeds Whether $mail_data carries `embeds`.
 * @return bool Whether PHPMailer sent the message.
 */
function mailsvc_bridge_phpmailer( $to, $subject, $message, $parsed, $attachments, $embeds = array(), $with_embeds = false ) {
	global $phpmailer;

	// (Re)create it, if it's gone missing.
	if ( ! ( $phpmailer instanceof PHPMailer\PHPMailer\PHPMailer ) ) {
		require_once ABSPATH . WPINC . '/PHPMailer/PHPMailer.php';
		require_once ABSPATH . WPINC . '/PHPMailer/SMTP.php';
		require_once ABSPATH . WPINC . '/PHPMailer/Exception.php';
		if ( file_exists( ABSPATH . WPINC . '/class-wp-phpmailer.php' ) ) {
			// WordPress 6.8 and later: translated PHPMailer messages.
			require_once ABSPATH . WPINC . '/class-wp-phpmailer.php';
			$phpmailer = new WP_PHPMailer( true );
		} else {
			$phpmailer = new PHPMailer\PHPMailer\PHPMailer( true );
		}
		$phpmailer::$validator = static function ( $email ) {
			return (bool) is_email( $email );
		};
	}

	$headers  = $parsed['headers'];
	$cc       = $parsed['cc'];
	$bcc      = $parsed['bcc'];
	$reply_to = $parsed['reply_to'];

	// Empty out the values that may be set.
	$phpmailer->clearAllRecipients();
	$phpmailer->clearAttachments();
	$phpmailer->clearCustomHeaders();
	$phpmailer->clearReplyTos();
	$phpmailer->Body    = '';
	$phpmailer->AltBody = '';
	// A previous message may have downgraded it to 7bit (WordPress 6.5+).
	$phpmailer->Encoding = PHPMailer\PHPMailer\PHPMailer::ENCODING_8BIT;

	list( $from_email, $from_name ) = mailsvc_bridge_from( $parsed );
	try {
		$phpmailer->setFrom( $from_email, $from_name, false );
	} catch ( PHPMailer\PHPMailer\Exception $e ) {
		$mail_error_data                             = mailsvc_bridge_mail_data( $to, $subject, $message, $headers, $attachments, $embeds, $with_embeds );
		$mail_error_data['phpmailer_exception_code'] = $e->getCode();
		return mailsvc_bridge_fail( $e->getMessage(), $mail_error_data );
	}

	$phpmailer->Subject = $subject;
	$phpmailer->Body    = $message;

	foreach ( compact( 'to', 'cc', 'bcc', 'reply_to' ) as $address_header => $addresses ) {
		if ( empty( $addresses ) ) {
			continue;
		}
		foreach ( (array) $addresses as $address ) {
			try {
				$recipient_name = '';
				if ( preg_match( '/(.*)<(.+)>/', $address, $matches ) && count( $matches ) === 3 ) {
					$recipient_name = $matches[1];
					$address        = $matches[2];
				}
				switch ( $address_header ) {
					case 'to':
						$phpmailer->addAddress( $address, $recipient_name );
						break;
					case 'cc':
						$phpmailer->addCc( $address, $recipient_name );
						break;
					case 'bcc':
						$phpmailer->addBcc( $address, $recipient_name );
						break;
					case 'reply_to':
						$phpmailer->addReplyTo( $address, $recipient_name );
						break;
				}
			} catch ( PHPMailer\PHPMailer\Exception $e ) {
				continue;
			}
		}
	}

	// PHP's mail(), unless phpmailer_init configures otherwise.
	$phpmailer->isMail();

	$content_type = isset( $parsed['content_type'] ) ? $parsed['content_type'] : 'text/plain';
	/** This filter is documented in wp-includes/pluggable.php */
	$content_type           = apply_filters( 'wp_mail_content_type', $content_type );
	$phpmailer->ContentType = $content_type;
	if ( 'text/html' === $content_type ) {
		$phpmailer->isHTML( true );
	}
	$charset = isset( $parsed['charset'] ) ? $parsed['charset'] : get_bloginfo( 'charset' );
	/** This filter is documented in wp-includes/pluggable.php */
	$phpmailer->CharSet = apply_filters( 'wp_mail_charset', $charset );

	if ( ! empty( $headers ) ) {
		foreach ( (array) $headers as $name => $content ) {
			// Only add custom headers not added automatically by PHPMailer.
			if ( ! in_array( $name, array( 'MIME-Version', 'X-Mailer' ), true ) ) {
				try {
					$phpmailer->addCustomHeader( sprintf( '%1$s: %2$s', $name, $content ) );
				} catch ( PHPMailer\PHPMailer\Exception $e ) {
					continue;
				}
			}
		}
		if ( false !== stripos( $content_type, 'multipart' ) && ! empty( $parsed['boundary'] ) ) {
			$phpmailer->addCustomHeader( sprintf( 'Content-Type: %s; boundary="%s"', $content_type, $parsed['boundary'] ) );
		}
	}

	if ( ! empty( $attachments ) ) {
		foreach ( $attachments as $filename => $attachment ) {
			$filename = is_string( $filename ) ? $filename : '';
			try {
				$phpmailer->addAttachment( $attachment, $filename );
			} catch ( PHPMailer\PHPMailer\Exception $e ) {
				continue;
			}
		}
	}

	if ( ! empty( $embeds ) ) {
		foreach ( mailsvc_bridge_embed_args( $embeds ) as $embed_args ) {
			try {
				$phpmailer->addEmbeddedImage(
					$embed_args['path'],
					$embed_args['cid'],
					$embed_args['name'],
					$embed_args['encoding'],
					$embed_args['type'],
					$embed_args['disposition']
				);
			} catch ( PHPMailer\PHPMailer\Exception $e ) {
				continue;
			}
		}
	}

	/** This action is documented in wp-includes/pluggable.php */
	do_action_ref_array( 'phpmailer_init', array( &$phpmailer ) );

	$mail_data = mailsvc_bridge_mail_data( $to, $subject, $message, $headers, $attachments, $embeds, $with_embeds );
	try {
		$send = $phpmailer->send();
		/** This action is documented in wp-includes/pluggable.php */
		do_action( 'wp_mail_succeeded', $mail_data );
		return $send;
	} catch ( PHPMailer\PHPMailer\Exception $e ) {
		$mail_data['phpmailer_exception_code'] = $e->getCode();
		return mailsvc_bridge_fail( $e->getMessage(), $mail_data );
	}
}

/**
 * The body of wp_mail(): WordPress's steps, ending in one INSERT into the
 * queue instead of an SMTP conversation, unless the calling plugin is
 * excluded by the service (its bridge directive excluded_sources): then
 * the message goes through WordPress's own mailer path
 * (mailsvc_bridge_phpmailer()).
 *
 * @param string|string[] $to          Recipients.
 * @param string          $subject     Subject.
 * @param string          $message     Body.
 * @param string|string[] $headers     Headers.
 * @param string|string[] $attachments Attachments.
 * @param string|string[] $embeds      Files to embed (WordPress 6.9), keyed
 *                                     by Content-ID or a list.
 * @param bool            $embeds_given Whether the caller passed $embeds:
 *                                     before WordPress 6.9 the filters'
 *                                     arguments and $mail_data carry
 *                                     `embeds` only then (or when a
 *                                     wp_mail filter sets it).
 * @return bool Whether the message was queued (or, for an excluded plugin, sent).
 */
function mailsvc_bridge_queue( $to, $subject, $message, $headers = '', $attachments = array(), $embeds = array(), $embeds_given = false ) {
	global $wpdb;

	$with_embeds = $embeds_given || mailsvc_bridge_core_embeds();
	/** This filter is documented in wp-includes/pluggable.php */
	$atts = apply_filters( 'wp_mail', mailsvc_bridge_mail_data( $to, $subject, $message, $headers, $attachments, $embeds, $with_embeds ) );

	/** This filter is documented in wp-includes/pluggable.php */
	$pre_wp_mail = apply_filters( 'pre_wp_mail', null, $atts );
	if ( null !== $pre_wp_mail ) {
		return $pre_wp_mail;
	}

	if ( isset( $atts['to'] ) ) {
		$to = $atts['to'];
	}
	if ( ! is_array( $to ) ) {
		$to = explode( ',', $to );
	}
	if ( isset( $atts['subject'] ) ) {
		$subject = $atts['subject'];
	}
	if ( isset( $atts['message'] ) ) {
		$message = $atts['message'];
	}
	if ( isset( $atts['headers'] ) ) {
		$headers = $atts['headers'];
	}
	if ( isset( $atts['attachments'] ) ) {
		$attachments = $atts['attachments'];
	}
	if ( ! is_array( $attachments ) ) {
		$attachments = explode( "\n", str_replace( "\r\n", "\n", $attachments ) );
	}
	if ( isset( $atts['embeds'] ) ) {
		$embeds      = $atts['embeds'];
		$with_embeds = true;
	}
	if ( ! is_array( $embeds ) ) {
		$embeds = explode( "\n", str_replace( "\r\n", "\n", $embeds ) );
	}

	$source   = mailsvc_bridge_source();
	$excluded = mailsvc_bridge_excluded_sources();
	$parsed   = mailsvc_bridge_parse_headers( $headers );

	// Only files on this server are attached. A stream wrapper fails the
	// whole message, before any file is opened, whichever way it would go:
	// it is never a file a plugin meant to attach. (A missing local file is
	// left out, as WordPress leaves it out.)
	$refused = mailsvc_bridge_refused_attachment( $attachments );
	if ( null !== $refused ) {
		$headers                                     = $parsed['headers'];
		$mail_error_data                             = mailsvc_bridge_mail_data( $to, $subject, $message, $headers, $attachments, $embeds, $with_embeds );
		$mail_error_data['phpmailer_exception_code'] = 1; // PHPMailer::STOP_CONTINUE, as for a file it cannot access.
		return mailsvc_bridge_fail( 'Could not access file: ' . $refused . ' (only files on this server can be attached; stream wrappers such as phar:// or ftp:// are refused)', $mail_error_data );
	}

	if ( isset( $excluded[ $source ] ) ) {
		return mailsvc_bridge_phpmailer( $to, $subject, $message, $parsed, $attachments, $embeds, $with_embeds );
	}

	$headers   = $parsed['headers'];
	$cc        = $parsed['cc'];
	$bcc       = $parsed['bcc'];
	$reply_to  = $parsed['reply_to'];
	$mail_data = mailsvc_bridge_mail_data( $to, $subject, $message, $headers, $attachments, $embeds, $with_embeds );

	list( $from_email, $from_name ) = mailsvc_bridge_from( $parsed );
	$from_email                     = trim( (string) $from_email );
	if ( ! is_email( $from_email ) ) {
		// PHPMailer's setFrom() throws here; wp_mail() reports it.
		$mail_error_data                             = $mail_data;
		$mail_error_data['phpmailer_exception_code'] = 2;
		return mailsvc_bridge_fail( 'Invalid address:  (From): ' . $from_email, $mail_error_data );
	}
	$from = array( 'email' => $from_email );
	$from_name = trim( preg_replace( '/[\r\n]+/', '', (string) $from_name ) );

	$to_list       = mailsvc_bridge_addresses( $to );
	$cc_list       = mailsvc_bridge_addresses( $cc );
	$bcc_list      = mailsvc_bridge_addresses( $bcc );
	$reply_to_list = mailsvc_bridge_addresses( $reply_to );
	if ( empty( $to_list ) && empty( $cc_list ) && empty( $bcc_list ) ) {
		$mail_data['phpmailer_exception_code'] = 2;
		return mailsvc_bridge_fail( 'You must provide at least one recipient email address.', $mail_data );
	}

	// Content type and charset.
	$content_type = isset( $parsed['content_type'] ) ? $parsed['content_type'] : 'text/plain';
	/** This filter is documented in wp-includes/pluggable.php */
	$content_type = apply_filters( 'wp_mail_content_type', $content_type );
	$charset      = isset( $parsed['charset'] ) ? $parsed['charset'] : get_bloginfo( 'charset' );
	$boundary     = isset( $parsed['boundary'] ) ? $parsed['boundary'] : '';
	/** This filter is documented in wp-includes/pluggable.php */
	$charset = (string) apply_filters( 'wp_mail_charset', $charset );

	$subject = mailsvc_bridge_utf8( $subject, $charset );
	$from_name = mailsvc_bridge_utf8( $from_name, $charset );
	if ( '' !== $from_name ) {
		$from['name'] = $from_name;
	}
	$text = '';
	$html = '';
	if ( 'text/html' === $content_type ) {
		$html = mailsvc_bridge_utf8( $message, $charset );
	} elseif ( false !== stripos( (string) $content_type, 'multipart' ) && ! empty( $boundary ) ) {
		$parts = mailsvc_bridge_multipart( (string) $message, $boundary );
		$text  = $parts['text'];
		$html  = $parts['html'];
	} else {
		$text = mailsvc_bridge_utf8( $message, $charset );
	}

	// Custom headers, except those PHPMailer adds itself.
	$custom = array();
	foreach ( (array) $headers as $name => $content ) {
		if ( ! in_array( $name, array( 'MIME-Version', 'X-Mailer' ), true ) ) {
			$custom[] = array(
				'name'  => (string) $name,
				'value' => mailsvc_bridge_utf8( $content, $charset ),
			);
		}
	}

	// Attachments: string keys name the file (as WordPress 6.2+ does).
	$files = array();
	foreach ( $attachments as $filename => $attachment ) {
		$file = mailsvc_bridge_attachment( $attachment, is_string( $filename ) ? $filename : '' );
		if ( null !== $file ) {
			$files[] = $file;
		}
	}

	// Embeds (WordPress 6.9): wp_mail_embed_args for each, then the file
	// read as PHPMailer's addEmbeddedImage() reads it, kept beside the
	// attachments as an inline part with its Content-ID; as PHPMailer
	// writes it, a second inline part with a Content-ID already used is
	// left out. A stream wrapper fails the message as for attachments.
	if ( ! empty( $embeds ) ) {
		$embed_args = mailsvc_bridge_embed_args( $embeds );
		$refused    = mailsvc_bridge_refused_attachment( wp_list_pluck( $embed_args, 'path' ) );
		if ( null !== $refused ) {
			$mail_error_data                             = $mail_data;
			$mail_error_data['phpmailer_exception_code'] = 1;
			return mailsvc_bridge_fail( 'Could not access file: ' . $refused . ' (only files on this server can be embedded; stream wrappers such as phar:// or ftp:// are refused)', $mail_error_data );
		}
		$cids = array();
		foreach ( $embed_args as $args ) {
			$file = mailsvc_bridge_embed( $args );
			if ( null === $file ) {
				continue;
			}
			if ( ! empty( $file['inline'] ) ) {
				$cid = isset( $file['content_id'] ) ? $file['content_id'] : '';
				if ( isset( $cids[ $cid ] ) ) {
					continue;
				}
				$cids[ $cid ] = true;
			}
			$files[] = $file;
		}
	}

	$stored = array( 'from' => $from );
	foreach ( array(
		'to'       => $to_list,
		'cc'       => $cc_list,
		'bcc'      => $bcc_list,
		'reply_to' => $reply_to_list,
		'headers'  => $custom,
		'attachments' => $files,
	) as $key => $list ) {
		if ( ! empty( $list ) ) {
			$stored[ $key ] = $list;
		}
	}
	// Host hooks this message's outcome fires (see the host hooks section).
	$host_hooks = mailsvc_bridge_message_hooks( $stored, $mail_data );
	$json = wp_json_encode( $stored, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
	if ( false === $json ) {
		return mailsvc_bridge_fail( 'The message could not be encoded for the mailsvc queue.', $mail_data );
	}

	$now = DateTime::createFromFormat( 'U.u', sprintf( '%.6F', microtime( true ) ), new DateTimeZone( 'UTC' ) );
	$now = $now ? $now->format( 'Y-m-d H:i:s.u' ) : gmdate( 'Y-m-d H:i:s' );
	$row = array(
		'status'              => 'queued',
		'source'              => $source,
		'recipients'          => implode( ', ', mailsvc_bridge_render_addresses( array_merge( $to_list, $cc_list, $bcc_list ) ) ),
		'subject'             => (string) $subject,
		'text_body'           => (string) $text,
		'html_body'           => (string) $html,
		'message'             => $json,
		'attempts'            => 0,
		'phase_attempts'      => 0,
		'used_fallback'       => 0,
		'simulated'           => 0,
		'provider_message_id' => '',
		'last_error'          => '',
		'next_attempt_at'     => $now,
		'created_at'          => $now,
		'updated_at'          => $now,
	);
	$formats = array( '%s', '%s', '%s', '%s', '%s', '%s', '%s', '%d', '%d', '%d', '%d', '%s', '%s', '%s', '%s', '%s' );
	if ( 0 !== $host_hooks ) {
		$row['host_hooks'] = $host_hooks;
		$formats[]         = '%d';
	}
	// On a multisite network every site queues into the one network queue,
	// each log carrying the id of the site that sent it (the column's
	// default, 1, is the main site and every single site).
	$site_id = is_multisite() ? (int) get_current_blog_id() : 1;
	if ( 1 !== $site_id ) {
		$row['site_id'] = $site_id;
		$formats[]      = '%d';
	}

	// The service's tables carry the site's $table_prefix: on a multisite
	// network that is the base prefix, shared by every site.
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_logs';
	$suppress = $wpdb->suppress_errors( true );
	$inserted = $wpdb->insert( $table, $row, $formats );
	if ( false === $inserted && 0 !== $host_hooks && 1 === $site_id ) {
		// A queue table from before the host hooks (the service has not
		// migrated yet): queue the message without them.
		unset( $row['host_hooks'] );
		array_pop( $formats );
		$inserted = $wpdb->insert( $table, $row, $formats );
	}
	$wpdb->suppress_errors( $suppress );
	if ( false === $inserted || 1 !== (int) $inserted ) {
		$error = '' !== (string) $wpdb->last_error ? $wpdb->last_error : 'The message could not be queued: the mailsvc queue table ' . $table . ' is not usable.';
		return mailsvc_bridge_fail( 'mailsvc: ' . $error, $mail_data );
	}
	mailsvc_bridge_index_recipients(
		( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_log_recipients',
		(int) $wpdb->insert_id,
		array(
			'to'  => $to_list,
			'cc'  => $cc_list,
			'bcc' => $bcc_list,
			'frm' => array( $from ),
			'rto' => $reply_to_list,
		)
	);

	/** This action is documented in wp-includes/pluggable.php */
	do_action( 'wp_mail_succeeded', $mail_data );
	return true;
}

/**
 * Writes the queued log's rows in the addresses table (one multi-row
 * INSERT IGNORE: each distinct address lower-cased, with its kind: the
 * recipients, which the log search matches, and the sender and Reply-To,
 * which personal data requests look up). The message is already queued:
 * a failure here (an older schema without the table, a lost connection)
 * is silent and costs nothing, as the service indexes any log without
 * its rows when it claims it.
 *
 * @param string  $table  The addresses table.
 * @param int     $log_id The log's id.
 * @param array[] $lists  Address lists by kind (to, cc, bcc, frm, rto).
 */
function mailsvc_bridge_index_recipients( $table, $log_id, $lists ) {
	global $wpdb;
	if ( $log_id < 1 ) {
		return;
	}
	$values = array();
	$args   = array();
	$seen   = array();
	foreach ( $lists as $kind => $list ) {
		foreach ( $list as $a ) {
			$email = strtolower( trim( (string) $a['email'] ) );
			if ( '' === $email || strlen( $email ) > 254 || isset( $seen[ $kind . ' ' . $email ] ) ) {
				continue;
			}
			$seen[ $kind . ' ' . $email ] = true;
			$values[] = '(%d, %s, %s)';
			array_push( $args, $log_id, $kind, $email );
		}
	}
	if ( empty( $values ) ) {
		return;
	}
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$wpdb->query( $wpdb->prepare( "INSERT IGNORE INTO `{$table}` (log_id, kind, email) VALUES " . implode( ', ', $values ), $args ) );
	$wpdb->suppress_errors( $suppress );
}

/*
 * Personal data export and erase (Tools → Export / Erase Personal Data).
 *
 * The exporter and the eraser read and change the service's tables through
 * $wpdb, as wp_mail() above writes them, rather than calling the service's
 * REST API: the bridge has no credentials of its own for the API, WordPress
 * runs these callbacks in admin AJAX requests, WP-CLI and cron alike, and a
 * request must be answered even while the service is stopped. They do what
 * the service's GET /privacy/export and POST /privacy/erase do (app/privacy.go,
 * adapters/store/privacy.go), in the same shape and in pages of 100 logs.
 */

add_filter( 'wp_privacy_personal_data_exporters', 'mailsvc_bridge_register_exporter' );
add_filter( 'wp_privacy_personal_data_erasers', 'mailsvc_bridge_register_eraser' );

/** Logs per page of an export, and per call of an erase. */
const MAILSVC_BRIDGE_PRIVACY_PAGE = 100;

/**
 * Registers the email log's exporter.
 *
 * @param array $exporters Exporters by key.
 * @return array
 */
function mailsvc_bridge_register_exporter( $exporters ) {
	$exporters['mailsvc-email-log'] = array(
		'exporter_friendly_name' => __( 'Email log' ),
		'callback'               => 'mailsvc_bridge_privacy_export',
	);
	return $exporters;
}

/**
 * Registers the email log's eraser.
 *
 * @param array $erasers Erasers by key.
 * @return array
 */
function mailsvc_bridge_register_eraser( $erasers ) {
	$erasers['mailsvc-email-log'] = array(
		'eraser_friendly_name' => __( 'Email log' ),
		'callback'             => 'mailsvc_bridge_privacy_erase',
	);
	return $erasers;
}

/**
 * Returns the name of one of the service's tables.
 *
 * @param string $name The table's name without the prefix.
 * @return string
 */
function mailsvc_bridge_table( $name ) {
	global $wpdb;
	return ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_' . $name;
}

/**
 * Reports whether one of the service's tables exists: an add-on module's
 * tables (the Pro suppression list and provider events) exist only when the service is built
 * with the module.
 *
 * @param string $name The table's name after mailsvc_.
 * @return bool
 */
function mailsvc_bridge_table_exists( $name ) {
	global $wpdb;
	$table = mailsvc_bridge_table( $name );
	return $table === $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $table ) ) );
}

/**
 * Returns the query (and its arguments) of the ids (column log_id) of the
 * logs naming an address as sender, recipient or Reply-To: the addresses
 * table, and the logs not indexed yet matched in their message column.
 *
 * @param string $email The address, lower-cased.
 * @return array Array( SQL, arguments ).
 */
function mailsvc_bridge_naming_ids( $email ) {
	global $wpdb;
	$r    = mailsvc_bridge_table( 'log_recipients' );
	$l    = mailsvc_bridge_table( 'logs' );
	$json = wp_json_encode( $email, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
	return array(
		"SELECT log_id FROM `{$r}` WHERE email = %s UNION SELECT id FROM `{$l}` WHERE recipients_indexed = 0 AND message LIKE %s",
		array( $email, '%"email":' . $wpdb->esc_like( $json ) . '%' ),
	);
}

/**
 * The email log's personal data exporter: one page of the logs naming the
 * address (oldest first, bodies as stored, other people's addresses left
 * out), the provider events naming it and, on page 1, its suppression
 * list entry (the events and the list when the service has the Pro
 * add-on's tables).
 *
 * @param string $email_address The address.
 * @param int    $page          The page, from 1.
 * @return array Array( 'data' => items, 'done' => bool ).
 */
function mailsvc_bridge_privacy_export( $email_address, $page = 1 ) {
	global $wpdb;
	$email = strtolower( trim( (string) $email_address ) );
	$page  = max( 1, (int) $page );
	$items = array();
	if ( '' === $email ) {
		return array( 'data' => $items, 'done' => true );
	}
	list( $naming, $args ) = mailsvc_bridge_naming_ids( $email );
	$args[] = MAILSVC_BRIDGE_PRIVACY_PAGE + 1;
	$args[] = ( $page - 1 ) * MAILSVC_BRIDGE_PRIVACY_PAGE;
	// phpcs:ignore WordPress.DB.PreparedSQL.NotPrepared -- table names are the site's prefix and constants.
	$ids  = array_map( 'intval', (array) $wpdb->get_col( $wpdb->prepare( "SELECT n.log_id FROM ({$naming}) n ORDER BY n.log_id LIMIT %d OFFSET %d", $args ) ) );
	$done = count( $ids ) <= MAILSVC_BRIDGE_PRIVACY_PAGE;
	$ids  = array_slice( $ids, 0, MAILSVC_BRIDGE_PRIVACY_PAGE );
	if ( ! empty( $ids ) ) {
		$in   = implode( ',', $ids );
		$logs = $wpdb->get_results( 'SELECT id, status, subject, text_body, html_body, message, created_at FROM `' . mailsvc_bridge_table( 'logs' ) . "` WHERE id IN ({$in}) ORDER BY id", ARRAY_A ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- integers.
		// The provider events are the Pro add-on's: a service built without
		// it has no events table.
		$events = mailsvc_bridge_table_exists( 'log_events' ) ? $wpdb->get_results( $wpdb->prepare( 'SELECT id, log_id, provider, event, occurred_at, detail FROM `' . mailsvc_bridge_table( 'log_events' ) . "` WHERE log_id IN ({$in}) AND detail LIKE %s ORDER BY id", '%' . $wpdb->esc_like( $email ) . '%' ), ARRAY_A ) : array(); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- integers.
		$by_log = array();
		foreach ( (array) $events as $ev ) {
			$by_log[ (int) $ev['log_id'] ][] = $ev;
		}
		foreach ( (array) $logs as $log ) {
			$items[] = mailsvc_bridge_log_item( $log, $email );
			foreach ( isset( $by_log[ (int) $log['id'] ] ) ? $by_log[ (int) $log['id'] ] : array() as $ev ) {
				$items[] = array(
					'group_id'    => 'mailsvc-email-events',
					'group_label' => __( 'Email delivery events' ),
					'item_id'     => 'mailsvc-log-event-' . $ev['id'],
					'data'        => array(
						array( 'name' => 'Email log', 'value' => 'mailsvc-log-' . $ev['log_id'] ),
						array( 'name' => 'Date', 'value' => mailsvc_bridge_rfc3339( $ev['occurred_at'] ) ),
						array( 'name' => 'Provider', 'value' => $ev['provider'] ),
						array( 'name' => 'Event', 'value' => $ev['event'] ),
						array( 'name' => 'Detail', 'value' => $ev['detail'] ),
					),
				);
			}
		}
	}
	if ( 1 === $page && mailsvc_bridge_table_exists( 'suppressions' ) ) {
		$s = $wpdb->get_row( $wpdb->prepare( 'SELECT id, email, reason, source_event, created_at FROM `' . mailsvc_bridge_table( 'suppressions' ) . '` WHERE email = %s', $email ), ARRAY_A ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name.
		if ( $s ) {
			$items[] = array(
				'group_id'    => 'mailsvc-suppressions',
				'group_label' => __( 'Email suppression list' ),
				'item_id'     => 'mailsvc-suppression-' . $s['id'],
				'data'        => array(
					array( 'name' => 'Address', 'value' => $s['email'] ),
					array( 'name' => 'Reason', 'value' => $s['reason'] ),
					array( 'name' => 'Source', 'value' => $s['source_event'] ),
					array( 'name' => 'Added', 'value' => mailsvc_bridge_rfc3339( $s['created_at'] ) ),
				),
			);
		}
	}
	return array( 'data' => $items, 'done' => $done );
}

/**
 * Formats a stored UTC time as RFC 3339.
 *
 * @param string $time 'Y-m-d H:i:s[.u]' in UTC.
 * @return string
 */
function mailsvc_bridge_rfc3339( $time ) {
	$t = strtotime( substr( (string) $time, 0, 19 ) . ' UTC' );
	return false === $t ? (string) $time : gmdate( 'Y-m-d\TH:i:s\Z', $t );
}

/**
 * Returns the exported item of one log: in which fields the address
 * appears and how many other recipients there were (their addresses are
 * not exported), with the bodies and attachment names as stored.
 *
 * @param array  $log   The log's row.
 * @param string $email The address, lower-cased.
 * @return array
 */
function mailsvc_bridge_log_item( $log, $email ) {
	$m      = json_decode( (string) $log['message'], true );
	$m      = is_array( $m ) ? $m : array();
	$roles  = array();
	$others = 0;
	$fields = array(
		'From'     => isset( $m['from'] ) ? array( $m['from'] ) : array(),
		'To'       => isset( $m['to'] ) ? $m['to'] : array(),
		'Cc'       => isset( $m['cc'] ) ? $m['cc'] : array(),
		'Bcc'      => isset( $m['bcc'] ) ? $m['bcc'] : array(),
		'Reply-To' => isset( $m['reply_to'] ) ? $m['reply_to'] : array(),
	);
	foreach ( $fields as $name => $list ) {
		$named = false;
		foreach ( (array) $list as $a ) {
			if ( isset( $a['email'] ) && strtolower( trim( $a['email'] ) ) === $email ) {
				$named = true;
			} elseif ( in_array( $name, array( 'To', 'Cc', 'Bcc' ), true ) ) {
				++$others;
			}
		}
		if ( $named ) {
			$roles[] = $name;
		}
	}
	$data = array(
		array( 'name' => 'Date', 'value' => mailsvc_bridge_rfc3339( $log['created_at'] ) ),
		array( 'name' => 'Subject', 'value' => $log['subject'] ),
		array( 'name' => 'Status', 'value' => $log['status'] ),
		array( 'name' => 'Your address as', 'value' => implode( ', ', $roles ) ),
		array( 'name' => 'Other recipients', 'value' => (string) $others ),
	);
	if ( '' !== (string) $log['text_body'] ) {
		$data[] = array( 'name' => 'Text body', 'value' => $log['text_body'] );
	}
	if ( '' !== (string) $log['html_body'] ) {
		$data[] = array( 'name' => 'HTML body', 'value' => $log['html_body'] );
	}
	if ( ! empty( $m['attachments'] ) ) {
		$data[] = array( 'name' => 'Attachments', 'value' => implode( ', ', wp_list_pluck( $m['attachments'], 'filename' ) ) );
	}
	return array(
		'group_id'    => 'mailsvc-email-log',
		'group_label' => __( 'Email log' ),
		'item_id'     => 'mailsvc-log-' . $log['id'],
		'data'        => $data,
	);
}

/**
 * The email log's personal data eraser: erases the address from the next
 * 100 delivered or failed logs naming it (bodies and attachments removed,
 * the address replaced by deleted@site.invalid in the addresses, subject,
 * headers, last error and attempts; the provider events naming it
 * removed; statuses and delivery counts kept) and removes its suppression
 * list entry (the events and the list when the service has the Pro
 * add-on's tables). Logs still queued or sending are kept until sent.
 *
 * @param string $email_address The address.
 * @param int    $page          The page (each call erases the next batch).
 * @return array WordPress's eraser answer.
 */
function mailsvc_bridge_privacy_erase( $email_address, $page = 1 ) {
	global $wpdb;
	$email       = strtolower( trim( (string) $email_address ) );
	$replacement = function_exists( 'wp_privacy_anonymize_data' ) ? wp_privacy_anonymize_data( 'email' ) : 'deleted@site.invalid';
	$out         = array(
		'items_removed'  => false,
		'items_retained' => false,
		'messages'       => array(),
		'done'           => true,
	);
	if ( '' === $email || strtolower( $replacement ) === $email ) {
		return $out;
	}
	$logs_table            = mailsvc_bridge_table( 'logs' );
	list( $naming, $args ) = mailsvc_bridge_naming_ids( $email );

	$wpdb->query( 'START TRANSACTION' );
	// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.PreparedSQL.NotPrepared -- table names are the site's prefix and constants, ids integers.
	$ids     = array_map( 'intval', (array) $wpdb->get_col( $wpdb->prepare( "SELECT l.id FROM `{$logs_table}` l JOIN ({$naming}) n ON n.log_id = l.id WHERE l.status IN ('delivered', 'failed') ORDER BY l.id LIMIT %d FOR UPDATE", array_merge( $args, array( MAILSVC_BRIDGE_PRIVACY_PAGE ) ) ) ) );
	$ok      = '' === $wpdb->last_error;
	$pending = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM `{$logs_table}` l JOIN ({$naming}) n ON n.log_id = l.id WHERE l.status IN ('queued', 'sending', 'captured')", $args ) );
	$ok      = $ok && '' === $wpdb->last_error;
	if ( $ok && ! empty( $ids ) ) {
		$in   = implode( ',', $ids );
		$logs = (array) $wpdb->get_results( "SELECT id, subject, message, last_error FROM `{$logs_table}` WHERE id IN ({$in})", ARRAY_A );
		foreach ( $logs as $log ) {
			$ok = $ok && mailsvc_bridge_erase_log( $log, $email, $replacement );
		}
		$attempts = (array) $wpdb->get_results( 'SELECT id, response, error FROM `' . mailsvc_bridge_table( 'log_attempts' ) . "` WHERE log_id IN ({$in})", ARRAY_A );
		foreach ( $attempts as $a ) {
			$response = str_ireplace( $email, $replacement, (string) $a['response'] );
			$error    = str_ireplace( $email, $replacement, (string) $a['error'] );
			if ( $response !== $a['response'] || $error !== $a['error'] ) {
				$ok = $ok && false !== $wpdb->update( mailsvc_bridge_table( 'log_attempts' ), array( 'response' => $response, 'error' => $error ), array( 'id' => (int) $a['id'] ) );
			}
		}
		if ( mailsvc_bridge_table_exists( 'log_events' ) ) { // The Pro add-on's provider events.
			$ok = $ok && false !== $wpdb->query( $wpdb->prepare( 'DELETE FROM `' . mailsvc_bridge_table( 'log_events' ) . "` WHERE log_id IN ({$in}) AND detail LIKE %s", '%' . $wpdb->esc_like( $email ) . '%' ) );
		}
		$ok = $ok && false !== $wpdb->query( 'DELETE FROM `' . mailsvc_bridge_table( 'log_attachments' ) . "` WHERE log_id IN ({$in})" );
		$ok = $ok && false !== $wpdb->query( $wpdb->prepare( 'DELETE FROM `' . mailsvc_bridge_table( 'log_recipients' ) . "` WHERE log_id IN ({$in}) AND email = %s", $email ) );
	}
	$suppressed = false;
	if ( $ok ) {
		$suppressed = mailsvc_bridge_table_exists( 'suppressions' ) ? $wpdb->query( $wpdb->prepare( 'DELETE FROM `' . mailsvc_bridge_table( 'suppressions' ) . '` WHERE email = %s', $email ) ) : 0;
	}
	// phpcs:enable
	if ( ! $ok || false === $suppressed ) {
		$wpdb->query( 'ROLLBACK' );
		$out['messages'][] = __( 'The email log could not be erased: its tables are not usable.' );
		$out['items_retained'] = true;
		return $out;
	}
	$wpdb->query( 'COMMIT' );
	if ( ! empty( $ids ) ) {
		// The address leaves the log search's address index once no log
		// names it as a recipient (a message still queued keeps it). A
		// service older than that index has no such tables: nothing to do.
		$suppress = $wpdb->suppress_errors( true );
		$r        = mailsvc_bridge_table( 'log_recipients' );
		$a        = mailsvc_bridge_table( 'search_addresses' );
		// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table names are the site's prefix and constants.
		$wpdb->query( $wpdb->prepare( "DELETE FROM `{$a}` WHERE email = %s AND NOT EXISTS (SELECT 1 FROM `{$r}` r WHERE r.email = %s AND r.kind IN ('to', 'cc', 'bcc'))", $email, $email ) );
		$wpdb->query( $wpdb->prepare( 'DELETE FROM `' . mailsvc_bridge_table( 'search_grams' ) . "` WHERE email = %s AND NOT EXISTS (SELECT 1 FROM `{$a}` a WHERE a.email = %s)", $email, $email ) );
		// phpcs:enable
		$wpdb->suppress_errors( $suppress );
	}
	$out['items_removed'] = ! empty( $ids ) || $suppressed > 0;
	$out['done']          = count( $ids ) < MAILSVC_BRIDGE_PRIVACY_PAGE;
	if ( $out['done'] && $pending > 0 ) {
		$out['items_retained'] = true;
		$out['messages'][]     = sprintf( '%d email log(s) naming this address are still waiting to be sent and were kept; erase again once they are sent.', $pending );
	}
	return $out;
}

/**
 * Rewrites one log's row with an address erased, and its rows in the
 * addresses and subjects tables.
 *
 * @param array  $log         The log's id, subject, message and last error.
 * @param string $email       The erased address, lower-cased.
 * @param string $replacement What replaces it.
 * @return bool Whether every write succeeded.
 */
function mailsvc_bridge_erase_log( $log, $email, $replacement ) {
	global $wpdb;
	$m = json_decode( (string) $log['message'], true );
	$m = is_array( $m ) ? $m : array();
	$erase = function ( $list ) use ( $email, $replacement ) {
		$out = array();
		foreach ( (array) $list as $a ) {
			if ( isset( $a['email'] ) && strtolower( trim( $a['email'] ) ) === $email ) {
				$out[] = array( 'email' => $replacement );
			} else {
				if ( isset( $a['name'] ) ) {
					$a['name'] = str_ireplace( $email, $replacement, $a['name'] );
				}
				$out[] = $a;
			}
		}
		return $out;
	};
	$lists = array();
	foreach ( array( 'from', 'to', 'cc', 'bcc', 'reply_to' ) as $key ) {
		if ( 'from' === $key ) {
			$lists[ $key ] = isset( $m['from'] ) ? $erase( array( $m['from'] ) ) : array();
			if ( ! empty( $lists[ $key ] ) ) {
				$m['from'] = $lists[ $key ][0];
			}
		} elseif ( ! empty( $m[ $key ] ) ) {
			$m[ $key ]     = $erase( $m[ $key ] );
			$lists[ $key ] = $m[ $key ];
		} else {
			$lists[ $key ] = array();
		}
	}
	if ( ! empty( $m['headers'] ) ) {
		foreach ( $m['headers'] as $i => $h ) {
			$m['headers'][ $i ]['value'] = str_ireplace( $email, $replacement, (string) $h['value'] );
		}
	}
	unset( $m['attachments'] );
	$subject = str_ireplace( $email, $replacement, (string) $log['subject'] );
	$ok      = false !== $wpdb->update(
		mailsvc_bridge_table( 'logs' ),
		array(
			'recipients' => implode( ', ', mailsvc_bridge_render_addresses( array_merge( $lists['to'], $lists['cc'], $lists['bcc'] ) ) ),
			'subject'    => $subject,
			'text_body'  => '',
			'html_body'  => '',
			'message'    => wp_json_encode( $m, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ),
			'last_error' => str_ireplace( $email, $replacement, (string) $log['last_error'] ),
		),
		array( 'id' => (int) $log['id'] )
	);
	if ( $subject !== $log['subject'] ) {
		$ok = $ok && false !== $wpdb->update( mailsvc_bridge_table( 'log_subjects' ), array( 'subject' => $subject ), array( 'log_id' => (int) $log['id'] ) );
	}
	mailsvc_bridge_index_recipients(
		mailsvc_bridge_table( 'log_recipients' ),
		(int) $log['id'],
		array(
			'to'  => $lists['to'],
			'cc'  => $lists['cc'],
			'bcc' => $lists['bcc'],
			'frm' => $lists['from'],
			'rto' => $lists['reply_to'],
		)
	);
	return $ok;
}

add_action( 'wp_loaded', 'mailsvc_bridge_sync_oauth_redirects' );

/**
 * Publishes the site's mail_svc_{provider}_oauth_redirect_uri filters to the
 * service, which runs outside PHP and cannot call them: each filter is
 * applied to this site's own REST callback URL, and a result that differs
 * from it is an override, stored in the mailsvc_oauth_redirect_uris option
 * (provider => URI) that the service reads when it starts an authorization.
 * The option is written only when it changes, so a page load costs three
 * apply_filters() calls and no query (the option is autoloaded).
 */
function mailsvc_bridge_sync_oauth_redirects() {
	$overrides = array();
	foreach ( array( 'google', 'microsoft', 'zoho' ) as $provider ) {
		$hook = 'mail_svc_' . $provider . '_oauth_redirect_uri';
		if ( ! has_filter( $hook ) ) {
			continue;
		}
		$local = rest_url( 'mailsvc/v1/oauth/' . $provider . '/callback' );
		$uri   = apply_filters( $hook, $local, $provider );
		if ( is_string( $uri ) && '' !== $uri && $uri !== $local ) {
			$overrides[ $provider ] = $uri;
		}
	}
	if ( get_option( 'mailsvc_oauth_redirect_uris', array() ) !== $overrides ) {
		update_option( 'mailsvc_oauth_redirect_uris', $overrides, true );
	}
}

add_action( 'wp_loaded', 'mailsvc_bridge_sync_log_redact_patterns' );

/**
 * Publishes the site's mail_svc_log_redact_patterns filter to the service,
 * which runs outside PHP and cannot call it: the filter is applied to an
 * empty list, and the patterns it returns (PCRE patterns with their
 * delimiters, e.g. '/order-[0-9]+/i'; a capture group redacts only what it
 * captures) are stored in the mailsvc_log_redact_patterns option, which
 * the service reads before it redacts a stored email body (log_body
 * redacted mode). The option is written only when it changes, so a page
 * load costs one apply_filters() call and no query (the option is
 * autoloaded).
 */
function mailsvc_bridge_sync_log_redact_patterns() {
	$patterns = array();
	if ( has_filter( 'mail_svc_log_redact_patterns' ) ) {
		$filtered = apply_filters( 'mail_svc_log_redact_patterns', array() );
		foreach ( is_array( $filtered ) ? $filtered : array() as $pattern ) {
			if ( is_string( $pattern ) && '' !== $pattern ) {
				$patterns[] = $pattern;
			}
		}
	}
	if ( get_option( 'mailsvc_log_redact_patterns', array() ) !== $patterns ) {
		update_option( 'mailsvc_log_redact_patterns', $patterns, true );
	}
}

/*
 * The Mail menu: the service's admin screens inside wp-admin.
 *
 * A "Mail" page for the users holding the REST capability (manage_options,
 * or MAILSVC_REST_CAPABILITY, through the mail_svc_rest_capability filter as
 * the service applies it) frames the screens the service serves at /admin/.
 * They use the logged-in session: the cookie the browser already has and a
 * wp_rest nonce handed over in the frame's URL fragment (never sent to a
 * server), so there is no second sign-in. MAILSVC_SCREENS_URL is where
 * the browser reaches the screens (default: the bridge's own route
 * mailsvc-bridge/v1/screens/, which forwards to the service's /admin/; see
 * the forwarding section); MAILSVC_SCREENS_API_URL is the REST base they
 * call (default: the site's own rest_url('mailsvc/v1')).
 */

add_action( 'admin_menu', 'mailsvc_bridge_admin_menu' );
add_action( 'network_admin_menu', 'mailsvc_bridge_network_admin_menu' );

/**
 * Returns the capability the Mail page and the service's routes require.
 *
 * @return string
 */
function mailsvc_bridge_admin_capability() {
	$cap      = mailsvc_bridge_default_capability();
	$filtered = apply_filters( 'mail_svc_rest_capability', $cap, '/wp-json/mailsvc/v1' );
	return is_string( $filtered ) && '' !== $filtered ? $filtered : $cap;
}

/**
 * Adds the Mail menu page.
 */
function mailsvc_bridge_admin_menu() {
	add_menu_page( 'Mail', 'Mail', mailsvc_bridge_admin_capability(), 'mailsvc', 'mailsvc_bridge_admin_page', 'dashicons-email-alt', 81 );
}

/**
 * Adds Network Admin's Mail page on a multisite network: the screens for
 * the whole network (the main site's REST URL, where a super admin sees
 * every site), with a filter by site.
 */
function mailsvc_bridge_network_admin_menu() {
	add_menu_page( 'Mail', 'Mail', 'manage_network_options', 'mailsvc-network', 'mailsvc_bridge_network_admin_page', 'dashicons-email-alt', 81 );
}

/**
 * Prints Network Admin's Mail page: a site filter above the screens.
 */
function mailsvc_bridge_network_admin_page() {
	if ( ! current_user_can( 'manage_network_options' ) ) {
		wp_die( esc_html__( 'Sorry, you are not allowed to access this page.' ), 403 );
	}
	// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only filter.
	$site = isset( $_GET['site'] ) ? absint( $_GET['site'] ) : 0;
	echo '<form method="get" style="margin:8px 0 8px 0;"><input type="hidden" name="page" value="mailsvc-network" />';
	echo '<label for="mailsvc-site">' . esc_html__( 'Site' ) . '</label> <select id="mailsvc-site" name="site" onchange="this.form.submit()">';
	echo '<option value="0">' . esc_html__( 'All sites' ) . '</option>';
	foreach ( get_sites( array( 'number' => 1000 ) ) as $blog ) {
		$label = $blog->domain . $blog->path;
		echo '<option value="' . (int) $blog->blog_id . '"' . selected( $site, (int) $blog->blog_id, false ) . '>' . esc_html( $label ) . '</option>';
	}
	echo '</select></form>';
	mailsvc_bridge_admin_page( get_rest_url( get_main_site_id(), 'mailsvc/v1' ), $site );
}

/**
 * Prints the Mail page: the screens in a frame that fills the content area.
 *
 * @param string $network_api On Network Admin: the main site's REST base.
 * @param int    $site        On Network Admin: the site filter (0: all).
 */
function mailsvc_bridge_admin_page( $network_api = '', $site = 0 ) {
	$cap = '' !== $network_api ? 'manage_network_options' : mailsvc_bridge_admin_capability();
	if ( ! current_user_can( $cap ) ) {
		wp_die( esc_html__( 'Sorry, you are not allowed to access this page.' ), 403 );
	}
	$screens = defined( 'MAILSVC_SCREENS_URL' ) && MAILSVC_SCREENS_URL ? MAILSVC_SCREENS_URL : mailsvc_bridge_screens_url();
	if ( $screens === mailsvc_bridge_screens_url() && ! mailsvc_bridge_service_running() ) {
		return; // The notice says why and what to do; a frame would only show the 503.
	}
	$api     = defined( 'MAILSVC_SCREENS_API_URL' ) && MAILSVC_SCREENS_API_URL ? MAILSVC_SCREENS_API_URL : rest_url( 'mailsvc/v1' );
	if ( '' !== $network_api ) {
		$api = $network_api;
	}
	$args    = array(
		'embed' => 'wp',
		'nonce' => wp_create_nonce( 'wp_rest' ),
		'api'   => untrailingslashit( $api ),
	);
	if ( $site > 0 ) {
		$args['site'] = (int) $site;
	}
	// The OAuth callback returns here (MAILSVC_ADMIN_URL) with its flags.
	// phpcs:disable WordPress.Security.NonceVerification.Recommended -- read-only flags shown to the user.
	foreach ( array( 'oauth', 'oauth_error', 'provider', 'connection_id' ) as $flag ) {
		if ( isset( $_GET[ $flag ] ) && is_string( $_GET[ $flag ] ) ) {
			$args[ $flag ] = sanitize_key( wp_unslash( $_GET[ $flag ] ) );
		}
	}
	// phpcs:enable
	$src = esc_url( $screens ) . '#' . esc_attr( http_build_query( $args, '', '&', PHP_QUERY_RFC3986 ) );
	echo '<div class="wrap mailsvc-wrap" style="margin:0 0 0 -20px;">';
	echo '<h1 class="screen-reader-text">' . esc_html__( 'Mail' ) . '</h1>';
	echo '<iframe id="mailsvc-screens" title="' . esc_attr__( 'Mail' ) . '" src="' . $src . '"'; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- escaped above.
	echo ' style="display:block;width:100%;height:calc(100vh - 32px);border:0;background:transparent;"></iframe>';
	echo '</div>';
	echo '<style>#wpbody-content{padding-bottom:0}#wpfooter{display:none}</style>';
}

/*
 * The service's filters: mail_svc_rest_capability, mail_svc_sensitive_keys,
 * mail_svc_log_retention_days and mail_svc_api_debug_response_enabled.
 *
 * The service runs outside PHP and cannot call them, so each page load
 * applies every one of them that has a callback to the default the
 * service would use, and publishes the results that differ from it in the
 * autoloaded mailsvc_filters option, which the service reads again every
 * 30 seconds. The option is written only when a result changes; a page
 * load without these filters costs four has_filter() calls (and one small
 * query for the stored retention setting when a retention filter is
 * registered). The default a
 * filter receives is what the constants of wp-config.php give (a constant
 * sets the default, the filter has the last word, as in WordPress).
 */

add_action( 'wp_loaded', 'mailsvc_bridge_sync_filters' );

/**
 * Evaluates the service's filters and publishes their results.
 */
function mailsvc_bridge_sync_filters() {
	$published = array();

	if ( has_filter( 'mail_svc_rest_capability' ) ) {
		$default = mailsvc_bridge_default_capability();
		$cap     = apply_filters( 'mail_svc_rest_capability', $default, '/wp-json/mailsvc/v1' );
		if ( is_string( $cap ) && '' !== trim( $cap ) && $cap !== $default ) {
			$published['rest_capability'] = trim( $cap );
		}
	}

	if ( has_filter( 'mail_svc_sensitive_keys' ) ) {
		$default = array();
		if ( defined( 'MAILSVC_SENSITIVE_KEYS' ) && is_string( MAILSVC_SENSITIVE_KEYS ) ) {
			$default = array_values( array_filter( array_map( 'trim', explode( ',', MAILSVC_SENSITIVE_KEYS ) ), 'strlen' ) );
		}
		$keys = apply_filters( 'mail_svc_sensitive_keys', $default );
		$add  = array();
		foreach ( is_array( $keys ) ? $keys : array() as $key ) {
			if ( is_string( $key ) && '' !== trim( $key ) && ! in_array( trim( $key ), $default, true ) ) {
				$add[] = trim( $key );
			}
		}
		if ( ! empty( $add ) ) {
			$published['sensitive_keys'] = array_values( array_unique( $add ) );
		}
	}

	if ( has_filter( 'mail_svc_log_retention_days' ) ) {
		$default = mailsvc_bridge_log_retention_setting();
		$days    = apply_filters( 'mail_svc_log_retention_days', $default );
		if ( is_numeric( $days ) && (int) $days >= 0 && (int) $days !== $default ) {
			$published['log_retention_days'] = (int) $days;
		}
	}

	if ( has_filter( 'mail_svc_api_debug_response_enabled' ) ) {
		$default = false;
		if ( defined( 'MAIL_SVC_DEBUG_ATTACH_API_DEBUG' ) ) {
			$value   = constant( 'MAIL_SVC_DEBUG_ATTACH_API_DEBUG' );
			$default = is_bool( $value ) ? $value : in_array( strtolower( trim( (string) $value ) ), array( 'true', '1', 'yes', 'on' ), true );
		}
		$enabled = (bool) apply_filters( 'mail_svc_api_debug_response_enabled', $default );
		if ( $enabled !== $default ) {
			$published['api_debug_response_enabled'] = $enabled;
		}
	}

	// WordPress's own application password decisions, for the callers
	// that reach the service without the bridge (docs/security.md).
	// wp_is_application_passwords_available() also asks for HTTPS, which
	// the service checks itself: the filter is given true.
	if ( has_filter( 'wp_is_application_passwords_available' ) && ! apply_filters( 'wp_is_application_passwords_available', true ) ) {
		$published['app_passwords_unavailable'] = true;
	}
	if ( has_filter( 'wp_is_application_passwords_available_for_user' ) && empty( $published['app_passwords_unavailable'] ) ) {
		$off = mailsvc_bridge_app_passwords_unavailable_for();
		if ( ! empty( $off ) ) {
			$published['app_passwords_unavailable_for'] = $off;
		}
	}
	if ( has_action( 'wp_authenticate_application_password_errors' ) ) {
		$published['app_password_errors'] = true;
	}

	// The staging guard captures mail on a staging, development or local
	// site (docs/staging.md): wp_get_environment_type() reads the
	// WP_ENVIRONMENT_TYPE environment variable, which the service cannot
	// see, before the constant it can.
	if ( function_exists( 'wp_get_environment_type' ) ) {
		$environment = wp_get_environment_type();
		if ( 'production' !== $environment ) {
			$published['environment_type'] = $environment;
		}
	}

	// Written once even when empty: an autoloaded option that exists costs
	// no query on the next page loads, a missing one costs one each time.
	if ( get_option( 'mailsvc_filters', null ) !== $published ) {
		update_option( 'mailsvc_filters', $published, true );
	}
}

/**
 * The users who have application passwords and for whom the site's
 * wp_is_application_passwords_available_for_user filter says no.
 *
 * @return int[] User ids.
 */
function mailsvc_bridge_app_passwords_unavailable_for() {
	$users = get_users(
		array(
			'blog_id'  => 0,
			'meta_key' => '_application_passwords', // phpcs:ignore WordPress.DB.SlowDBQuery.slow_db_query_meta_key -- only the users who have one.
			'fields'   => 'all',
			'number'   => 1000,
		)
	);
	$off = array();
	foreach ( $users as $user ) {
		if ( ! apply_filters( 'wp_is_application_passwords_available_for_user', true, $user ) ) {
			$off[] = (int) $user->ID;
		}
	}
	sort( $off );
	return $off;
}

/**
 * The capability the service requires before any filter: wp-config.php's
 * MAILSVC_REST_CAPABILITY, else manage_options.
 *
 * @return string
 */
function mailsvc_bridge_default_capability() {
	return defined( 'MAILSVC_REST_CAPABILITY' ) && is_string( MAILSVC_REST_CAPABILITY ) && '' !== MAILSVC_REST_CAPABILITY
		? MAILSVC_REST_CAPABILITY : 'manage_options';
}

/**
 * The log_retention_days setting as the service stores it (the "general"
 * scope of {$base_prefix}mailsvc_settings, a JSON number), or the
 * service's default of 90 when it is not stored or cannot be read.
 *
 * @return int
 */
function mailsvc_bridge_log_retention_setting() {
	global $wpdb;
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_settings';
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$value = $wpdb->get_var( "SELECT setting_value FROM `{$table}` WHERE scope = 'general' AND setting_key = 'log_retention_days'" );
	$wpdb->suppress_errors( $suppress );
	$days = null === $value ? null : json_decode( (string) $value );
	return is_int( $days ) && $days >= 0 ? $days : 90;
}

add_action( 'admin_page_access_denied', 'mailsvc_bridge_admin_page_denied' );

/**
 * Refuses the Mail page, to a user without the capability, with the words
 * the service's screens use ("Access denied") rather than WordPress's
 * generic refusal.
 */
function mailsvc_bridge_admin_page_denied() {
	// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- only compared.
	if ( ! isset( $_GET['page'] ) || 'mailsvc' !== $_GET['page'] ) {
		return;
	}
	wp_die(
		'<h1>' . esc_html__( 'Access denied' ) . '</h1><p>' . esc_html__( 'Sorry, you are not allowed to manage mail on this site.' ) . '</p>',
		esc_html__( 'Access denied' ),
		array( 'response' => 403 )
	);
}

/*
 * ===== The REST API and the screens through WordPress =====
 *
 * The bridge registers the service's namespace, mailsvc/v1, in WordPress's
 * own REST API and forwards every request under it to the service over
 * loopback (MAILSVC_SERVICE_URL, a constant of wp-config.php or the
 * environment; default http://127.0.0.1:8025). So /wp-json/mailsvc/v1/...
 * and /?rest_route=/mailsvc/v1/... work wherever WordPress does (Apache,
 * nginx, LiteSpeed, PHP's built-in server), with plain or pretty
 * permalinks, without any web-server change. The screens come the same
 * way: mailsvc-bridge/v1/screens/... forwards to the service's /admin/.
 *
 * Authentication stays with the service. The forwarded request carries
 * the caller's own credentials (Authorization, Cookie, X-WP-Nonce, and the
 * _wpnonce of the query) and nothing WordPress concluded from them: the
 * service checks them again, exactly as WordPress does, from the shared
 * tables. That is why the routes' permission_callback lets every request
 * through, and why an authentication error WordPress raised for these
 * routes (a stale nonce, a wrong application password) is set aside: the
 * service gives the spec's answer to the same credentials. The forwarder
 * itself does nothing with WordPress's current user except deciding
 * whether an unavailable service's 503 may say how many messages wait.
 *
 * X-Forwarded-Proto says whether WordPress saw HTTPS (is_ssl()); the
 * service believes it only from the addresses in MAILSVC_TRUSTED_PROXIES,
 * as from any proxy, so list 127.0.0.1 there for application passwords
 * on an HTTPS site.
 *
 * The answer is relayed as it comes: status, headers (X-WP-Total,
 * X-WP-TotalPages, X-WP-Nonce, Content-Type, Content-Disposition, ...) and
 * the body, which is copied from the service's socket to the client as it
 * arrives (an export of any size never sits in PHP's memory). The request
 * is HTTP/1.0 on a plain socket, so it needs neither cURL nor chunked
 * decoding: the body ends when the service closes the connection.
 */

/** Where the service listens when MAILSVC_SERVICE_URL is not set. */
const MAILSVC_BRIDGE_SERVICE_URL = 'http://127.0.0.1:8025';
/** Seconds to wait for a connection to the service. */
const MAILSVC_BRIDGE_CONNECT_TIMEOUT = 3;
/** Seconds a forwarded request may wait on the service (a connection test can be slow). */
const MAILSVC_BRIDGE_READ_TIMEOUT = 120;
/** Response headers that belong to one connection and are not relayed. */
const MAILSVC_BRIDGE_HOP_HEADERS = array( 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'server', 'te', 'trailer', 'upgrade', 'proxy-authenticate' );

add_action( 'rest_api_init', 'mailsvc_bridge_register_forward_routes' );
add_filter( 'rest_authentication_errors', 'mailsvc_bridge_forward_auth_errors', 1000 );
add_filter( 'rest_request_before_callbacks', 'mailsvc_bridge_forward_param_errors', 10, 2 );
add_filter( 'rest_endpoints', 'mailsvc_bridge_forward_namespace_index' );
add_filter( 'rest_pre_echo_response', 'mailsvc_bridge_forward_echo', 10, 3 );
add_filter( 'rest_send_nocache_headers', 'mailsvc_bridge_screens_cacheable', 20 );

/**
 * The service's base URL: MAILSVC_SERVICE_URL (wp-config.php, then the
 * environment), else MAILSVC_BRIDGE_SERVICE_URL.
 *
 * @return string URL without a trailing slash.
 */
function mailsvc_bridge_service_url() {
	$url = defined( 'MAILSVC_SERVICE_URL' ) && is_string( MAILSVC_SERVICE_URL ) ? MAILSVC_SERVICE_URL : '';
	if ( '' === $url ) {
		$env = getenv( 'MAILSVC_SERVICE_URL' );
		$url = is_string( $env ) && '' !== $env ? $env : MAILSVC_BRIDGE_SERVICE_URL;
	}
	return rtrim( $url, '/' );
}

/**
 * Registers the forwarding routes: every method of mailsvc/v1/..., and GET
 * mailsvc-bridge/v1/screens/... for the screens' files.
 */
function mailsvc_bridge_register_forward_routes() {
	register_rest_route(
		'mailsvc/v1',
		'/(?P<path>.*)',
		array(
			'methods'             => WP_REST_Server::ALLMETHODS,
			'callback'            => 'mailsvc_bridge_forward_api',
			'permission_callback' => '__return_true', // The service authenticates every request itself.
		)
	);
	register_rest_route(
		'mailsvc-bridge/v1',
		'/screens(?:/(?P<path>.*))?',
		array(
			'methods'             => 'GET',
			'callback'            => 'mailsvc_bridge_forward_screens',
			'permission_callback' => '__return_true', // Static files; the data they show come from the API.
		)
	);
}

/**
 * Whether the REST request being served is one the bridge forwards.
 *
 * @return bool
 */
function mailsvc_bridge_forwarded_route() {
	$route = isset( $GLOBALS['wp']->query_vars['rest_route'] ) ? (string) $GLOBALS['wp']->query_vars['rest_route'] : '';
	return 1 === preg_match( '#^/(mailsvc/v1|mailsvc-bridge/v1/screens)(/|$)#i', $route );
}

/**
 * Sets aside WordPress's authentication error for a forwarded route (the
 * service answers the same credentials itself), remembering it so that
 * the 503 of an unavailable service tells such a caller nothing.
 *
 * @param mixed $result Null, true or WP_Error.
 * @return mixed
 */
function mailsvc_bridge_forward_auth_errors( $result ) {
	if ( is_wp_error( $result ) && mailsvc_bridge_forwarded_route() ) {
		$GLOBALS['mailsvc_bridge_wp_auth_error'] = $result;
		return null;
	}
	return $result;
}

/**
 * Whether WordPress itself lets the caller of a forwarded request manage
 * mail: a cookie with a valid nonce, or an application password, of a
 * user with the REST capability.
 *
 * @return bool
 */
function mailsvc_bridge_caller_may_manage() {
	$cap = mailsvc_bridge_admin_capability();
	if ( ! empty( $GLOBALS['mailsvc_bridge_wp_auth_error'] ) ) {
		return false;
	}
	return is_user_logged_in() && current_user_can( $cap );
}

/**
 * Lets a forwarded request through WordPress's parameter checks (a body
 * that is not valid JSON): the service answers it with its own 400.
 *
 * @param mixed $response Null or the WP_Error of the checks.
 * @param array $handler  The matched route's handler.
 * @return mixed
 */
function mailsvc_bridge_forward_param_errors( $response, $handler ) {
	$ours = array( 'mailsvc_bridge_forward_api', 'mailsvc_bridge_forward_screens' );
	if ( is_wp_error( $response ) && isset( $handler['callback'] ) && in_array( $handler['callback'], $ours, true ) ) {
		return null;
	}
	return $response;
}

/**
 * Forwards the namespace's own index (GET /mailsvc/v1) too, which
 * WordPress would otherwise answer with its list of the bridge's routes.
 *
 * @param array $endpoints The REST server's routes.
 * @return array
 */
function mailsvc_bridge_forward_namespace_index( $endpoints ) {
	if ( isset( $endpoints['/mailsvc/v1'] ) ) {
		$endpoints['/mailsvc/v1'] = array(
			array(
				'methods'             => 'GET',
				'callback'            => 'mailsvc_bridge_forward_api',
				'permission_callback' => '__return_true',
				'args'                => array(),
				'accept_json'         => false,
				'accept_raw'          => false,
				'show_in_index'       => true,
			),
		);
	}
	return $endpoints;
}

/**
 * Percent-encodes each segment of a decoded path. A path with a "." or
 * ".." segment has no encoding: it could only leave the forwarded prefix.
 *
 * @param string $path The path after the namespace.
 * @return string|null
 */
function mailsvc_bridge_encode_path( $path ) {
	$segments = explode( '/', $path );
	if ( array_intersect( $segments, array( '.', '..' ) ) ) {
		return null;
	}
	return implode( '/', array_map( 'rawurlencode', $segments ) );
}

/**
 * The answer to a path the bridge does not forward.
 *
 * @return WP_Error
 */
function mailsvc_bridge_no_route() {
	return new WP_Error( 'rest_no_route', 'No route was found matching the URL and request method.', array( 'status' => 404 ) );
}

/**
 * The query string to forward: the request's own, without rest_route.
 *
 * @param WP_REST_Request $request The request.
 * @return string
 */
function mailsvc_bridge_forward_query( $request ) {
	// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- compared only; the service checks everything.
	if ( $request->get_query_params() !== $_GET ) {
		// An internal request (rest_do_request): its own parameters.
		$params = $request->get_query_params();
		unset( $params['rest_route'] );
		return http_build_query( $params, '', '&', PHP_QUERY_RFC3986 );
	}
	$raw  = isset( $_SERVER['QUERY_STRING'] ) ? (string) $_SERVER['QUERY_STRING'] : '';
	$kept = array();
	foreach ( explode( '&', $raw ) as $pair ) {
		$name = explode( '=', $pair, 2 )[0];
		if ( '' !== $pair && 'rest_route' !== urldecode( $name ) ) {
			$kept[] = $pair;
		}
	}
	return implode( '&', $kept );
}

/**
 * The route callback of mailsvc/v1/...: forwards the request to the
 * service's /wp-json/mailsvc/v1/...
 *
 * @param WP_REST_Request $request The request.
 * @return WP_REST_Response|WP_Error
 */
function mailsvc_bridge_forward_api( $request ) {
	$params = $request->get_url_params(); // Not get_param(): a query parameter "path" must not win.
	$path   = isset( $params['path'] ) ? (string) $params['path'] : '';
	$encoded = mailsvc_bridge_encode_path( $path );
	if ( null === $encoded ) {
		return mailsvc_bridge_no_route();
	}
	// On a multisite network the service finds the site from the Host
	// header and the path, as WordPress does: the path starts with the
	// site's own (/site2/wp-json/... on a subdirectory network).
	$target = mailsvc_bridge_site_path() . '/wp-json/mailsvc/v1' . ( '' === $encoded ? '' : '/' . $encoded );
	$query  = mailsvc_bridge_forward_query( $request );
	$fields = array(
		'X-Forwarded-Proto' => is_ssl() ? 'https' : 'http',
		'X-Forwarded-For'   => mailsvc_bridge_forwarded_for( $request ),
	);
	$auth = (string) $request->get_header( 'authorization' );
	if ( '' === $auth && isset( $_SERVER['PHP_AUTH_USER'] ) ) {
		// mod_php hands Basic credentials over decoded only.
		$pw   = isset( $_SERVER['PHP_AUTH_PW'] ) ? (string) $_SERVER['PHP_AUTH_PW'] : '';
		$auth = 'Basic ' . base64_encode( wp_unslash( (string) $_SERVER['PHP_AUTH_USER'] ) . ':' . wp_unslash( $pw ) ); // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode -- HTTP Basic.
	}
	$fields['Authorization'] = $auth;
	if ( 0 === stripos( $auth, 'basic ' ) ) {
		// WordPress checked the application password itself, with every
		// filter a site uses to restrict them: what it refused is refused
		// here, and what it accepted goes with its signed verdict.
		if ( ! empty( $GLOBALS['mailsvc_bridge_wp_auth_error'] ) ) {
			return mailsvc_bridge_wp_auth_refusal( $GLOBALS['mailsvc_bridge_wp_auth_error'] );
		}
		$fields['X-Mailsvc-Wp-Verdict'] = mailsvc_bridge_verdict( $auth );
	}
	foreach ( array( 'Cookie', 'X-WP-Nonce', 'Content-Type', 'Accept', 'Accept-Language', 'User-Agent' ) as $name ) {
		$fields[ $name ] = (string) $request->get_header( str_replace( '-', '_', strtolower( $name ) ) );
	}
	return mailsvc_bridge_forward( $request->get_method(), $target, $query, $fields, $request->get_body() );
}

/**
 * WordPress's refusal of a forwarded request's credentials: its message
 * and status (401 unless it says otherwise), with the service's code for
 * refused credentials, rest_not_logged_in, which clients of the API know.
 *
 * @param WP_Error $error The authentication error.
 * @return WP_Error
 */
function mailsvc_bridge_wp_auth_refusal( $error ) {
	$data   = $error->get_error_data();
	$status = is_array( $data ) && ! empty( $data['status'] ) ? (int) $data['status'] : 401;
	return new WP_Error( 'rest_not_logged_in', $error->get_error_message(), array( 'status' => $status ) );
}

/**
 * The verdict key: derived from wp_salt( 'auth' ), which the service
 * computes from the same wp-config.php.
 *
 * @return string Hex key.
 */
function mailsvc_bridge_verdict_key() {
	return hash_hmac( 'sha256', 'mailsvc-wp-verdict', wp_salt( 'auth' ) );
}

/**
 * The signed statement that WordPress authenticated the current user with
 * an application password, for the request whose Authorization header is
 * $auth: "<user id>:<uuid>:<time>:<signature>" ('' when WordPress did not
 * authenticate one: the service then decides as for a direct caller).
 *
 * @param string $auth The forwarded Authorization header.
 * @return string
 */
function mailsvc_bridge_verdict( $auth ) {
	$uuid = function_exists( 'rest_get_authenticated_app_password' ) ? rest_get_authenticated_app_password() : null;
	$user = get_current_user_id();
	if ( ! is_string( $uuid ) || '' === $uuid || $user < 1 ) {
		return '';
	}
	$ts  = time();
	$msg = $user . "\n" . $uuid . "\n" . $ts . "\n" . hash( 'sha256', $auth );
	return $user . ':' . $uuid . ':' . $ts . ':' . hash_hmac( 'sha256', $msg, mailsvc_bridge_verdict_key() );
}

/**
 * The path of the current site of a multisite network, without its
 * trailing slash ('' for a single site and a network's root site).
 *
 * @return string
 */
function mailsvc_bridge_site_path() {
	if ( ! is_multisite() ) {
		return '';
	}
	$site = get_site();
	$path = $site ? trim( (string) $site->path, '/' ) : '';
	if ( '' === $path ) {
		return '';
	}
	$encoded = mailsvc_bridge_encode_path( $path );
	return null === $encoded ? '' : '/' . $encoded;
}

/**
 * The route callback of mailsvc-bridge/v1/screens/...: the service's
 * /admin/... files. The index is asked for with the base URL of these
 * routes, so that the service writes the page's asset URLs under it (they
 * are query strings with plain permalinks, where relative URLs fail).
 *
 * @param WP_REST_Request $request The request.
 * @return WP_REST_Response|WP_Error
 */
function mailsvc_bridge_forward_screens( $request ) {
	$params = $request->get_url_params();
	$path   = isset( $params['path'] ) ? (string) $params['path'] : '';
	$encoded = mailsvc_bridge_encode_path( $path );
	if ( null === $encoded ) {
		return mailsvc_bridge_no_route();
	}
	// No credentials: the files are public, and this route must not carry
	// the caller's to anything else.
	$fields = mailsvc_bridge_screens_base_fields();
	return mailsvc_bridge_forward( 'GET', '/admin/' . $encoded, '', $fields, '' );
}

/**
 * The URL of the screens through the bridge.
 *
 * @return string
 */
function mailsvc_bridge_screens_url() {
	return rest_url( 'mailsvc-bridge/v1/screens/' );
}

/**
 * The key that signs the screens base URL for the service: derived from
 * wp_salt( 'auth' ) as the hook runner key is, under its own label (Go:
 * wordpress.ScreensBaseKey).
 *
 * @return string
 */
function mailsvc_bridge_screens_key() {
	return hash_hmac( 'sha256', 'mailsvc-screens-base', wp_salt( 'auth' ) );
}

/**
 * The headers that ask the service for the screens' index under
 * mailsvc_bridge_screens_url(): the URL, the time and the signature over
 * both (hex HMAC-SHA256 of "<time>\n<url>" under the screens key). The
 * service believes the URL only when the signature verifies (Go:
 * admin.SignBase).
 *
 * @return array Header name => value.
 */
function mailsvc_bridge_screens_base_fields() {
	$base = mailsvc_bridge_screens_url();
	$ts   = (string) time();
	return array(
		'X-Mailsvc-Screens-Base'           => $base,
		'X-Mailsvc-Screens-Base-Timestamp' => $ts,
		'X-Mailsvc-Screens-Base-Signature' => hash_hmac( 'sha256', $ts . "\n" . $base, mailsvc_bridge_screens_key() ),
	);
}

/**
 * X-Forwarded-For of the forwarded request: the caller's list, then the
 * caller's address.
 *
 * @param WP_REST_Request $request The request.
 * @return string
 */
function mailsvc_bridge_forwarded_for( $request ) {
	$seen   = trim( (string) $request->get_header( 'x_forwarded_for' ) );
	$remote = isset( $_SERVER['REMOTE_ADDR'] ) ? (string) $_SERVER['REMOTE_ADDR'] : '';
	return trim( ( '' !== $seen ? $seen . ', ' : '' ) . $remote, ', ' );
}

/**
 * Opens a connection to the service.
 *
 * @param float $timeout Seconds to wait for it.
 * @return array|null array( stream, base path, host header ), or null when the service does not answer.
 */
function mailsvc_bridge_service_connect( $timeout ) {
	$url = wp_parse_url( mailsvc_bridge_service_url() );
	if ( ! is_array( $url ) || empty( $url['host'] ) ) {
		return null;
	}
	$tls  = isset( $url['scheme'] ) && 'https' === strtolower( $url['scheme'] );
	$port = isset( $url['port'] ) ? (int) $url['port'] : ( $tls ? 443 : 80 );
	$host = false !== strpos( $url['host'], ':' ) && '[' !== $url['host'][0] ? '[' . $url['host'] . ']' : $url['host'];
	$fp   = @stream_socket_client( ( $tls ? 'tls://' : 'tcp://' ) . $host . ':' . $port, $errno, $errstr, $timeout ); // phpcs:ignore WordPress.PHP.NoSilencedErrors.Discouraged -- a refused connection is an answer.
	if ( ! $fp ) {
		return null;
	}
	stream_set_timeout( $fp, MAILSVC_BRIDGE_READ_TIMEOUT );
	return array( $fp, isset( $url['path'] ) ? rtrim( $url['path'], '/' ) : '' );
}

/**
 * Sends one request to the service and returns its answer with the body
 * still to be read, or the 503 mailsvc_unavailable when the service does
 * not answer.
 *
 * @param string $method HTTP method.
 * @param string $target Path on the service.
 * @param string $query  Query string, without '?'.
 * @param array  $fields Request header fields (empty values are left out).
 * @param string $body   Request body.
 * @return WP_REST_Response|WP_Error
 */
function mailsvc_bridge_forward( $method, $target, $query, $fields, $body ) {
	$conn = mailsvc_bridge_service_connect( MAILSVC_BRIDGE_CONNECT_TIMEOUT );
	if ( null === $conn ) {
		return mailsvc_bridge_unavailable_error();
	}
	list( $fp, $base ) = $conn;
	$host = isset( $_SERVER['HTTP_HOST'] ) ? (string) $_SERVER['HTTP_HOST'] : (string) wp_parse_url( home_url(), PHP_URL_HOST );
	$head = strtoupper( $method ) . ' ' . $base . $target . ( '' !== $query ? '?' . $query : '' ) . " HTTP/1.0\r\n"
		. 'Host: ' . $host . "\r\nConnection: close\r\n";
	foreach ( $fields as $name => $value ) {
		$value = str_replace( array( "\r", "\n" ), '', (string) $value );
		if ( '' !== $value ) {
			$head .= $name . ': ' . $value . "\r\n";
		}
	}
	if ( '' !== $body || in_array( strtoupper( $method ), array( 'POST', 'PUT', 'PATCH' ), true ) ) {
		$head .= 'Content-Length: ' . strlen( $body ) . "\r\n";
	}
	$status = 0;
	if ( false !== fwrite( $fp, $head . "\r\n" . $body ) ) { // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fwrite -- a socket.
		$line = fgets( $fp );
		if ( is_string( $line ) && preg_match( '#^HTTP/\d\.\d (\d{3})#', $line, $m ) ) {
			$status = (int) $m[1];
		}
	}
	if ( 0 === $status ) {
		fclose( $fp ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fclose -- a socket.
		return mailsvc_bridge_unavailable_error();
	}
	$response = new WP_REST_Response( new Mailsvc_Bridge_Body( $fp ), $status );
	while ( is_string( $line = fgets( $fp ) ) && '' !== rtrim( $line, "\r\n" ) ) { // phpcs:ignore Generic.CodeAnalysis.AssignmentInCondition.FoundInWhileCondition
		$parts = explode( ':', $line, 2 );
		$name  = trim( $parts[0] );
		if ( 2 === count( $parts ) && '' !== $name && ! in_array( strtolower( $name ), MAILSVC_BRIDGE_HOP_HEADERS, true ) ) {
			$response->header( $name, trim( $parts[1] ), false );
		}
	}
	return $response;
}

/**
 * The answer of a forwarded request when the service does not answer:
 * 503 mailsvc_unavailable, with the number of queued messages for a
 * caller WordPress authenticated with the REST capability.
 *
 * @return WP_Error
 */
function mailsvc_bridge_unavailable_error() {
	$data = array( 'status' => 503 );
	$msg  = 'The mail service is not running. Messages sent meanwhile are queued and will go out when it starts.';
	if ( mailsvc_bridge_caller_may_manage() ) {
		$queued         = mailsvc_bridge_queued_count();
		$data['queued'] = $queued;
		$msg            = mailsvc_bridge_unavailable_message( $queued );
	}
	return new WP_Error( 'mailsvc_unavailable', $msg, $data );
}

/**
 * The words for a service that does not answer, with the queue's size.
 *
 * @param int $queued Messages queued.
 * @return string
 */
function mailsvc_bridge_unavailable_message( $queued ) {
	return sprintf(
		'The mail service is not running. %s queued and will go out when it starts. Start it on the server: systemctl start mailsvc',
		1 === $queued ? '1 message is' : $queued . ' messages are'
	);
}

/**
 * Messages waiting in the queue: rows of {$base_prefix}mailsvc_logs whose
 * status is queued (0 when the table cannot be read).
 *
 * @return int
 */
function mailsvc_bridge_queued_count() {
	global $wpdb;
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_logs';
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$count = $wpdb->get_var( "SELECT COUNT(*) FROM `{$table}` WHERE status = 'queued'" );
	$wpdb->suppress_errors( $suppress );
	return (int) $count;
}

/**
 * Whether the service answers its liveness probe (GET /healthz), asked
 * once per request.
 *
 * @return bool
 */
function mailsvc_bridge_service_running() {
	static $running = null;
	if ( null !== $running ) {
		return $running;
	}
	$running = false;
	$conn    = mailsvc_bridge_service_connect( 1 );
	if ( null !== $conn ) {
		list( $fp, $base ) = $conn;
		stream_set_timeout( $fp, 2 );
		fwrite( $fp, 'GET ' . $base . "/healthz HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n" ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fwrite -- a socket.
		$line    = fgets( $fp );
		$running = is_string( $line ) && 1 === preg_match( '#^HTTP/\d\.\d 200#', $line );
		fclose( $fp ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fclose -- a socket.
	}
	return $running;
}

/**
 * The Mail page's notice when the service does not answer.
 */
function mailsvc_bridge_unavailable_notice() {
	$screen = function_exists( 'get_current_screen' ) ? get_current_screen() : null;
	if ( ! $screen || 'toplevel_page_mailsvc' !== $screen->id || ! current_user_can( mailsvc_bridge_admin_capability() ) || mailsvc_bridge_service_running() ) {
		return;
	}
	$queued = mailsvc_bridge_queued_count();
	echo '<div class="notice notice-warning" id="mailsvc-unavailable"><p><strong>' . esc_html__( 'The mail service is not running.' ) . '</strong> ';
	echo esc_html( sprintf( '%s queued and will go out when it starts.', 1 === $queued ? '1 message is' : $queued . ' messages are' ) ) . '</p>';
	echo '<p>' . esc_html__( 'Start it on the server:' ) . ' <code>systemctl start mailsvc</code> ';
	echo esc_html__( '(or run' ) . ' <code>mailsvc serve</code> ' . esc_html__( 'with the site\'s MAILSVC_WP_CONFIG). Then reload this page.' ) . '</p></div>';
}

/**
 * The staging guard's notice on every other wp-admin screen (the Mail
 * page's screens have their own banner): while messages are held
 * (captured: a copy of the live site, a staging site, simulation mode),
 * an administrator sees how many and where to release them, wherever in
 * wp-admin they are. One indexed query, for administrators only, that
 * counts at most 1000 held messages.
 */
function mailsvc_bridge_captured_notice() {
	$screen = function_exists( 'get_current_screen' ) ? get_current_screen() : null;
	if ( ! $screen || 'toplevel_page_mailsvc' === $screen->id || ! current_user_can( mailsvc_bridge_admin_capability() ) ) {
		return;
	}
	global $wpdb;
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_logs';
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$held = (int) $wpdb->get_var( "SELECT COUNT(*) FROM (SELECT 1 FROM `{$table}` WHERE status = 'captured' LIMIT 1000) held" );
	$wpdb->suppress_errors( $suppress );
	if ( $held < 1 ) {
		return;
	}
	$count = 1 === $held ? '1 message is' : ( $held >= 1000 ? 'At least 1000 messages are' : $held . ' messages are' );
	echo '<div class="notice notice-warning" id="mailsvc-captured"><p><strong>' . esc_html( $count . ' held, not sent.' ) . '</strong> ';
	echo esc_html__( 'mailsvc holds mail on a copy of the live site, on a staging site and in simulation mode.' ) . ' ';
	echo '<a href="' . esc_url( admin_url( 'admin.php?page=mailsvc' ) ) . '">' . esc_html__( 'Open Mail' ) . '</a> ';
	echo esc_html__( 'to release them, or to record this site as the live one.' ) . '</p></div>';
}

/**
 * Relays the body of a forwarded answer to the client as it arrives, once
 * WordPress has sent the status and every header (rest_pre_echo_response
 * is the last step before WordPress would encode and echo the data), and
 * leaves WordPress nothing to echo.
 *
 * @param mixed           $data    The answer's data.
 * @param WP_REST_Server  $server  The server.
 * @param WP_REST_Request $request The request.
 * @return mixed
 */
function mailsvc_bridge_forward_echo( $data, $server, $request ) {
	if ( ! $data instanceof Mailsvc_Bridge_Body ) {
		return $data;
	}
	$data->send();
	$data->close();
	return null;
}

/**
 * Leaves the screens' files to the service's own Cache-Control
 * (revalidate on each load) rather than WordPress's no-store for
 * signed-in users, so the browser keeps them between loads.
 *
 * @param bool $send Whether WordPress sends its no-cache headers.
 * @return bool
 */
function mailsvc_bridge_screens_cacheable( $send ) {
	$route = isset( $GLOBALS['wp']->query_vars['rest_route'] ) ? (string) $GLOBALS['wp']->query_vars['rest_route'] : '';
	return 1 === preg_match( '#^/mailsvc-bridge/v1/screens(/|$)#i', $route ) ? false : $send;
}

/**
 * The body of a forwarded answer: the service's socket, read to the end.
 * Served, it is copied to the client as it comes; used inside PHP
 * (rest_do_request), it is the decoded JSON.
 */
class Mailsvc_Bridge_Body implements JsonSerializable {
	/** @var resource|null The socket. */
	private $stream;

	/**
	 * @param resource $stream The socket, after the header.
	 */
	public function __construct( $stream ) {
		$this->stream = $stream;
	}

	/** Copies the rest of the body to the output. */
	public function send() {
		while ( is_resource( $this->stream ) && ! feof( $this->stream ) ) {
			$chunk = fread( $this->stream, 65536 ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fread -- a socket.
			if ( false === $chunk || ( '' === $chunk && stream_get_meta_data( $this->stream )['timed_out'] ) ) {
				break;
			}
			echo $chunk; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- the service's answer, relayed as it is.
			flush();
		}
	}

	/** Closes the socket. */
	public function close() {
		if ( is_resource( $this->stream ) ) {
			fclose( $this->stream ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fclose -- a socket.
		}
		$this->stream = null;
	}

	/**
	 * The body decoded from JSON (the text when it is not JSON).
	 *
	 * @return mixed
	 */
	#[\ReturnTypeWillChange]
	public function jsonSerialize() {
		$text = is_resource( $this->stream ) ? (string) stream_get_contents( $this->stream ) : '';
		$this->close();
		$data = json_decode( $text );
		return null === $data && 'null' !== trim( $text ) ? $text : $data;
	}
}

/* ===== End of: the REST API and the screens through WordPress ===== */

/**
 * Host hooks: the service's events run here as WordPress actions.
 *
 * The service records each event in {$base_prefix}mailsvc_hook_events (the
 * outbox), in the transaction of the change that causes it, and asks the
 * site to run it with a signed POST to the REST route
 * mailsvc-bridge/v1/hooks; a WP-cron event runs them every minute too, for
 * when that request fails. A run claims rows atomically (one UPDATE that
 * only takes rows nobody holds or whose holder's claim has expired), runs
 * each as do_action() and marks it done, so each event runs once across
 * the service's replicas and concurrent PHP requests. A row whose request
 * died is claimed again after MAILSVC_BRIDGE_HOOK_CLAIM_TIMEOUT seconds, at
 * most MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS times; a callback that throws is
 * recorded with its error and not run again. docs/hooks.md lists the hooks
 * and their arguments.
 */

/** Seconds after which a claimed, unfinished hook event is claimed again. */
const MAILSVC_BRIDGE_HOOK_CLAIM_TIMEOUT = 300;
/** Runs of one hook event at most (each started by a request that died). */
const MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS = 3;
/** Hook events claimed at a time. */
const MAILSVC_BRIDGE_HOOK_BATCH = 20;
/** Days an outbox row is kept. */
const MAILSVC_BRIDGE_HOOK_RETENTION_DAYS = 7;
/** Seconds a timestamped runner request stays valid. */
const MAILSVC_BRIDGE_HOOK_RUN_WINDOW = 60;

add_action( 'wp_loaded', 'mailsvc_bridge_publish_hooks' );
add_action( 'rest_api_init', 'mailsvc_bridge_register_hook_route' );
add_action( 'rest_api_init', 'mailsvc_bridge_register_auth_route' );
add_filter( 'cron_schedules', 'mailsvc_bridge_cron_schedules' );
add_action( 'init', 'mailsvc_bridge_schedule_hooks' );
add_action( 'mailsvc_bridge_run_hooks', 'mailsvc_bridge_cron_run_hooks' );

/**
 * The hooks the service fires in WordPress.
 *
 * @return string[] Hook names.
 */
function mailsvc_bridge_hook_names() {
	return array(
		'mail_svc_test_email_sent',
		'mail_svc_pro_webhook_received',
		'mail_svc_pro_webhook_ses',
		'mail_svc_api_debug',
		'mail_svc_delivered',
		'wp_mail_failed',
	);
}

/**
 * The outbox table.
 *
 * @return string Table name.
 */
function mailsvc_bridge_hook_table() {
	global $wpdb;
	return ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_hook_events';
}

/**
 * Decides which host hooks a message that wp_mail() queues fires when its
 * delivery ends: mail_svc_delivered (flag 1) and wp_mail_failed (flag 2),
 * each only while the site has a callback on it. For wp_mail_failed the
 * wp_mail() arguments are kept in the stored message ('wp_mail'), so the
 * WP_Error can carry them.
 *
 * @param array $stored    The message column, by reference.
 * @param array $mail_data The wp_mail() arguments (to, subject, message, headers, attachments).
 * @return int Flags for the log's host_hooks column.
 */
function mailsvc_bridge_message_hooks( &$stored, $mail_data ) {
	$flags = 0;
	if ( has_action( 'mail_svc_delivered' ) ) {
		$flags |= 1;
	}
	if ( has_action( 'wp_mail_failed' ) && false !== wp_json_encode( $mail_data ) ) {
		$flags            |= 2;
		$stored['wp_mail'] = $mail_data;
	}
	return $flags;
}

/**
 * Publishes the hooks the site has callbacks on in the mailsvc_host_hooks
 * option that the service reads (it records the events of the others not
 * at all). Written only when it changes.
 */
function mailsvc_bridge_publish_hooks() {
	$listeners = array();
	foreach ( mailsvc_bridge_hook_names() as $hook ) {
		if ( has_action( $hook ) ) {
			$listeners[] = $hook;
		}
	}
	// The service calls the runner at the site's stored address, never
	// one a page load derives from its Host header.
	$value = array( 'listeners' => $listeners );
	if ( get_option( 'mailsvc_host_hooks' ) !== $value ) {
		update_option( 'mailsvc_host_hooks', $value, true );
	}
}

/**
 * Registers the runner route the service calls: POST mailsvc-bridge/v1/hooks.
 */
function mailsvc_bridge_register_hook_route() {
	register_rest_route(
		'mailsvc-bridge/v1',
		'/hooks',
		array(
			'methods'             => 'POST',
			'callback'            => 'mailsvc_bridge_hook_route',
			'permission_callback' => 'mailsvc_bridge_hook_request_signed',
		)
	);
}

/**
 * The runner key: derived from wp_salt( 'auth' ), which the service
 * computes from the same wp-config.php.
 *
 * @return string Hex key.
 */
function mailsvc_bridge_hook_key() {
	return hash_hmac( 'sha256', 'mailsvc-hook-runner', wp_salt( 'auth' ) );
}

/**
 * Checks a runner request's signature: the X-Mailsvc-Signature header is
 * the hex HMAC-SHA256 of the X-Mailsvc-Timestamp header (Unix seconds,
 * within MAILSVC_BRIDGE_HOOK_RUN_WINDOW of now) under the runner key.
 *
 * @param WP_REST_Request $request The request.
 * @return true|WP_Error
 */
function mailsvc_bridge_hook_request_signed( $request ) {
	$ts  = (string) $request->get_header( 'x_mailsvc_timestamp' );
	$sig = (string) $request->get_header( 'x_mailsvc_signature' );
	if ( ! preg_match( '/^\d{1,12}$/', $ts ) || abs( time() - (int) $ts ) > MAILSVC_BRIDGE_HOOK_RUN_WINDOW
		|| ! hash_equals( hash_hmac( 'sha256', $ts, mailsvc_bridge_hook_key() ), strtolower( $sig ) ) ) {
		return new WP_Error( 'rest_forbidden', 'The hook runner request is not signed by the mailsvc service.', array( 'status' => 401 ) );
	}
	return true;
}

/**
 * Registers the route where the service asks WordPress to decide an
 * application password that reached it without the bridge (the direct
 * path, SMTP AUTH) on a site whose wp_authenticate_application_password_errors
 * callbacks decide per request: POST mailsvc-bridge/v1/auth.
 */
function mailsvc_bridge_register_auth_route() {
	register_rest_route(
		'mailsvc-bridge/v1',
		'/auth',
		array(
			'methods'             => 'POST',
			'callback'            => 'mailsvc_bridge_auth_route',
			'permission_callback' => 'mailsvc_bridge_auth_request_signed',
		)
	);
}

/**
 * Checks a question's signature: X-Mailsvc-Signature is the hex
 * HMAC-SHA256 of X-Mailsvc-Timestamp (Unix seconds, within
 * MAILSVC_BRIDGE_HOOK_RUN_WINDOW of now), a line feed and the body, under
 * the verdict key.
 *
 * @param WP_REST_Request $request The request.
 * @return true|WP_Error
 */
function mailsvc_bridge_auth_request_signed( $request ) {
	$ts  = (string) $request->get_header( 'x_mailsvc_timestamp' );
	$sig = (string) $request->get_header( 'x_mailsvc_signature' );
	if ( ! preg_match( '/^\d{1,12}$/', $ts ) || abs( time() - (int) $ts ) > MAILSVC_BRIDGE_HOOK_RUN_WINDOW
		|| ! hash_equals( hash_hmac( 'sha256', $ts . "\n" . $request->get_body(), mailsvc_bridge_verdict_key() ), strtolower( $sig ) ) ) {
		return new WP_Error( 'rest_forbidden', 'The question is not signed by the mailsvc service.', array( 'status' => 401 ) );
	}
	return true;
}

/**
 * Decides an application password as WordPress decides one on its own
 * API: wp_authenticate_application_password() with the client's address
 * and HTTPS state, so that every filter (availability, per user, the
 * errors callbacks) sees the client, and last_ip records it.
 *
 * @param WP_REST_Request $request The request: login, password, ip, https.
 * @return array|WP_Error The user's id, or WordPress's refusal (401).
 */
function mailsvc_bridge_auth_route( $request ) {
	$in = json_decode( $request->get_body(), true );
	if ( ! is_array( $in ) || ! isset( $in['login'], $in['password'] ) || ! is_string( $in['login'] ) || ! is_string( $in['password'] ) ) {
		return new WP_Error( 'bad_request', 'A login and a password are required.', array( 'status' => 400 ) );
	}
	$ip = isset( $in['ip'] ) && is_string( $in['ip'] ) ? filter_var( $in['ip'], FILTER_VALIDATE_IP ) : false;
	if ( false !== $ip ) {
		$_SERVER['REMOTE_ADDR'] = $ip;
	}
	if ( ! empty( $in['https'] ) ) {
		$_SERVER['HTTPS'] = 'on';
	} else {
		unset( $_SERVER['HTTPS'] );
	}
	add_filter( 'application_password_is_api_request', '__return_true', PHP_INT_MAX );
	$user = wp_authenticate_application_password( null, $in['login'], $in['password'] );
	remove_filter( 'application_password_is_api_request', '__return_true', PHP_INT_MAX );
	if ( $user instanceof WP_User ) {
		return array( 'user_id' => (int) $user->ID );
	}
	if ( is_wp_error( $user ) ) {
		return new WP_Error( $user->get_error_code(), $user->get_error_message(), array( 'status' => 401 ) );
	}
	return new WP_Error( 'application_passwords_disabled', 'Application passwords are not available.', array( 'status' => 401 ) );
}

/**
 * Runs the pending hooks for the service's request.
 *
 * @return array The number of events run.
 */
function mailsvc_bridge_hook_route() {
	return array( 'ran' => mailsvc_bridge_run_hooks( 10 ) );
}

/**
 * Adds the one-minute schedule of the cron event.
 *
 * @param array $schedules Schedules.
 * @return array Schedules.
 */
function mailsvc_bridge_cron_schedules( $schedules ) {
	$schedules['mailsvc_minute'] = array(
		'interval' => 60,
		'display'  => 'Every minute (mailsvc hooks)',
	);
	return $schedules;
}

/**
 * Schedules the cron event that runs pending hooks when the service's
 * request did not get through.
 */
function mailsvc_bridge_schedule_hooks() {
	if ( ! wp_next_scheduled( 'mailsvc_bridge_run_hooks' ) ) {
		wp_schedule_event( time(), 'mailsvc_minute', 'mailsvc_bridge_run_hooks' );
	}
}

/**
 * The cron event: runs pending hooks, gives up on events whose requests
 * kept dying, and prunes old rows.
 */
function mailsvc_bridge_cron_run_hooks() {
	global $wpdb;
	mailsvc_bridge_run_hooks( 25 );
	$table    = mailsvc_bridge_hook_table();
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$wpdb->query(
		$wpdb->prepare(
			"UPDATE `{$table}` SET done_at = UTC_TIMESTAMP(6), claimed_by = NULL, last_error = %s
			WHERE done_at IS NULL AND attempts >= %d AND claimed_at < UTC_TIMESTAMP(6) - INTERVAL %d SECOND",
			'Abandoned: the PHP requests running it died ' . MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS . ' times.',
			MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS,
			MAILSVC_BRIDGE_HOOK_CLAIM_TIMEOUT
		)
	);
	$wpdb->query( $wpdb->prepare( "DELETE FROM `{$table}` WHERE created_at < UTC_TIMESTAMP(6) - INTERVAL %d DAY", MAILSVC_BRIDGE_HOOK_RETENTION_DAYS ) );
	// phpcs:enable
	$wpdb->suppress_errors( $suppress );
}

/**
 * Runs pending hook events for up to $budget seconds and returns how many
 * ran. Each batch is claimed with a token of this run; each event is
 * started (its attempt counted, its claim renewed) only while the claim is
 * still this run's, and marked done after its callbacks return or throw.
 * Claimed events left when the budget is spent are released.
 *
 * @param int $budget Seconds.
 * @return int Events run.
 */
function mailsvc_bridge_run_hooks( $budget ) {
	global $wpdb;
	$table    = mailsvc_bridge_hook_table();
	$token    = bin2hex( random_bytes( 16 ) );
	$until    = microtime( true ) + $budget;
	$ran      = 0;
	$suppress = $wpdb->suppress_errors( true );
	// The ids of the events this run started (the integers of its rows).
	$started_ids = array();
	// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	while ( microtime( true ) < $until ) {
		$claimed = $wpdb->query(
			$wpdb->prepare(
				"UPDATE `{$table}` SET claimed_by = %s, claimed_at = UTC_TIMESTAMP(6)
				WHERE done_at IS NULL AND attempts < %d
				AND (claimed_at IS NULL OR claimed_at < UTC_TIMESTAMP(6) - INTERVAL %d SECOND)
				ORDER BY id LIMIT %d",
				$token,
				MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS,
				MAILSVC_BRIDGE_HOOK_CLAIM_TIMEOUT,
				MAILSVC_BRIDGE_HOOK_BATCH
			)
		);
		if ( ! $claimed ) {
			break; // Nothing pending, or the table is not there (yet).
		}
		$rows = $wpdb->get_results( $wpdb->prepare( "SELECT id, hook, args FROM `{$table}` WHERE claimed_by = %s AND done_at IS NULL ORDER BY id", $token ), ARRAY_A );
		foreach ( (array) $rows as $row ) {
			if ( microtime( true ) >= $until ) {
				break;
			}
			$started = $wpdb->query( $wpdb->prepare( "UPDATE `{$table}` SET attempts = attempts + 1, claimed_at = UTC_TIMESTAMP(6) WHERE id = %d AND claimed_by = %s AND done_at IS NULL", $row['id'], $token ) );
			if ( 1 !== (int) $started ) {
				continue; // Our claim expired and another request holds it.
			}
			$started_ids[] = (int) $row['id'];
			$error         = mailsvc_bridge_run_hook( (string) $row['hook'], (string) $row['args'] );
			// The event ran: it is marked done, tried again when the
			// database answers with an error (a deadlock between runners),
			// since an event left claimed would run once more after its
			// claim expires.
			for ( $try = 0; $try < 5; $try++ ) {
				if ( false !== $wpdb->query( $wpdb->prepare( "UPDATE `{$table}` SET done_at = UTC_TIMESTAMP(6), claimed_by = NULL, last_error = NULLIF(%s, '') WHERE id = %d AND claimed_by = %s", $error, $row['id'], $token ) ) ) {
					break;
				}
				usleep( 20000 * ( $try + 1 ) );
			}
			++$ran;
		}
	}
	// Release what this run claimed but did not start. An event it
	// started stays claimed even if marking it done failed: it runs again
	// only once its claim has expired, as for a request that died.
	$keep = empty( $started_ids ) ? '' : ' AND id NOT IN (' . implode( ',', $started_ids ) . ')';
	$wpdb->query( $wpdb->prepare( "UPDATE `{$table}` SET claimed_by = NULL, claimed_at = NULL WHERE claimed_by = %s AND done_at IS NULL{$keep}", $token ) );
	// phpcs:enable
	$wpdb->suppress_errors( $suppress );
	return $ran;
}

/**
 * Runs one hook event with its arguments (a JSON array). wp_mail_failed
 * gets WordPress's own argument, a WP_Error whose data are the wp_mail()
 * arguments and the log id; the other hooks get the arguments as they are.
 *
 * @param string $hook The hook.
 * @param string $json Its arguments.
 * @return string The error a callback threw, or ''.
 */
function mailsvc_bridge_run_hook( $hook, $json ) {
	if ( ! in_array( $hook, mailsvc_bridge_hook_names(), true ) ) {
		return 'Not a mailsvc hook: ' . $hook;
	}
	$args = json_decode( $json, true );
	if ( ! is_array( $args ) ) {
		return 'The arguments are not a JSON array.';
	}
	// On a multisite network a message's hooks run on the site that sent it.
	$site     = mailsvc_bridge_hook_site( $hook, $args );
	$switched = $site > 0 && $site !== (int) get_current_blog_id() && switch_to_blog( $site );
	try {
		if ( 'wp_mail_failed' === $hook ) {
			$event = isset( $args[0] ) && is_array( $args[0] ) ? $args[0] : array();
			$data  = isset( $event['mail_data'] ) && is_array( $event['mail_data'] ) ? $event['mail_data'] : array();
			$data['mailsvc_log_id'] = isset( $event['log_id'] ) ? (int) $event['log_id'] : 0;
			$error = isset( $event['error'] ) ? (string) $event['error'] : '';
			/** This action is documented in wp-includes/pluggable.php */
			do_action( 'wp_mail_failed', new WP_Error( 'wp_mail_failed', $error, $data ) );
		} else {
			do_action_ref_array( $hook, array_values( $args ) );
		}
	} catch ( Throwable $e ) {
		return get_class( $e ) . ': ' . $e->getMessage();
	} finally {
		if ( $switched ) {
			restore_current_blog();
		}
	}
	return '';
}

/*
 * Email controls: WordPress core emails switched off from the Settings
 * screen (GET and PUT /settings/email-controls; docs/hooks.md, "Email
 * controls").
 *
 * The switches are the settings scope "email_controls" of
 * {$base_prefix}mailsvc_settings (kind => false when switched off), read
 * with one query the first time a core email is about to be built in a
 * request (a long-running PHP process reads them again after a minute);
 * a page load that builds no core email reads nothing.
 *
 * Each kind is stopped through the filter WordPress offers for it:
 * - where WordPress has a "send this email?" filter applied only when the
 *   email is about to be built (send_password_change_email,
 *   send_email_change_email, send_site_admin_email_change_email,
 *   auto_plugin_update_send_email, auto_theme_update_send_email), it
 *   answers false;
 * - elsewhere the filter of the email's contents or headers marks the
 *   email with an X-Mailsvc-Control header naming its kind, and a
 *   pre_wp_mail callback (which both this bridge's wp_mail() and
 *   WordPress's own apply) stops a marked email before it is queued or
 *   sent; the admin email change confirmation, whose only filter is its
 *   text, is marked by its recipient for the next wp_mail() of the
 *   request.
 *
 * Nothing stopped is lost silently: each stopped email adds one to its
 * kind's counter of the day (the site's calendar day) in
 * {$base_prefix}mailsvc_email_control_counts, which the dashboard and
 * GET /settings/email-controls show, and fires the action
 * mail_svc_email_suppressed. When the counter cannot be written (the
 * service's tables are missing), the email is sent as before.
 */

foreach ( array(
	'wp_new_user_notification_email_admin'  => 'new_user_admin',
	'wp_new_user_notification_email'        => 'new_user_user',
	'wp_password_change_notification_email' => 'password_change_admin',
	'auto_core_update_email'                => 'auto_update_core',
) as $mailsvc_filter => $mailsvc_kind ) {
	add_filter(
		$mailsvc_filter,
		static function ( $email ) use ( $mailsvc_kind ) {
			return mailsvc_bridge_email_control_mark_email( $email, array( $mailsvc_kind ) );
		},
		PHP_INT_MAX
	);
}
foreach ( array(
	'comment_notification_headers'           => 'comment_notification',
	'comment_moderation_headers'             => 'comment_moderation',
	'user_request_action_email_headers'      => 'privacy_request_user',
	'user_request_confirmed_email_headers'   => 'privacy_request_confirmed_admin',
	'user_erasure_fulfillment_email_headers' => 'privacy_erasure_done_user',
	'wp_privacy_personal_data_email_headers' => 'privacy_export_ready_user',
) as $mailsvc_filter => $mailsvc_kind ) {
	add_filter(
		$mailsvc_filter,
		static function ( $headers ) use ( $mailsvc_kind ) {
			return mailsvc_bridge_email_control_off( $mailsvc_kind ) ? mailsvc_bridge_email_control_mark( $headers, array( $mailsvc_kind ) ) : $headers;
		},
		PHP_INT_MAX
	);
}
foreach ( array(
	'send_password_change_email'         => 'password_change_user',
	'send_email_change_email'            => 'email_change_user',
	'send_site_admin_email_change_email' => 'admin_email_change',
	'auto_plugin_update_send_email'      => 'auto_update_plugins',
	'auto_theme_update_send_email'       => 'auto_update_themes',
) as $mailsvc_filter => $mailsvc_kind ) {
	add_filter(
		$mailsvc_filter,
		static function ( $send ) use ( $mailsvc_kind ) {
			return mailsvc_bridge_email_control_switch( $send, $mailsvc_kind );
		},
		PHP_INT_MAX
	);
}
unset( $mailsvc_filter, $mailsvc_kind );
add_filter( 'auto_plugin_theme_update_email', 'mailsvc_bridge_email_control_plugin_theme', PHP_INT_MAX, 4 );
add_filter( 'new_admin_email_content', 'mailsvc_bridge_email_control_new_admin_email', PHP_INT_MAX, 2 );
add_filter( 'pre_wp_mail', 'mailsvc_bridge_email_control_pre_wp_mail', PHP_INT_MIN, 2 );

/**
 * The kinds of core email the controls cover, as the service lists them
 * (core.EmailControlKinds).
 *
 * @return string[]
 */
function mailsvc_bridge_email_control_kinds() {
	return array(
		'new_user_admin',
		'new_user_user',
		'password_change_user',
		'password_change_admin',
		'email_change_user',
		'comment_notification',
		'comment_moderation',
		'auto_update_core',
		'auto_update_plugins',
		'auto_update_themes',
		'privacy_request_user',
		'privacy_request_confirmed_admin',
		'privacy_erasure_done_user',
		'privacy_export_ready_user',
		'admin_email_change',
		'admin_email_change_confirm',
	);
}

/**
 * Reports whether a kind of core email is switched off: its key in the
 * settings scope "email_controls" is false. Read once per request (again
 * after a minute); when the table cannot be read, every kind is on.
 *
 * @param string $kind The kind.
 * @return bool
 */
function mailsvc_bridge_email_control_off( $kind ) {
	global $wpdb;
	static $off     = null;
	static $read_at = 0;
	if ( null === $off || time() - $read_at >= 60 ) {
		$off     = array();
		$read_at = time();
		if ( isset( $wpdb ) ) {
			$table    = mailsvc_bridge_table( 'settings' );
			$suppress = $wpdb->suppress_errors( true );
			// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
			$rows = $wpdb->get_results( "SELECT setting_key, setting_value FROM `{$table}` WHERE scope = 'email_controls'", ARRAY_A );
			$wpdb->suppress_errors( $suppress );
			foreach ( is_array( $rows ) ? $rows : array() as $row ) {
				if ( isset( $row['setting_key'], $row['setting_value'] ) && false === json_decode( (string) $row['setting_value'], true ) ) {
					$off[ $row['setting_key'] ] = true;
				}
			}
		}
	}
	return isset( $off[ $kind ] );
}

/**
 * Adds the X-Mailsvc-Control header naming kinds to wp_mail() headers.
 *
 * @param string|string[] $headers Headers as wp_mail() takes them.
 * @param string[]        $kinds   The kinds.
 * @return string|string[] The headers, of the same type.
 */
function mailsvc_bridge_email_control_mark( $headers, $kinds ) {
	$line = 'X-Mailsvc-Control: ' . implode( ',', $kinds );
	if ( is_array( $headers ) ) {
		$headers[] = $line;
		return $headers;
	}
	$headers = (string) $headers;
	if ( '' !== $headers && "\n" !== substr( $headers, -1 ) ) {
		$headers .= "\n";
	}
	return $headers . $line . "\n";
}

/**
 * Marks an email given as WordPress's filters of a whole email give it
 * (to, subject, message or body, headers) when every one of kinds is
 * switched off.
 *
 * @param array    $email The email.
 * @param string[] $kinds Its kinds.
 * @return array
 */
function mailsvc_bridge_email_control_mark_email( $email, $kinds ) {
	if ( ! is_array( $email ) || ! $kinds ) {
		return $email;
	}
	foreach ( $kinds as $kind ) {
		if ( ! mailsvc_bridge_email_control_off( $kind ) ) {
			return $email;
		}
	}
	$email['headers'] = mailsvc_bridge_email_control_mark( isset( $email['headers'] ) ? $email['headers'] : '', $kinds );
	return $email;
}

/**
 * Answers a "send this email?" filter: false for a switched-off kind,
 * once its count is written; otherwise what it was given.
 *
 * @param bool   $send Whether WordPress would send the email.
 * @param string $kind The kind.
 * @return bool
 */
function mailsvc_bridge_email_control_switch( $send, $kind ) {
	if ( ! $send || ! mailsvc_bridge_email_control_off( $kind ) ) {
		return $send;
	}
	return mailsvc_bridge_email_control_count( $kind, null ) ? false : $send;
}

/**
 * The email of an automatic plugin and theme update: marked when every
 * kind it reports on (plugins, themes) is switched off. WordPress's
 * updater leaves a switched-off kind out before it builds the email
 * (auto_plugin_update_send_email, auto_theme_update_send_email), so an
 * email that still reports on both is sent.
 *
 * @param array  $email      The email.
 * @param string $type       success, fail or mixed.
 * @param array  $successful The successful updates by type (plugin, theme).
 * @param array  $failed     The failed updates by type.
 * @return array
 */
function mailsvc_bridge_email_control_plugin_theme( $email, $type, $successful = array(), $failed = array() ) {
	$kinds = array();
	foreach ( array( 'plugin' => 'auto_update_plugins', 'theme' => 'auto_update_themes' ) as $key => $kind ) {
		if ( ! empty( $successful[ $key ] ) || ! empty( $failed[ $key ] ) ) {
			$kinds[] = $kind;
		}
	}
	return mailsvc_bridge_email_control_mark_email( $email, $kinds );
}

/**
 * The admin email change confirmation: its only filter is its text, so
 * when the kind is switched off its recipient (the new address) is
 * remembered, and the next wp_mail() of the request to that address is
 * stopped.
 *
 * @param string $text            The email's text.
 * @param array  $new_admin_email The change: hash and newemail.
 * @return string The text, unchanged.
 */
function mailsvc_bridge_email_control_new_admin_email( $text, $new_admin_email = array() ) {
	if ( is_array( $new_admin_email ) && ! empty( $new_admin_email['newemail'] ) && mailsvc_bridge_email_control_off( 'admin_email_change_confirm' ) ) {
		mailsvc_bridge_email_control_pending( (string) $new_admin_email['newemail'] );
	}
	return $text;
}

/**
 * Remembers (with an address) or takes (without one) the recipient of the
 * admin email change confirmation to stop.
 *
 * @param string|null $address The address to remember.
 * @return string The address remembered before, '' when none.
 */
function mailsvc_bridge_email_control_pending( $address = null ) {
	static $pending = '';
	$before         = $pending;
	$pending        = null === $address ? '' : $address;
	return $before;
}

/**
 * The pre_wp_mail callback: stops a marked email (and the admin email
 * change confirmation remembered for its recipient), counting it per
 * kind, and answers true as wp_mail() would for a sent one. An email
 * whose count cannot be written goes on (null).
 *
 * @param null|bool $return What an earlier callback answered.
 * @param array     $atts   wp_mail()'s arguments.
 * @return null|bool
 */
function mailsvc_bridge_email_control_pre_wp_mail( $return, $atts ) {
	if ( null !== $return || ! is_array( $atts ) ) {
		return $return;
	}
	$kinds   = array();
	$headers = isset( $atts['headers'] ) ? $atts['headers'] : array();
	if ( ! is_array( $headers ) ) {
		$headers = explode( "\n", str_replace( "\r\n", "\n", (string) $headers ) );
	}
	foreach ( $headers as $header ) {
		if ( is_string( $header ) && preg_match( '/^\s*x-mailsvc-control\s*:(.*)$/i', $header, $m ) ) {
			foreach ( explode( ',', $m[1] ) as $kind ) {
				$kind = trim( $kind );
				// Only a kind switched off stops an email: a tag that some
				// other code wrote for a kind that is on stops nothing.
				if ( in_array( $kind, mailsvc_bridge_email_control_kinds(), true ) && mailsvc_bridge_email_control_off( $kind ) ) {
					$kinds[ $kind ] = true;
				}
			}
		}
	}
	$pending = mailsvc_bridge_email_control_pending();
	if ( '' !== $pending ) {
		$to = isset( $atts['to'] ) ? $atts['to'] : array();
		$to = is_array( $to ) ? $to : explode( ',', (string) $to );
		if ( 1 === count( $to ) && 0 === strcasecmp( trim( (string) reset( $to ) ), $pending ) ) {
			$kinds['admin_email_change_confirm'] = true;
		} else {
			mailsvc_bridge_email_control_pending( $pending ); // another email came between: keep waiting.
		}
	}
	if ( ! $kinds ) {
		return $return;
	}
	$counted = true;
	foreach ( array_keys( $kinds ) as $kind ) {
		$counted = mailsvc_bridge_email_control_count( $kind, $atts ) && $counted;
	}
	return $counted ? true : null;
}

/**
 * Counts one stopped email of a kind: one upsert of its counter of the
 * day (the site's calendar day), then the mail_svc_email_suppressed
 * action.
 *
 * @param string     $kind The kind.
 * @param array|null $atts wp_mail()'s arguments, null when WordPress's
 *                         own switch stopped the email before it was built.
 * @return bool Whether the count was written.
 */
function mailsvc_bridge_email_control_count( $kind, $atts ) {
	global $wpdb;
	if ( ! isset( $wpdb ) ) {
		return false;
	}
	$day      = function_exists( 'wp_date' ) ? wp_date( 'Y-m-d' ) : gmdate( 'Y-m-d' );
	$table    = mailsvc_bridge_table( 'email_control_counts' );
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$done = $wpdb->query( $wpdb->prepare( "INSERT INTO `{$table}` (kind, day, suppressed) VALUES (%s, %s, 1) ON DUPLICATE KEY UPDATE suppressed = suppressed + 1", $kind, $day ) );
	$wpdb->suppress_errors( $suppress );
	if ( false === $done ) {
		return false;
	}
	/**
	 * Fires when the email controls stopped a WordPress core email.
	 *
	 * @param string     $kind The kind (docs/hooks.md, "Email controls").
	 * @param array|null $atts wp_mail()'s arguments, or null when the
	 *                         email was stopped before it was built.
	 */
	do_action( 'mail_svc_email_suppressed', $kind, $atts );
	return true;
}

/**
 * The site (blog id) whose message a hook event is about, on a multisite
 * network: the site_id of the log that wp_mail_failed and
 * mail_svc_delivered name; 0 when not on a network or not known (a log
 * already removed).
 *
 * @param string $hook The hook.
 * @param array  $args Its arguments.
 * @return int
 */
function mailsvc_bridge_hook_site( $hook, $args ) {
	global $wpdb;
	if ( ! is_multisite() ) {
		return 0;
	}
	$log_id = 0;
	if ( 'wp_mail_failed' === $hook && isset( $args[0]['log_id'] ) ) {
		$log_id = (int) $args[0]['log_id'];
	} elseif ( 'mail_svc_delivered' === $hook && isset( $args[0] ) ) {
		$log_id = (int) $args[0];
	}
	if ( $log_id <= 0 ) {
		return 0;
	}
	$table    = mailsvc_bridge_table( 'logs' );
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$site = (int) $wpdb->get_var( $wpdb->prepare( "SELECT site_id FROM `{$table}` WHERE id = %d", $log_id ) );
	$wpdb->suppress_errors( $suppress );
	return $site;
}

/* ===== Abilities: WordPress's Abilities API (WordPress 6.9 and later) ===== */

/**
 * Abilities: what the service can do, for site tools and AI assistants.
 *
 * On a WordPress with the Abilities API (6.9 and later) the bridge
 * registers, in the category "mailsvc", abilities that answer with the
 * service's own REST routes (docs/hooks.md, "Abilities"):
 *
 *   mailsvc/get-stats           GET  /dashboard/stats   (readonly)
 *   mailsvc/search-logs         GET  /logs              (readonly)
 *   mailsvc/get-log             GET  /logs/{id}         (readonly)
 *   mailsvc/list-connections    GET  /connections       (readonly)
 *   mailsvc/check-installation  GET  /tools/doctor      (readonly)
 *   mailsvc/send-test-email     POST /test-email
 *   mailsvc/resend-log          POST /logs/{id}/resend
 *
 * Each checks the capability of the REST API (mail_svc_rest_capability),
 * is shown in WordPress's REST listing (wp-abilities/v1/abilities) only to
 * users who hold it, and is run through wp-abilities/v1/abilities/{name}/run
 * (GET for the readonly ones, POST for the others) or from PHP.
 *
 * A call goes to the service like a forwarded request, with the bridge's
 * signed statement of WordPress's current user (X-Mailsvc-Wp-Session)
 * instead of credentials: inside PHP there is no nonce for a user logged
 * in by cookie, and an ability run from PHP has no request at all. The
 * statement is signed with the verdict key over the method, Host, path
 * with query and body, and holds for 60 seconds; the service loads the
 * user's roles and capabilities as for a cookie and checks the capability
 * again (adapters/wordpress/wp_session.go, docs/security.md). It is made
 * only here, after WordPress checked the capability, never for a request
 * the bridge forwards.
 */

if ( function_exists( 'wp_register_ability' ) ) {
	add_action( 'wp_abilities_api_categories_init', 'mailsvc_bridge_register_ability_category' );
	add_action( 'wp_abilities_api_init', 'mailsvc_bridge_register_abilities' );
	add_filter( 'wp_get_abilities_item_include', 'mailsvc_bridge_ability_listed', 10, 2 );
	add_filter( 'rest_request_before_callbacks', 'mailsvc_bridge_ability_hidden', 10, 3 );
}

/** The header of the signed statement of WordPress's current user. */
const MAILSVC_BRIDGE_SESSION_HEADER = 'X-Mailsvc-Wp-Session';

/**
 * Registers the category "mailsvc" (wp_abilities_api_categories_init).
 */
function mailsvc_bridge_register_ability_category() {
	if ( ! function_exists( 'wp_register_ability_category' ) ) {
		return;
	}
	wp_register_ability_category(
		'mailsvc',
		array(
			'label'       => 'Mail delivery',
			'description' => 'Abilities of the mailsvc mail delivery service: queue and delivery statistics, email logs, connections, installation checks, test emails and resending.',
		)
	);
}

/**
 * Whether the current user may use the abilities: the capability of the
 * service's REST API.
 *
 * @return bool
 */
function mailsvc_bridge_ability_permission() {
	return is_user_logged_in() && current_user_can( mailsvc_bridge_admin_capability() );
}

/**
 * Leaves the mailsvc abilities out of wp_get_abilities() (and so out of
 * WordPress's REST listing) for a user without the capability.
 *
 * @param bool       $include Whether the ability is listed.
 * @param WP_Ability $ability The ability.
 * @return bool
 */
function mailsvc_bridge_ability_listed( $include, $ability ) {
	if ( $include && is_object( $ability ) && 0 === strpos( (string) $ability->get_name(), 'mailsvc/' ) ) {
		return mailsvc_bridge_ability_permission();
	}
	return $include;
}

/**
 * Answers WordPress's REST route of one ability, for a mailsvc ability
 * and a user without the capability, as for an ability that does not
 * exist (the listing leaves them out too).
 *
 * @param mixed           $response Null, or the answer already decided.
 * @param array           $handler  The matched route's handler.
 * @param WP_REST_Request $request  The request.
 * @return mixed
 */
function mailsvc_bridge_ability_hidden( $response, $handler, $request ) {
	if ( null !== $response || ! is_object( $request ) ) {
		return $response;
	}
	if ( 1 === preg_match( '#^/wp-abilities/v1/abilities/mailsvc/[a-z0-9-]+$#i', (string) $request->get_route() ) && ! mailsvc_bridge_ability_permission() ) {
		return new WP_Error( 'rest_ability_not_found', 'Ability not found.', array( 'status' => 404 ) );
	}
	return $response;
}

/**
 * The signed statement that WordPress's current user makes this call:
 * "<user id>:<time>:<signature>" over the method, Host, request target
 * (path and query as sent) and body ('' when no user is logged in).
 *
 * @param string $method HTTP method.
 * @param string $host   The Host header sent.
 * @param string $target The request target sent.
 * @param string $body   The body sent.
 * @return string
 */
function mailsvc_bridge_session_statement( $method, $host, $target, $body ) {
	$user = get_current_user_id();
	if ( $user < 1 ) {
		return '';
	}
	$ts  = time();
	$msg = implode( "\n", array( 'mailsvc-wp-session', $user, $ts, strtoupper( $method ), strtolower( $host ), $target, hash( 'sha256', $body ) ) );
	return $user . ':' . $ts . ':' . hash_hmac( 'sha256', $msg, mailsvc_bridge_verdict_key() );
}

/**
 * Calls one of the service's REST routes for an ability, as WordPress's
 * current user.
 *
 * @param string     $method HTTP method.
 * @param string     $path   The route after mailsvc/v1/ (decoded).
 * @param array      $query  Query parameters.
 * @param array|null $body   The JSON body, or null for none.
 * @return array|WP_Error array( 'data' => decoded answer, 'headers' => lower-cased names => values ), or the service's error.
 */
function mailsvc_bridge_ability_call( $method, $path, $query = array(), $body = null ) {
	if ( ! mailsvc_bridge_ability_permission() ) {
		return new WP_Error( 'rest_forbidden', 'Sorry, you are not allowed to do that.', array( 'status' => rest_authorization_required_code() ) );
	}
	$encoded = mailsvc_bridge_encode_path( $path );
	if ( null === $encoded ) {
		return mailsvc_bridge_no_route();
	}
	$target = mailsvc_bridge_site_path() . '/wp-json/mailsvc/v1' . ( '' === $encoded ? '' : '/' . $encoded );
	$qs     = http_build_query( $query, '', '&', PHP_QUERY_RFC3986 );
	$json   = null === $body ? '' : (string) wp_json_encode( $body );
	// What mailsvc_bridge_forward() sends as the Host header and the
	// request line's target: the statement is signed over both.
	$host = isset( $_SERVER['HTTP_HOST'] ) ? (string) $_SERVER['HTTP_HOST'] : (string) wp_parse_url( home_url(), PHP_URL_HOST );
	$url  = wp_parse_url( mailsvc_bridge_service_url() );
	$base = is_array( $url ) && isset( $url['path'] ) ? rtrim( $url['path'], '/' ) : '';
	$sent = $base . $target . ( '' !== $qs ? '?' . $qs : '' );

	$fields = array(
		'X-Forwarded-Proto'           => is_ssl() ? 'https' : 'http',
		'X-Forwarded-For'             => isset( $_SERVER['REMOTE_ADDR'] ) ? (string) $_SERVER['REMOTE_ADDR'] : '',
		MAILSVC_BRIDGE_SESSION_HEADER => mailsvc_bridge_session_statement( $method, $host, $sent, $json ),
		'Content-Type'                => '' !== $json ? 'application/json' : '',
		'Accept'                      => 'application/json',
	);
	$response = mailsvc_bridge_forward( $method, $target, $qs, $fields, $json );
	if ( is_wp_error( $response ) ) {
		return $response;
	}
	$data = $response->get_data();
	if ( $data instanceof Mailsvc_Bridge_Body ) {
		$data = $data->jsonSerialize();
	}
	// Objects as arrays, as the ability schemas are checked.
	$data    = json_decode( (string) wp_json_encode( $data ), true );
	$headers = array_change_key_case( $response->get_headers(), CASE_LOWER );
	$status  = $response->get_status();
	if ( $status >= 400 ) {
		$code    = is_array( $data ) && ! empty( $data['code'] ) && is_string( $data['code'] ) ? $data['code'] : 'mailsvc_error';
		$message = is_array( $data ) && isset( $data['message'] ) && is_string( $data['message'] ) ? $data['message'] : 'The mail service answered with status ' . $status . '.';
		$extra   = is_array( $data ) && isset( $data['data'] ) && is_array( $data['data'] ) ? $data['data'] : array();
		return new WP_Error( $code, $message, array_merge( $extra, array( 'status' => $status ) ) );
	}
	return array(
		'data'    => $data,
		'headers' => $headers,
	);
}

/**
 * The input of an ability as an array (null and an empty input are none).
 *
 * @param mixed $input The ability's input.
 * @return array
 */
function mailsvc_bridge_ability_input( $input ) {
	return is_array( $input ) ? $input : array();
}

/**
 * The given keys of an input, leaving out those not given (or null).
 *
 * @param array $input The input.
 * @param array $keys  The keys to keep.
 * @return array
 */
function mailsvc_bridge_ability_pick( $input, $keys ) {
	$out = array();
	foreach ( $keys as $key ) {
		if ( isset( $input[ $key ] ) ) {
			$out[ $key ] = $input[ $key ];
		}
	}
	return $out;
}

/**
 * A list route's answer as an ability's output: the items under $name,
 * with the totals of X-WP-Total and X-WP-TotalPages.
 *
 * @param array|WP_Error $result mailsvc_bridge_ability_call()'s result.
 * @param string         $name   The key of the items.
 * @return array|WP_Error
 */
function mailsvc_bridge_ability_list( $result, $name ) {
	if ( is_wp_error( $result ) ) {
		return $result;
	}
	$headers = $result['headers'];
	return array(
		$name         => is_array( $result['data'] ) ? $result['data'] : array(),
		'total'       => isset( $headers['x-wp-total'] ) ? (int) $headers['x-wp-total'] : 0,
		'total_pages' => isset( $headers['x-wp-totalpages'] ) ? (int) $headers['x-wp-totalpages'] : 0,
		'capped'      => isset( $headers['x-mailsvc-total-capped'] ) && 'true' === strtolower( (string) $headers['x-mailsvc-total-capped'] ),
	);
}

/**
 * A route's decoded answer as an ability's output.
 *
 * @param array|WP_Error $result mailsvc_bridge_ability_call()'s result.
 * @return mixed
 */
function mailsvc_bridge_ability_data( $result ) {
	return is_wp_error( $result ) ? $result : $result['data'];
}

/**
 * The execute callback of mailsvc/get-stats.
 *
 * @param mixed $input The ability's input.
 * @return array|WP_Error
 */
function mailsvc_bridge_ability_get_stats( $input = null ) {
	$query = mailsvc_bridge_ability_pick( mailsvc_bridge_ability_input( $input ), array( 'range', 'days', 'from', 'to' ) );
	return mailsvc_bridge_ability_data( mailsvc_bridge_ability_call( 'GET', 'dashboard/stats', $query ) );
}

/**
 * The execute callback of mailsvc/search-logs.
 *
 * @param mixed $input The ability's input.
 * @return array|WP_Error
 */
function mailsvc_bridge_ability_search_logs( $input = null ) {
	$query = mailsvc_bridge_ability_pick( mailsvc_bridge_ability_input( $input ), array( 'search', 'status', 'date_from', 'date_to', 'page', 'per_page' ) );
	return mailsvc_bridge_ability_list( mailsvc_bridge_ability_call( 'GET', 'logs', $query ), 'logs' );
}

/**
 * The execute callback of mailsvc/get-log.
 *
 * @param mixed $input The ability's input.
 * @return array|WP_Error
 */
function mailsvc_bridge_ability_get_log( $input = null ) {
	$input = mailsvc_bridge_ability_input( $input );
	return mailsvc_bridge_ability_data( mailsvc_bridge_ability_call( 'GET', 'logs/' . (int) ( $input['id'] ?? 0 ) ) );
}

/**
 * The execute callback of mailsvc/list-connections.
 *
 * @param mixed $input The ability's input.
 * @return array|WP_Error
 */
function mailsvc_bridge_ability_list_connections( $input = null ) {
	$query = mailsvc_bridge_ability_pick( mailsvc_bridge_ability_input( $input ), array( 'page', 'per_page' ) );
	return mailsvc_bridge_ability_list( mailsvc_bridge_ability_call( 'GET', 'connections', $query ), 'connections' );
}

/**
 * The execute callback of mailsvc/check-installation (no input).
 *
 * @return array|WP_Error
 */
function mailsvc_bridge_ability_check_installation() {
	return mailsvc_bridge_ability_data( mailsvc_bridge_ability_call( 'GET', 'tools/doctor' ) );
}

/**
 * The execute callback of mailsvc/send-test-email: without a
 * connection_id, through the default connection of the settings.
 *
 * @param mixed $input The ability's input.
 * @return array|WP_Error
 */
function mailsvc_bridge_ability_send_test_email( $input = null ) {
	$body = mailsvc_bridge_ability_pick( mailsvc_bridge_ability_input( $input ), array( 'to', 'connection_id', 'subject' ) );
	if ( ! isset( $body['connection_id'] ) ) {
		$settings = mailsvc_bridge_ability_call( 'GET', 'settings' );
		if ( is_wp_error( $settings ) ) {
			return $settings;
		}
		$default = is_array( $settings['data'] ) && isset( $settings['data']['default_connection_id'] ) ? (int) $settings['data']['default_connection_id'] : 0;
		if ( $default < 1 ) {
			return new WP_Error(
				'validation_error',
				'One or more fields are invalid.',
				array(
					'status' => 422,
					'errors' => array( 'connection_id' => 'No default connection is set: name a connection.' ),
				)
			);
		}
		$body['connection_id'] = $default;
	}
	return mailsvc_bridge_ability_data( mailsvc_bridge_ability_call( 'POST', 'test-email', array(), $body ) );
}

/**
 * The execute callback of mailsvc/resend-log.
 *
 * @param mixed $input The ability's input.
 * @return array|WP_Error
 */
function mailsvc_bridge_ability_resend_log( $input = null ) {
	$input = mailsvc_bridge_ability_input( $input );
	$body  = mailsvc_bridge_ability_pick( $input, array( 'to', 'cc', 'bcc' ) );
	return mailsvc_bridge_ability_data( mailsvc_bridge_ability_call( 'POST', 'logs/' . (int) ( $input['id'] ?? 0 ) . '/resend', array(), (object) $body ) );
}

/**
 * The JSON schema of a page of a list.
 *
 * @return array
 */
function mailsvc_bridge_ability_page_properties() {
	return array(
		'page'     => array(
			'type'        => 'integer',
			'minimum'     => 1,
			'description' => 'The page, from 1.',
		),
		'per_page' => array(
			'type'        => 'integer',
			'minimum'     => 1,
			'maximum'     => 100,
			'description' => 'Items per page (default 10).',
		),
	);
}

/**
 * The output schema of a list: items under $name, and the totals.
 *
 * @param string $name  The key of the items.
 * @param array  $items The schema of one item.
 * @return array
 */
function mailsvc_bridge_ability_list_schema( $name, $items ) {
	return array(
		'type'       => 'object',
		'properties' => array(
			$name         => array(
				'type'  => 'array',
				'items' => $items,
			),
			'total'       => array(
				'type'        => 'integer',
				'description' => 'Items in all pages (X-WP-Total).',
			),
			'total_pages' => array(
				'type'        => 'integer',
				'description' => 'Pages (X-WP-TotalPages).',
			),
			'capped'      => array(
				'type'        => 'boolean',
				'description' => 'The count stopped: at least this many.',
			),
		),
		'required'   => array( $name, 'total', 'total_pages' ),
	);
}

/**
 * The schema of a period's counts in the dashboard's statistics.
 *
 * @return array
 */
function mailsvc_bridge_ability_period_schema() {
	return array(
		'type'       => 'object',
		'properties' => array(
			'from'         => array( 'type' => 'string' ),
			'to'           => array( 'type' => 'string' ),
			'delivered'    => array( 'type' => 'integer' ),
			'failed'       => array( 'type' => 'integer' ),
			'partial'      => array( 'type' => 'integer' ),
			'total'        => array( 'type' => 'integer' ),
			'success_rate' => array( 'type' => array( 'number', 'null' ) ),
		),
	);
}

/**
 * The annotations of a readonly ability.
 *
 * @return array
 */
function mailsvc_bridge_ability_readonly_meta() {
	return array(
		'annotations'  => array(
			'readonly'    => true,
			'destructive' => false,
			'idempotent'  => true,
		),
		'show_in_rest' => true,
	);
}

/**
 * The annotations of an ability that sends mail.
 *
 * @return array
 */
function mailsvc_bridge_ability_sending_meta() {
	return array(
		'annotations'  => array(
			'readonly'    => false,
			'destructive' => false,
			'idempotent'  => false,
		),
		'show_in_rest' => true,
	);
}

/**
 * Registers the abilities (wp_abilities_api_init).
 */
function mailsvc_bridge_register_abilities() {
	if ( ! function_exists( 'wp_register_ability' ) ) {
		return;
	}
	$permission = 'mailsvc_bridge_ability_permission';
	$log_item   = array(
		'type'       => 'object',
		'properties' => array(
			'id'         => array( 'type' => 'integer' ),
			'status'     => array(
				'type' => 'string',
				'enum' => array( 'queued', 'sending', 'delivered', 'failed', 'captured' ),
			),
			'message'    => array(
				'type'        => 'object',
				'description' => 'The message: to, cc, bcc, from, subject, headers; bodies only in a log\'s detail, as the log-body mode keeps them.',
			),
			'attempts'   => array( 'type' => 'integer' ),
			'last_error' => array( 'type' => 'string' ),
			'body_mode'  => array( 'type' => 'string' ),
		),
		'required'   => array( 'id', 'status' ),
	);
	$counts     = array( 'type' => 'integer' );

	wp_register_ability(
		'mailsvc/get-stats',
		array(
			'label'               => 'Get mail statistics',
			'description'         => 'Returns the queue (queued, sending, live) and the delivered and failed counts over a range, today, the last 7 and 30 days, per connection, with success rates, as the mail dashboard shows them. The range is the last 30 days unless range, days or from/to is given (at most one).',
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(
					'range' => array(
						'type' => 'string',
						'enum' => array( 'today', '7d', '30d', '90d', '365d' ),
					),
					'days'  => array(
						'type'    => 'integer',
						'minimum' => 1,
						'maximum' => 365,
					),
					'from'  => array(
						'type'        => 'string',
						'description' => 'A date YYYY-MM-DD (local midnight) or an RFC 3339 time.',
					),
					'to'    => array(
						'type'        => 'string',
						'description' => 'A date YYYY-MM-DD (that whole day) or an RFC 3339 time (excluded).',
					),
				),
				'additionalProperties' => false,
				'default'              => array(),
			),
			'output_schema'       => array(
				'type'       => 'object',
				'properties' => array(
					'totals'       => array(
						'type'       => 'object',
						'properties' => array(
							'queued'       => $counts,
							'sending'      => $counts,
							'delivered'    => $counts,
							'failed'       => $counts,
							'partial'      => $counts,
							'captured'     => $counts,
							'success_rate' => array( 'type' => array( 'number', 'null' ) ),
						),
						'required'   => array( 'queued', 'sending', 'delivered', 'failed' ),
					),
					'today'        => mailsvc_bridge_ability_period_schema(),
					'last_7_days'  => mailsvc_bridge_ability_period_schema(),
					'last_30_days' => mailsvc_bridge_ability_period_schema(),
					'range'        => mailsvc_bridge_ability_period_schema(),
					'connections'  => array(
						'type'  => 'array',
						'items' => array( 'type' => 'object' ),
					),
					'timezone'     => array( 'type' => 'string' ),
				),
				'required'   => array( 'totals' ),
			),
			'execute_callback'    => 'mailsvc_bridge_ability_get_stats',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/search-logs',
		array(
			'label'               => 'Search email logs',
			'description'         => 'Lists email logs, newest first, without their bodies: by recipient address, domain or subject words (search), status and date range, a page at a time.',
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array_merge(
					array(
						'search'    => array(
							'type'        => 'string',
							'maxLength'   => 200,
							'description' => 'An address, "@domain", "local@", or words of the subject.',
						),
						'status'    => array(
							'type' => 'string',
							'enum' => array( 'queued', 'sending', 'failed', 'delivered', 'captured' ),
						),
						'date_from' => array(
							'type'        => 'string',
							'description' => 'An RFC 3339 time or a date YYYY-MM-DD (included).',
						),
						'date_to'   => array(
							'type'        => 'string',
							'description' => 'An RFC 3339 time or a date YYYY-MM-DD (that whole day included).',
						),
					),
					mailsvc_bridge_ability_page_properties()
				),
				'additionalProperties' => false,
				'default'              => array(),
			),
			'output_schema'       => mailsvc_bridge_ability_list_schema( 'logs', $log_item ),
			'execute_callback'    => 'mailsvc_bridge_ability_search_logs',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/get-log',
		array(
			'label'               => 'Get an email log',
			'description'         => 'Returns one email log: the message with its headers and bodies as the log-body mode kept them (redacted, full or none), the attachments\' names, types and sizes, and the delivery attempts.',
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(
					'id' => array(
						'type'    => 'integer',
						'minimum' => 1,
					),
				),
				'required'             => array( 'id' ),
				'additionalProperties' => false,
			),
			'output_schema'       => array_merge(
				$log_item,
				array(
					'properties' => array_merge(
						$log_item['properties'],
						array(
							'attachments'      => array( 'type' => 'array' ),
							'attempts_history' => array( 'type' => 'array' ),
							'redacted_count'   => array( 'type' => 'integer' ),
							'attachments_kept' => array( 'type' => 'boolean' ),
						)
					),
				)
			),
			'execute_callback'    => 'mailsvc_bridge_ability_get_log',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/list-connections',
		array(
			'label'               => 'List mail connections',
			'description'         => 'Lists the mail connections (secrets masked) with their health: health_status (unknown, healthy, degraded, down), last_checked_at, last_error, and oauth_status for OAuth providers.',
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => mailsvc_bridge_ability_page_properties(),
				'additionalProperties' => false,
				'default'              => array(),
			),
			'output_schema'       => mailsvc_bridge_ability_list_schema(
				'connections',
				array(
					'type'       => 'object',
					'properties' => array(
						'id'            => array( 'type' => 'integer' ),
						'name'          => array( 'type' => 'string' ),
						'driver'        => array( 'type' => 'string' ),
						'is_active'     => array( 'type' => 'boolean' ),
						'health_status' => array( 'type' => 'string' ),
						'last_error'    => array( 'type' => array( 'string', 'null' ) ),
					),
					'required'   => array( 'id', 'name', 'driver' ),
				)
			),
			'execute_callback'    => 'mailsvc_bridge_ability_list_connections',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/check-installation',
		array(
			'label'               => 'Check the mail installation',
			'description'         => 'Runs the installation checks of mailsvc doctor (database, bridge, service, REST through the site, screens, ...): healthy is false when a critical check is an error; each check says what to do in fix.',
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(),
				'additionalProperties' => false,
				'default'              => array(),
			),
			'output_schema'       => array(
				'type'       => 'object',
				'properties' => array(
					'healthy' => array( 'type' => 'boolean' ),
					'checks'  => array(
						'type'  => 'array',
						'items' => array(
							'type'       => 'object',
							'properties' => array(
								'name'     => array( 'type' => 'string' ),
								'title'    => array( 'type' => 'string' ),
								'critical' => array( 'type' => 'boolean' ),
								'verdict'  => array(
									'type' => 'string',
									'enum' => array( 'ok', 'warning', 'error' ),
								),
								'message'  => array( 'type' => 'string' ),
								'fix'      => array( 'type' => 'string' ),
							),
						),
					),
				),
				'required'   => array( 'healthy', 'checks' ),
			),
			'execute_callback'    => 'mailsvc_bridge_ability_check_installation',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/send-test-email',
		array(
			'label'               => 'Send a test email',
			'description'         => 'Sends a test email at once through a connection (default: the default connection) and records a log. A provider that refuses it is success false with its reason, not an error.',
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(
					'to'            => array(
						'type'   => 'string',
						'format' => 'email',
					),
					'connection_id' => array(
						'type'    => 'integer',
						'minimum' => 1,
					),
					'subject'       => array( 'type' => 'string' ),
				),
				'required'             => array( 'to' ),
				'additionalProperties' => false,
			),
			'output_schema'       => array(
				'type'       => 'object',
				'properties' => array(
					'success'             => array( 'type' => 'boolean' ),
					'message'             => array( 'type' => 'string' ),
					'log_id'              => array( 'type' => 'integer' ),
					'status'              => array( 'type' => 'string' ),
					'connection_id'       => array( 'type' => 'integer' ),
					'to'                  => array( 'type' => 'string' ),
					'provider_message_id' => array( 'type' => 'string' ),
				),
				'required'   => array( 'success', 'message', 'log_id' ),
			),
			'execute_callback'    => 'mailsvc_bridge_ability_send_test_email',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_sending_meta(),
		)
	);

	$addresses = array(
		'type'  => 'array',
		'items' => array(
			'type'        => 'string',
			'description' => '"user@example.com" or "Name <user@example.com>".',
		),
	);
	wp_register_ability(
		'mailsvc/resend-log',
		array(
			'label'               => 'Resend an email log',
			'description'         => 'Puts a failed or delivered log back in the queue; with to, cc or bcc, sends it to those recipients instead as a new log (new_id). A log that no longer holds the whole message (redacted, no body, attachments not kept) cannot be resent.',
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(
					'id'  => array(
						'type'    => 'integer',
						'minimum' => 1,
					),
					'to'  => $addresses,
					'cc'  => $addresses,
					'bcc' => $addresses,
				),
				'required'             => array( 'id' ),
				'additionalProperties' => false,
			),
			'output_schema'       => array(
				'type'       => 'object',
				'properties' => array(
					'resent' => array( 'type' => 'boolean' ),
					'id'     => array( 'type' => 'integer' ),
					'new_id' => array( 'type' => 'integer' ),
				),
				'required'   => array( 'resent', 'id' ),
			),
			'execute_callback'    => 'mailsvc_bridge_ability_resend_log',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_sending_meta(),
		)
	);
}

/* ===== End of: abilities ===== */
