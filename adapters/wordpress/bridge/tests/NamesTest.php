<?php
/**
 * The bridge's files and names.
 *
 * @package mailsvc
 */

use PHPUnit\Framework\TestCase;

/**
 * Every file of the bridge is small and says what it does, and every name
 * it declares carries the bridge's prefix.
 */
final class NamesTest extends TestCase {

	/**
	 * The loader and the files of its folder.
	 *
	 * @return array[]
	 */
	public function files() {
		$root  = dirname( __DIR__ );
		$files = array( 'mailsvc-bridge.php' => array( $root . '/mailsvc-bridge.php' ) );
		foreach ( glob( $root . '/mailsvc-bridge/*.php' ) as $file ) {
			$files[ basename( $file ) ] = array( $file );
		}
		return $files;
	}

	/**
	 * A file is under 500 lines and opens with a comment saying what it does.
	 *
	 * @dataProvider files
	 * @param string $file Path.
	 */
	public function test_file( $file ) {
		$src = file_get_contents( $file );
		$this->assertLessThan( 500, substr_count( $src, "\n" ), 'lines' );
		$this->assertMatchesRegularExpression( '#^<\?php\n/\*\*\n \* \S#', $src, 'a header comment' );
	}

	/**
	 * Functions are mailsvc_bridge_*, constants MAILSVC_BRIDGE_*, classes
	 * Mailsvc_Bridge_*; the one exception is wp_mail().
	 *
	 * @dataProvider files
	 * @param string $file Path.
	 */
	public function test_prefixes( $file ) {
		$tokens = array_values(
			array_filter(
				token_get_all( file_get_contents( $file ) ),
				function ( $t ) {
					return ! is_array( $t ) || ! in_array( $t[0], array( T_WHITESPACE, T_COMMENT, T_DOC_COMMENT ), true );
				}
			)
		);
		$prefix = array(
			T_FUNCTION => '/^(mailsvc_bridge_[a-z0-9_]+|wp_mail)$/',
			T_CONST    => '/^MAILSVC_BRIDGE_[A-Z0-9_]+$/',
			T_CLASS    => '/^Mailsvc_Bridge_[A-Za-z0-9_]+$/',
		);
		$named  = 0;
		$depth  = 0;
		$class  = -1; // The depth of the class body being read, -1 outside one.
		foreach ( $tokens as $i => $t ) {
			if ( '{' === $t || ( is_array( $t ) && in_array( $t[0], array( T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES ), true ) ) ) {
				++$depth;
			} elseif ( '}' === $t && --$depth < $class ) {
				$class = -1;
			}
			if ( ! is_array( $t ) || ! isset( $prefix[ $t[0] ] ) || ! isset( $tokens[ $i + 1 ] ) || ! is_array( $tokens[ $i + 1 ] ) || T_STRING !== $tokens[ $i + 1 ][0] ) {
				continue; // Not a declaration: a closure, ::class, ...
			}
			if ( T_CLASS === $t[0] ) {
				$class = $depth + 1;
			} elseif ( $class >= 0 ) {
				continue; // A method or a class constant.
			}
			$this->assertMatchesRegularExpression( $prefix[ $t[0] ], $tokens[ $i + 1 ][1], basename( $file ) . ':' . $t[2] );
			++$named;
		}
		$this->assertGreaterThan( 0, $named, 'declarations found' );
	}
}
