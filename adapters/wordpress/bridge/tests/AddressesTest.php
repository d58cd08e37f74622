<?php
/**
 * Address and header parsing: mailsvc-bridge/addresses.php.
 *
 * @package mailsvc
 */

use PHPUnit\Framework\TestCase;

/**
 * Splitting addresses and parsing wp_mail()'s headers as WordPress does.
 */
final class AddressesTest extends TestCase {

	/**
	 * Addresses as callers write them, and what the queue keeps.
	 *
	 * @return array[]
	 */
	public function addresses() {
		return array(
			'plain'                 => array( 'user@example.com', array( 'email' => 'user@example.com' ) ),
			'padded'                => array( '  user@example.com ', array( 'email' => 'user@example.com' ) ),
			'with a name'           => array( 'Jane Doe <jane@example.com>', array( 'email' => 'jane@example.com', 'name' => 'Jane Doe' ) ),
			'quoted name'           => array( '"Doe, Jane" <jane@example.com>', array( 'email' => 'jane@example.com', 'name' => 'Doe, Jane' ) ),
			// WordPress's pattern does not cross a line break: the name is what follows it.
			'line break in name'    => array( "Jane\r\n Doe <jane@example.com>", array( 'email' => 'jane@example.com', 'name' => 'Doe' ) ),
			'empty name'            => array( '<jane@example.com>', array( 'email' => 'jane@example.com' ) ),
			'no domain'             => array( 'jane', null ),
			'name with bad address' => array( 'Jane <not an address>', null ),
			'empty'                 => array( '', null ),
		);
	}

	/**
	 * One address.
	 *
	 * @dataProvider addresses
	 * @param string     $in   Address.
	 * @param array|null $want What the queue keeps.
	 */
	public function test_address( $in, $want ) {
		$this->assertSame( $want, mailsvc_bridge_address( $in ) );
	}

	/**
	 * A list skips what is not an address, and renders back with quoted names.
	 */
	public function test_addresses_and_rendering() {
		$list = mailsvc_bridge_addresses( array( 'a@example.com', 'nonsense', 'Say "hi" \\o/ <b@example.com>' ) );
		$this->assertSame(
			array(
				array( 'email' => 'a@example.com' ),
				array(
					'email' => 'b@example.com',
					'name'  => 'Say "hi" \\o/',
				),
			),
			$list
		);
		$this->assertSame( array( 'a@example.com', '"Say \\"hi\\" \\\\o/" <b@example.com>' ), mailsvc_bridge_render_addresses( $list ) );
	}

	/**
	 * Headers as wp_mail() takes them, and what they parse into.
	 *
	 * @return array[]
	 */
	public function headers() {
		$empty = array(
			'headers'  => array(),
			'cc'       => array(),
			'bcc'      => array(),
			'reply_to' => array(),
		);
		return array(
			'none'                      => array( '', $empty ),
			'from with a name'          => array(
				"From: \"Shop\" <shop@example.com>\r\nX-Tag: a: b",
				array(
					'headers'    => array( 'X-Tag' => 'a: b' ),
					'from_name'  => 'Shop',
					'from_email' => 'shop@example.com',
				) + $empty,
			),
			'from an address alone'     => array( array( 'From: shop@example.com' ), array( 'from_email' => 'shop@example.com' ) + $empty ),
			'lists accumulate'          => array(
				array( 'Cc: a@example.com, b@example.com', 'cc: c@example.com', 'Bcc: d@example.com', 'Reply-To: e@example.com' ),
				array(
					'cc'       => array( 'a@example.com', ' b@example.com', 'c@example.com' ),
					'bcc'      => array( 'd@example.com' ),
					'reply_to' => array( 'e@example.com' ),
				) + $empty,
			),
			'content type with charset' => array(
				'Content-Type: text/html; charset="ISO-8859-1"',
				array(
					'content_type' => 'text/html',
					'charset'      => 'ISO-8859-1',
				) + $empty,
			),
			'content type with boundary' => array(
				"Content-Type: multipart/alternative; boundary=\"b1\"\n",
				array(
					'content_type' => 'multipart/alternative',
					'boundary'     => 'b1',
					'charset'      => '',
				) + $empty,
			),
			'boundary on its own line'  => array( array( 'Content-Type: multipart/mixed', ' boundary="b2"' ), array( 'content_type' => 'multipart/mixed', 'boundary' => 'b2' ) + $empty ),
			'the controls mark dropped' => array( "X-Mailsvc-Control: password_change\nX-Other: 1", array( 'headers' => array( 'X-Other' => '1' ) ) + $empty ),
			'a line without a colon'    => array( "garbage\nX-Other: 1", array( 'headers' => array( 'X-Other' => '1' ) ) + $empty ),
		);
	}

	/**
	 * Header parsing.
	 *
	 * @dataProvider headers
	 * @param string|string[] $in   Headers.
	 * @param array           $want Parsed.
	 */
	public function test_parse_headers( $in, $want ) {
		$got = mailsvc_bridge_parse_headers( $in );
		ksort( $got );
		ksort( $want );
		$this->assertSame( $want, $got );
	}

	/**
	 * A multipart body given with its boundary splits into its text and
	 * HTML parts, decoded and in UTF-8.
	 */
	public function test_multipart() {
		$body = "--b1\r\nContent-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nCaf=E9\r\n"
			. "--b1\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: base64\r\n\r\n" . base64_encode( '<p>Café</p>' ) . "\r\n--b1--\r\n";
		$this->assertSame(
			array(
				'text' => 'Café',
				'html' => '<p>Café</p>',
			),
			mailsvc_bridge_multipart( $body, 'b1' )
		);
	}

	/**
	 * The default sender is WordPress's, through its filters.
	 */
	public function test_from_passes_the_filters() {
		Mailsvc_Test_Hooks::reset();
		$this->assertSame( array( 'a@example.com', 'A' ), mailsvc_bridge_from( mailsvc_bridge_parse_headers( 'From: A <a@example.com>' ) ) );
		Mailsvc_Test_Hooks::$filters['wp_mail_from']      = function ( $email ) {
			return 'filtered+' . $email;
		};
		Mailsvc_Test_Hooks::$filters['wp_mail_from_name'] = function ( $name ) {
			return strtoupper( $name );
		};
		$this->assertSame( array( 'filtered+a@example.com', 'SHOP' ), mailsvc_bridge_from( mailsvc_bridge_parse_headers( 'From: Shop <a@example.com>' ) ) );
		Mailsvc_Test_Hooks::reset();
	}
}
