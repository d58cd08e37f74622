<?php
/**
 * The forwarding's request building: mailsvc-bridge/forwarding.php.
 *
 * @package mailsvc
 */

use PHPUnit\Framework\TestCase;

/**
 * A REST request as the forwarding reads it: query parameters and headers.
 */
final class Mailsvc_Test_Request {
	/**
	 * Query parameters.
	 *
	 * @var array
	 */
	private $query;
	/**
	 * Header name (lower case, underscores) => value.
	 *
	 * @var array
	 */
	private $headers;

	/**
	 * A request.
	 *
	 * @param array $query   Query parameters.
	 * @param array $headers Headers.
	 */
	public function __construct( $query, $headers = array() ) {
		$this->query   = $query;
		$this->headers = $headers;
	}

	/**
	 * As WP_REST_Request::get_query_params().
	 *
	 * @return array
	 */
	public function get_query_params() {
		return $this->query;
	}

	/**
	 * As WP_REST_Request::get_header().
	 *
	 * @param string $name Header name.
	 * @return string|null
	 */
	public function get_header( $name ) {
		return isset( $this->headers[ $name ] ) ? $this->headers[ $name ] : null;
	}
}

/**
 * What the bridge sends the service for a forwarded request.
 */
final class ForwardingTest extends TestCase {

	/**
	 * Forwarded requests and the bytes sent.
	 *
	 * @return array[]
	 */
	public function requests() {
		return array(
			'get without a body'              => array(
				array( 'get', '/wp-json/mailsvc/v1/logs', 'page=2', 'site.test', array( 'Cookie' => 'a=b', 'X-WP-Nonce' => '' ), '' ),
				"GET /wp-json/mailsvc/v1/logs?page=2 HTTP/1.0\r\nHost: site.test\r\nConnection: close\r\nCookie: a=b\r\n\r\n",
			),
			'post with an empty body'         => array(
				array( 'POST', '/wp-json/mailsvc/v1/test-email', '', 'site.test', array(), '' ),
				"POST /wp-json/mailsvc/v1/test-email HTTP/1.0\r\nHost: site.test\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
			),
			'put with a body'                 => array(
				array( 'PUT', '/base/wp-json/mailsvc/v1/settings', '', 'site.test:8080', array( 'Content-Type' => 'application/json' ), '{"a":1}' ),
				"PUT /base/wp-json/mailsvc/v1/settings HTTP/1.0\r\nHost: site.test:8080\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
			),
			'line breaks cannot add a header' => array(
				array( 'GET', '/admin/', '', "site.test\r\nX-Evil: 1", array( 'User-Agent' => "ua\r\nX-Mailsvc-Wp-Verdict: forged" ), '' ),
				"GET /admin/ HTTP/1.0\r\nHost: site.testX-Evil: 1\r\nConnection: close\r\nUser-Agent: uaX-Mailsvc-Wp-Verdict: forged\r\n\r\n",
			),
		);
	}

	/**
	 * The request's bytes.
	 *
	 * @dataProvider requests
	 * @param array  $args mailsvc_bridge_request()'s arguments.
	 * @param string $want The request.
	 */
	public function test_request( $args, $want ) {
		$this->assertSame( $want, mailsvc_bridge_request( ...$args ) );
	}

	/**
	 * A route's path is encoded segment by segment; dot segments are no route.
	 */
	public function test_encode_path() {
		$this->assertSame( 'logs/12/resend', mailsvc_bridge_encode_path( 'logs/12/resend' ) );
		$this->assertSame( 'a%20b/%3Fx%3D1', mailsvc_bridge_encode_path( 'a b/?x=1' ) );
		$this->assertSame( '', mailsvc_bridge_encode_path( '' ) );
		$this->assertNull( mailsvc_bridge_encode_path( 'logs/../../healthz' ) );
		$this->assertNull( mailsvc_bridge_encode_path( './x' ) );
	}

	/**
	 * Paths the forwarding sends on, encoded, and the ones it refuses.
	 *
	 * @return array[]
	 */
	public function forwardable_paths() {
		return array(
			'a route'                  => array( 'logs/12/resend', 'logs/12/resend' ),
			'the namespace index'      => array( '', '' ),
			'the fleet view'           => array( 'fleet/sites', null ),
			'the fleet root'           => array( 'fleet', null ),
			'the fleet in capitals'    => array( 'Fleet/sites', null ),
			'the fleet after a slash'  => array( '/fleet/sites', null ),
			'a dot segment'            => array( 'logs/../fleet/sites', null ),
			'a route that says fleet'  => array( 'logs/fleet', 'logs/fleet' ),
		);
	}

	/**
	 * The operator's fleet/ routes are never forwarded.
	 *
	 * @dataProvider forwardable_paths
	 * @param string      $path The path after the namespace.
	 * @param string|null $want The encoded path, or null for no route.
	 */
	public function test_forwardable_path( $path, $want ) {
		$this->assertSame( $want, mailsvc_bridge_forwardable_path( $path ) );
	}

	/**
	 * The site key is the one the service computes (wordpress.SiteKey):
	 * hash_hmac( 'sha256', 'mailsvc-site', wp_salt( 'auth' ) ).
	 */
	public function test_site_key_for() {
		$this->assertSame( '3e7f1d874b2e5042bfc721adb20ec1b4d8b3626ba65edba7ae125b4ce4d3118d', mailsvc_bridge_site_key_for( "auth-key-a'\\auth-salt-a" ) );
		$this->assertSame( '560c0f3fc12cda0a9b9bb656ecc9e4bb5bff21a7b40345c45cdb209bbd90b2a6', mailsvc_bridge_site_key_for( 'x' ) );
		$this->assertNotSame( mailsvc_bridge_site_key_for( 'x' ), mailsvc_bridge_site_key_for( 'y' ) );
	}

	/**
	 * The query goes as the caller wrote it, without rest_route; an
	 * internal request's own parameters are encoded.
	 */
	public function test_forward_query() {
		$saved = array( $_GET, $_SERVER['QUERY_STRING'] ?? null );

		$_GET                    = array(
			'rest_route' => '/mailsvc/v1/logs',
			'search'     => 'a b',
			'tags'       => array( 'x', 'y' ),
		);
		$_SERVER['QUERY_STRING'] = 'rest_route=%2Fmailsvc%2Fv1%2Flogs&search=a+b&tags[]=x&tags[]=y&&';
		$this->assertSame( 'search=a+b&tags[]=x&tags[]=y', mailsvc_bridge_forward_query( new Mailsvc_Test_Request( $_GET ) ) );

		$internal = new Mailsvc_Test_Request(
			array(
				'rest_route' => '/x',
				'per_page'   => 5,
				'q'          => 'a b',
			)
		);
		$this->assertSame( 'per_page=5&q=a%20b', mailsvc_bridge_forward_query( $internal ) );

		list( $_GET, $_SERVER['QUERY_STRING'] ) = $saved;
	}

	/**
	 * X-Forwarded-For: the caller's list, then the caller.
	 */
	public function test_forwarded_for() {
		$saved                  = $_SERVER['REMOTE_ADDR'] ?? null;
		$_SERVER['REMOTE_ADDR'] = '192.0.2.7';
		$this->assertSame( '192.0.2.7', mailsvc_bridge_forwarded_for( new Mailsvc_Test_Request( array() ) ) );
		$this->assertSame( '198.51.100.1, 192.0.2.7', mailsvc_bridge_forwarded_for( new Mailsvc_Test_Request( array(), array( 'x_forwarded_for' => ' 198.51.100.1 ' ) ) ) );
		$_SERVER['REMOTE_ADDR'] = $saved;
	}

	/**
	 * The service's address: the environment's MAILSVC_SERVICE_URL, else
	 * the default, without a trailing slash.
	 */
	public function test_service_url() {
		$saved = getenv( 'MAILSVC_SERVICE_URL' );
		putenv( 'MAILSVC_SERVICE_URL' );
		$this->assertSame( 'http://127.0.0.1:8025', mailsvc_bridge_service_url() );
		putenv( 'MAILSVC_SERVICE_URL=http://10.0.0.2:9000/mail/' );
		$this->assertSame( 'http://10.0.0.2:9000/mail', mailsvc_bridge_service_url() );
		putenv( false === $saved ? 'MAILSVC_SERVICE_URL' : 'MAILSVC_SERVICE_URL=' . $saved );
	}
}
