<?php
/**
 * The answer of a forwarded request relayed to the client as it arrives:
 * status, headers and the service's socket copied to the output, so an
 * export of any size never sits in PHP's memory; and the caching of the
 * screens' files.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
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
