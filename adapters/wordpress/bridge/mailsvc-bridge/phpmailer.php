<?php
/**
 * Mail that is not taken over: a message from a source the service
 * excludes is sent the way WordPress's own wp_mail() sends it (PHPMailer,
 * phpmailer_init), so the site's previous mail setup keeps handling it.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
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

	// PHPMailer's method that adds an address of each header.
	$adders = array(
		'to'       => 'addAddress',
		'cc'       => 'addCc',
		'bcc'      => 'addBcc',
		'reply_to' => 'addReplyTo',
	);
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
				$phpmailer->{ $adders[ $address_header ] }( $address, $recipient_name );
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
