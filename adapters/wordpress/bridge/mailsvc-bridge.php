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
 * as base64 so that they outlive the request's temporary files.
 *
 * It reads nothing but $wpdb and needs no configuration. The table prefix is
 * $wpdb->base_prefix, the $table_prefix of wp-config.php that the service
 * reads too (the same as $wpdb->prefix except on a multisite network).
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
	 * @return bool Whether the email was queued.
	 */
	function wp_mail( $to, $subject, $message, $headers = '', $attachments = array() ) {
		return mailsvc_bridge_queue( $to, $subject, $message, $headers, $attachments );
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
 * Names the plugin or theme that called wp_mail(): the first stack frame
 * in a file under the plugin, must-use plugin or theme directory.
 *
 * @return string A plugin slug, "theme:<slug>", or "wordpress".
 */
function mailsvc_bridge_source() {
	$roots = array(
		array( WP_PLUGIN_DIR, '' ),
		array( WPMU_PLUGIN_DIR, '' ),
		array( get_theme_root(), 'theme:' ),
	);
	$dirs  = array();
	foreach ( $roots as $root ) {
		foreach ( array_unique( array( $root[0], (string) realpath( $root[0] ) ) ) as $dir ) {
			if ( '' !== $dir ) {
				$dirs[] = array( trailingslashit( wp_normalize_path( $dir ) ), $root[1] );
			}
		}
	}
	$self = wp_normalize_path( __FILE__ );
	foreach ( debug_backtrace( DEBUG_BACKTRACE_IGNORE_ARGS ) as $frame ) {
		if ( empty( $frame['file'] ) ) {
			continue;
		}
		$file = wp_normalize_path( $frame['file'] );
		if ( $file === $self ) {
			continue;
		}
		foreach ( $dirs as $dir ) {
			if ( 0 === strpos( $file, $dir[0] ) ) {
				$rest = substr( $file, strlen( $dir[0] ) );
				$slug = strtok( $rest, '/' );
				if ( $slug === $rest ) {
					$slug = preg_replace( '/\.php$/i', '', $slug );
				}
				return $dir[1] . $slug;
			}
		}
	}
	return 'wordpress';
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
 * Reads one attachment into the form the queue keeps.
 *
 * @param string $path     Path of the file.
 * @param string $filename Name to give it; the file's base name when empty.
 * @return array|null The attachment, or null when the file cannot be read.
 */
function mailsvc_bridge_attachment( $path, $filename ) {
	$path = (string) $path;
	if ( '' === trim( $path ) || ! @is_file( $path ) || ! @is_readable( $path ) ) { // phpcs:ignore WordPress.PHP.NoSilencedErrors
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
 * The body of wp_mail(): WordPress's steps, ending in one INSERT into the
 * queue instead of an SMTP conversation.
 *
 * @param string|string[] $to          Recipients.
 * @param string          $subject     Subject.
 * @param string          $message     Body.
 * @param string|string[] $headers     Headers.
 * @param string|string[] $attachments Attachments.
 * @return bool Whether the message was queued.
 */
function mailsvc_bridge_queue( $to, $subject, $message, $headers = '', $attachments = array() ) {
	global $wpdb;

	/** This filter is documented in wp-includes/pluggable.php */
	$atts = apply_filters( 'wp_mail', compact( 'to', 'subject', 'message', 'headers', 'attachments' ) );

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

	// Headers, parsed exactly as WordPress parses them.
	$cc       = array();
	$bcc      = array();
	$reply_to = array();
	if ( empty( $headers ) ) {
		$headers = array();
	} else {
		if ( ! is_array( $headers ) ) {
			$tempheaders = explode( "\n", str_replace( "\r\n", "\n", $headers ) );
		} else {
			$tempheaders = $headers;
		}
		$headers = array();
		if ( ! empty( $tempheaders ) ) {
			foreach ( (array) $tempheaders as $header ) {
				if ( strpos( $header, ':' ) === false ) {
					if ( false !== stripos( $header, 'boundary=' ) ) {
						$parts    = preg_split( '/boundary=/i', trim( $header ) );
						$boundary = trim( str_replace( array( "'", '"' ), '', $parts[1] ) );
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
								$from_name = substr( $content, 0, $bracket_pos );
								$from_name = str_replace( '"', '', $from_name );
								$from_name = trim( $from_name );
							}
							$from_email = substr( $content, $bracket_pos + 1 );
							$from_email = str_replace( '>', '', $from_email );
							$from_email = trim( $from_email );
						} elseif ( '' !== trim( $content ) ) {
							$from_email = trim( $content );
						}
						break;
					case 'content-type':
						if ( strpos( $content, ';' ) !== false ) {
							list( $type, $charset_content ) = explode( ';', $content );
							$content_type                   = trim( $type );
							if ( false !== stripos( $charset_content, 'charset=' ) ) {
								$charset = trim( str_replace( array( 'charset=', '"' ), '', $charset_content ) );
							} elseif ( false !== stripos( $charset_content, 'boundary=' ) ) {
								$boundary = trim( str_replace( array( 'BOUNDARY=', 'boundary=', '"' ), '', $charset_content ) );
								$charset  = '';
							}
						} elseif ( '' !== trim( $content ) ) {
							$content_type = trim( $content );
						}
						break;
					case 'cc':
						$cc = array_merge( (array) $cc, explode( ',', $content ) );
						break;
					case 'bcc':
						$bcc = array_merge( (array) $bcc, explode( ',', $content ) );
						break;
					case 'reply-to':
						$reply_to = array_merge( (array) $reply_to, explode( ',', $content ) );
						break;
					default:
						$headers[ trim( $name ) ] = trim( $content );
						break;
				}
			}
		}
	}

	$mail_data = compact( 'to', 'subject', 'message', 'headers', 'attachments' );

	// From, with WordPress's defaults.
	if ( ! isset( $from_name ) ) {
		$from_name = 'WordPress';
	}
	if ( ! isset( $from_email ) ) {
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
	$from_email = trim( (string) $from_email );
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
	if ( ! isset( $content_type ) ) {
		$content_type = 'text/plain';
	}
	/** This filter is documented in wp-includes/pluggable.php */
	$content_type = apply_filters( 'wp_mail_content_type', $content_type );
	if ( ! isset( $charset ) ) {
		$charset = get_bloginfo( 'charset' );
	}
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
	$json = wp_json_encode( $stored, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
	if ( false === $json ) {
		return mailsvc_bridge_fail( 'The message could not be encoded for the mailsvc queue.', $mail_data );
	}

	$now = DateTime::createFromFormat( 'U.u', sprintf( '%.6F', microtime( true ) ), new DateTimeZone( 'UTC' ) );
	$now = $now ? $now->format( 'Y-m-d H:i:s.u' ) : gmdate( 'Y-m-d H:i:s' );
	$row = array(
		'status'              => 'queued',
		'source'              => mailsvc_bridge_source(),
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

	// The service's tables carry the site's $table_prefix: on a multisite
	// network that is the base prefix, shared by every site.
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_logs';
	$suppress = $wpdb->suppress_errors( true );
	$inserted = $wpdb->insert( $table, $row, $formats );
	$wpdb->suppress_errors( $suppress );
	if ( false === $inserted || 1 !== (int) $inserted ) {
		$error = '' !== (string) $wpdb->last_error ? $wpdb->last_error : 'The message could not be queued: the mailsvc queue table ' . $table . ' is not usable.';
		return mailsvc_bridge_fail( 'mailsvc: ' . $error, $mail_data );
	}

	/** This action is documented in wp-includes/pluggable.php */
	do_action( 'wp_mail_succeeded', $mail_data );
	return true;
}
