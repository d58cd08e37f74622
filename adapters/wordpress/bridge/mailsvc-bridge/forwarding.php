<?php
/**
 * The REST API through WordPress: the service's namespace mailsvc/v1
 * registered in WordPress's REST API and every request under it forwarded
 * to the service over loopback, with the caller's own credentials and
 * WordPress's verdict on an application password.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/*
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
 * Every forwarded request carries the site key (X-Mailsvc-Site): when one
 * service serves several sites (a fleet), it says which site the request
 * is for. Only this site's salts give it; the caller's own headers are
 * never forwarded but for the few listed, so a caller cannot name another
 * site. The operator's fleet/ routes are never forwarded.
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
/** The header that names the site to a service that serves several. */
const MAILSVC_BRIDGE_SITE_HEADER = 'X-Mailsvc-Site';
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
 * The encoded path after mailsvc/v1/ to forward, or null for a path the
 * bridge does not forward: one that could leave the namespace, and the
 * operator's view of a fleet (fleet/...), which is not the site's.
 *
 * @param string $path The path after the namespace, decoded.
 * @return string|null
 */
function mailsvc_bridge_forwardable_path( $path ) {
	$first = strtolower( explode( '/', ltrim( $path, '/' ) )[0] );
	if ( 'fleet' === $first ) {
		return null;
	}
	return mailsvc_bridge_encode_path( $path );
}

/**
 * The answer to a path the bridge does not forward.
 *
 * @return WP_Error
 */
function mailsvc_bridge_no_route() {
	return new WP_Error( 'rest_no_route', __( 'No route was found matching the URL and request method.', 'mailsvc' ), array( 'status' => 404 ) );
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
	$encoded = mailsvc_bridge_forwardable_path( $path );
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
 * The site key for a wp_salt( 'auth' ) value.
 *
 * @param string $salt The salt.
 * @return string Hex key.
 */
function mailsvc_bridge_site_key_for( $salt ) {
	return hash_hmac( 'sha256', 'mailsvc-site', $salt );
}

/**
 * The site key sent in MAILSVC_BRIDGE_SITE_HEADER: derived from
 * wp_salt( 'auth' ), which the service computes from the same
 * wp-config.php.
 *
 * @return string Hex key.
 */
function mailsvc_bridge_site_key() {
	return mailsvc_bridge_site_key_for( wp_salt( 'auth' ) );
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
 * The HTTP/1.0 request a forwarded request is sent as: the request line,
 * Host, Connection: close, each non-empty field with line breaks taken
 * out (a value cannot add a header), Content-Length when there is a body
 * or the method carries one, the blank line and the body.
 *
 * @param string $method HTTP method.
 * @param string $path   Path on the service, from its root.
 * @param string $query  Query string without "?", or ''.
 * @param string $host   The Host header.
 * @param array  $fields Header name => value.
 * @param string $body   Request body.
 * @return string
 */
function mailsvc_bridge_request( $method, $path, $query, $host, $fields, $body ) {
	$head = strtoupper( $method ) . ' ' . $path . ( '' !== $query ? '?' . $query : '' ) . " HTTP/1.0\r\n"
		. 'Host: ' . str_replace( array( "\r", "\n" ), '', $host ) . "\r\nConnection: close\r\n";
	foreach ( $fields as $name => $value ) {
		$value = str_replace( array( "\r", "\n" ), '', (string) $value );
		if ( '' !== $value ) {
			$head .= $name . ': ' . $value . "\r\n";
		}
	}
	if ( '' !== $body || in_array( strtoupper( $method ), array( 'POST', 'PUT', 'PATCH' ), true ) ) {
		$head .= 'Content-Length: ' . strlen( $body ) . "\r\n";
	}
	return $head . "\r\n" . $body;
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
	$host   = isset( $_SERVER['HTTP_HOST'] ) ? (string) $_SERVER['HTTP_HOST'] : (string) wp_parse_url( home_url(), PHP_URL_HOST );
	$status = 0;
	// Set here, after the caller's fields: nothing else names the site.
	$fields[ MAILSVC_BRIDGE_SITE_HEADER ] = mailsvc_bridge_site_key();
	if ( false !== fwrite( $fp, mailsvc_bridge_request( $method, $base . $target, $query, $host, $fields, $body ) ) ) { // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fwrite -- a socket.
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
