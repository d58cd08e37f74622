<?php
/**
 * Whether the service answers, and the answer of a forwarded request
 * when it does not (503 with the number of queued messages for those who
 * may manage mail).
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
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
	$msg  = __( 'The mail service is not running. Messages sent meanwhile are queued and will go out when it starts.', 'mailsvc' );
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
		/* translators: 1: the number of queued messages, 2: the command that starts the service. */
		_n(
			'The mail service is not running. %1$d message is queued and will go out when it starts. Start it on the server: %2$s',
			'The mail service is not running. %1$d messages are queued and will go out when it starts. Start it on the server: %2$s',
			$queued,
			'mailsvc'
		),
		$queued,
		'systemctl start mailsvc'
	);
}

/**
 * Messages waiting in the queue: rows of {$base_prefix}mailsvc_logs whose
 * status is queued (0 when the table cannot be read).
 *
 * @return int
 */
function mailsvc_bridge_queued_count() {
	return (int) mailsvc_bridge_service_value( 'logs', "status = 'queued'", 'COUNT(*)' );
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
