<?php
/**
 * The screens through WordPress: mailsvc-bridge/v1/screens/... forwarded
 * to the service's /admin/ files, with the signed base URL under which the
 * service writes the page's asset URLs.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
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
