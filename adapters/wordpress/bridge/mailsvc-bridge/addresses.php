<?php
/**
 * Addresses and headers: splitting "Name <user@example.com>" and lists of
 * addresses as WordPress's wp_mail() does, the charset and multipart
 * handling of a body, the header parsing of wp_mail()'s $headers, and the
 * From address and name with WordPress's filters.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
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
				// The email controls' mark (email-controls.php): never sent.
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
 * from_name settings, see mailsvc_bridge_mail_settings()), each '' when
 * not set or not readable.
 *
 * @return string[] Array( from email, from name ).
 */
function mailsvc_bridge_site_sender() {
	$settings = mailsvc_bridge_mail_settings();
	return array( $settings['from_email'], $settings['from_name'] );
}
