<?php
/**
 * The body of wp_mail(): WordPress's steps (filters, headers, addresses,
 * attachments), ending in one INSERT of a queued row into
 * {$wpdb->base_prefix}mailsvc_logs in the store's encoding, and the rows of
 * the addresses table that make the log searchable by recipient.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
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
	// Host hooks this message's outcome fires (host-hooks.php).
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
