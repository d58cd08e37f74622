<?php
/**
 * Attachments and embeds copied into the queued message:
 * mailsvc-bridge/attachments.php.
 *
 * @package mailsvc
 */

use PHPUnit\Framework\TestCase;

/**
 * What the queue keeps of wp_mail()'s attachments and embeds.
 */
final class AttachmentsTest extends TestCase {

	/**
	 * A folder of files for one test.
	 *
	 * @var string
	 */
	private $dir;

	/**
	 * Makes the folder with a text file and a file of an unknown type.
	 */
	protected function setUp(): void {
		$this->dir = sys_get_temp_dir() . '/mailsvc-bridge-test-' . bin2hex( random_bytes( 6 ) );
		mkdir( $this->dir );
		file_put_contents( $this->dir . '/note.txt', "hello\n" );
		file_put_contents( $this->dir . '/logo.png', "\x89PNG\r\n\x1a\n" );
		file_put_contents( $this->dir . '/blob', "\x00\x01\x02" );
		Mailsvc_Test_Hooks::reset();
	}

	/**
	 * Removes the folder.
	 */
	protected function tearDown(): void {
		array_map( 'unlink', glob( $this->dir . '/*' ) );
		rmdir( $this->dir );
		Mailsvc_Test_Hooks::reset();
	}

	/**
	 * Paths that may be opened, and stream wrappers that may not.
	 *
	 * @return array[]
	 */
	public function paths() {
		return array(
			'absolute'      => array( '/tmp/a.txt', true ),
			'relative'      => array( 'uploads/a.txt', true ),
			'windows drive' => array( 'C:\\a.txt', true ),
			'phar'          => array( 'phar:///tmp/a.phar/x', false ),
			'http'          => array( 'http://example.com/a.txt', false ),
			'php'           => array( 'php://filter/resource=/etc/passwd', false ),
			'upper case'    => array( 'FILE:///etc/passwd', false ),
			'plus and dot'  => array( 'a+b.c-d://x', false ),
		);
	}

	/**
	 * Stream wrappers are refused.
	 *
	 * @dataProvider paths
	 * @param string $path Path.
	 * @param bool   $ok   Whether it may be opened.
	 */
	public function test_permitted_path( $path, $ok ) {
		$this->assertSame( $ok, mailsvc_bridge_permitted_path( $path ) );
		$this->assertSame( $ok ? null : $path, mailsvc_bridge_refused_attachment( array( '/tmp/fine.txt', $path ) ) );
	}

	/**
	 * A file is copied as base64 with its type from its name, its name
	 * given or its own; what cannot be read is left out.
	 */
	public function test_attachment() {
		$this->assertSame(
			array(
				'filename'     => 'note.txt',
				'content_type' => 'text/plain',
				'data'         => base64_encode( "hello\n" ),
			),
			mailsvc_bridge_attachment( $this->dir . '/note.txt', '' )
		);
		$renamed = mailsvc_bridge_attachment( $this->dir . '/note.txt', 'report.pdf' );
		$this->assertSame( array( 'report.pdf', 'application/pdf' ), array( $renamed['filename'], $renamed['content_type'] ) );
		$blob = mailsvc_bridge_attachment( $this->dir . '/blob', '' );
		$this->assertSame( base64_encode( "\x00\x01\x02" ), $blob['data'] );
		$this->assertNotSame( '', $blob['content_type'] );
		$this->assertNull( mailsvc_bridge_attachment( $this->dir . '/missing.txt', '' ) );
		$this->assertNull( mailsvc_bridge_attachment( $this->dir, '' ), 'a folder' );
		$this->assertNull( mailsvc_bridge_attachment( '  ', '' ) );
		$this->assertNull( mailsvc_bridge_attachment( 'file://' . $this->dir . '/note.txt', '' ), 'a stream wrapper' );
	}

	/**
	 * The embeds' arguments: WordPress's defaults with the key as the
	 * Content-ID, then the wp_mail_embed_args filter.
	 */
	public function test_embed_args() {
		$got = mailsvc_bridge_embed_args( array( 'logo' => $this->dir . '/logo.png', $this->dir . '/note.txt' ) );
		$this->assertSame(
			array(
				'path'        => $this->dir . '/logo.png',
				'cid'         => 'logo',
				'name'        => 'logo.png',
				'encoding'    => 'base64',
				'type'        => '',
				'disposition' => 'inline',
			),
			$got[0]
		);
		$this->assertSame( '0', $got[1]['cid'] );

		Mailsvc_Test_Hooks::$filters['wp_mail_embed_args'] = function ( $args ) {
			return 'logo' === $args['cid'] ? array( 'name' => 'brand.png' ) + $args : 'not an array';
		};
		$got = mailsvc_bridge_embed_args( array( 'logo' => $this->dir . '/logo.png', 'x' => $this->dir . '/note.txt' ) );
		$this->assertSame( 'brand.png', $got[0]['name'] );
		$this->assertSame( '', $got[1]['path'], 'a filter that returns no array leaves the defaults' );
	}

	/**
	 * An embed becomes an inline part with its Content-ID, or an
	 * attachment; what PHPMailer would leave out is left out.
	 */
	public function test_embed() {
		$args = mailsvc_bridge_embed_args( array( 'logo' => $this->dir . '/logo.png' ) )[0];

		$inline = mailsvc_bridge_embed( array( 'type' => 'image/x-test' ) + $args );
		$this->assertSame(
			array(
				'filename'     => 'logo.png',
				'content_type' => 'image/x-test',
				'data'         => base64_encode( "\x89PNG\r\n\x1a\n" ),
				'inline'       => true,
				'content_id'   => 'logo',
			),
			$inline
		);
		$attached = mailsvc_bridge_embed( array( 'disposition' => 'attachment', 'type' => 'image/png' ) + $args );
		$this->assertArrayNotHasKey( 'inline', $attached );
		$this->assertArrayNotHasKey( 'content_id', $attached );

		$this->assertNull( mailsvc_bridge_embed( array( 'disposition' => 'form-data' ) + $args ) );
		$this->assertNull( mailsvc_bridge_embed( array( 'encoding' => 'uuencode' ) + $args ) );
		$this->assertNull( mailsvc_bridge_embed( array( 'path' => array() ) + $args ) );
		$this->assertNull( mailsvc_bridge_embed( array( 'path' => $this->dir . '/missing.png' ) + $args ) );
	}

	/**
	 * An embed without a type takes PHPMailer's for its extension, from
	 * the PHPMailer WordPress bundles.
	 */
	public function test_embed_type_from_phpmailer() {
		if ( ! is_file( ABSPATH . WPINC . '/PHPMailer/PHPMailer.php' ) ) {
			$this->markTestSkipped( 'no WordPress at ' . ABSPATH . ' (MAILSVC_TEST_WORDPRESS_DIR)' );
		}
		$args = mailsvc_bridge_embed_args( array( 'logo' => $this->dir . '/logo.png' ) )[0];
		$this->assertSame( 'image/png', mailsvc_bridge_embed( $args )['content_type'] );
	}

	/**
	 * The arguments of the wp_mail filter carry embeds only when asked.
	 */
	public function test_mail_data() {
		$this->assertSame( array( 'to', 'subject', 'message', 'headers', 'attachments' ), array_keys( mailsvc_bridge_mail_data( 'a', 'b', 'c', '', array(), array( 'x' ), false ) ) );
		$this->assertSame( array( 'x' ), mailsvc_bridge_mail_data( 'a', 'b', 'c', '', array(), array( 'x' ), true )['embeds'] );
	}
}
