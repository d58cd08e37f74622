<?php
/**
 * Abilities (WordPress 6.9 and later): the service's REST routes as
 * abilities of the Abilities API, called with the bridge's signed
 * statement of WordPress's current user; their callbacks.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

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
			'label'       => __( 'Mail delivery', 'mailsvc' ),
			'description' => __( 'Abilities of the mailsvc mail delivery service: queue and delivery statistics, email logs, connections, installation checks, test emails and resending.', 'mailsvc' ),
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
		return new WP_Error( 'rest_ability_not_found', __( 'Ability not found.', 'mailsvc' ), array( 'status' => 404 ) );
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
		return new WP_Error( 'rest_forbidden', __( 'Sorry, you are not allowed to do that.', 'mailsvc' ), array( 'status' => rest_authorization_required_code() ) );
	}
	$encoded = mailsvc_bridge_forwardable_path( $path );
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
		$message = is_array( $data ) && isset( $data['message'] ) && is_string( $data['message'] ) ? $data['message'] : sprintf(
			/* translators: %d: an HTTP status code. */
			__( 'The mail service answered with status %d.', 'mailsvc' ),
			$status
		);
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
				__( 'One or more fields are invalid.', 'mailsvc' ),
				array(
					'status' => 422,
					'errors' => array( 'connection_id' => __( 'No default connection is set: name a connection.', 'mailsvc' ) ),
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
