<?php
/**
 * Attachments and embeds: which paths may be opened, each file copied
 * into the queued message as base64 (so it outlives the request's
 * temporary files), and the files of wp_mail()'s sixth argument
 * (WordPress 6.9's $embeds) as inline attachments with their Content-IDs.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
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
