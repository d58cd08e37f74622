<?php
/**
 * The bridge's strings and its text domain.
 *
 * @package mailsvc
 */

use PHPUnit\Framework\TestCase;

/**
 * Every gettext call of the bridge names the text domain "mailsvc", and
 * the translation template holds every string.
 */
final class TranslationTest extends TestCase {

	/**
	 * WordPress's gettext functions, and the position of their domain argument (from 0).
	 */
	const DOMAIN_ARGUMENT = array(
		'__'         => 1,
		'_e'         => 1,
		'esc_html__' => 1,
		'esc_html_e' => 1,
		'esc_attr__' => 1,
		'esc_attr_e' => 1,
		'_x'         => 2,
		'_n'         => 3,
		'_nx'        => 4,
	);

	/**
	 * The gettext calls of a PHP source: each as array( function, line,
	 * arguments as source text ).
	 *
	 * @param string $src PHP source.
	 * @return array[]
	 */
	private function calls( $src ) {
		$tokens = array_values(
			array_filter(
				token_get_all( $src ),
				function ( $t ) {
					return ! is_array( $t ) || ! in_array( $t[0], array( T_WHITESPACE, T_COMMENT, T_DOC_COMMENT ), true );
				}
			)
		);
		$calls  = array();
		foreach ( $tokens as $i => $t ) {
			if ( ! is_array( $t ) || T_STRING !== $t[0] || ! isset( self::DOMAIN_ARGUMENT[ $t[1] ] ) || '(' !== ( $tokens[ $i + 1 ] ?? '' ) ) {
				continue;
			}
			$prev = $tokens[ $i - 1 ] ?? '';
			if ( is_array( $prev ) && in_array( $prev[0], array( T_FUNCTION, T_OBJECT_OPERATOR, T_DOUBLE_COLON ), true ) ) {
				continue; // A declaration or a method.
			}
			$args  = array( '' );
			$depth = 0;
			for ( $j = $i + 1; $j < count( $tokens ); $j++ ) {
				$text = is_array( $tokens[ $j ] ) ? $tokens[ $j ][1] : $tokens[ $j ];
				if ( in_array( $text, array( '(', '[', '{' ), true ) && 1 === ++$depth ) {
					continue;
				}
				if ( in_array( $text, array( ')', ']', '}' ), true ) && 0 === --$depth ) {
					break;
				}
				if ( ',' === $text && 1 === $depth ) {
					$args[] = '';
					continue;
				}
				$args[ count( $args ) - 1 ] .= $text;
			}
			$calls[] = array( $t[1], $t[2], $args );
		}
		return $calls;
	}

	/**
	 * The bridge's PHP files.
	 *
	 * @return string[]
	 */
	private function files() {
		$root = dirname( __DIR__ );
		return array_merge( array( $root . '/mailsvc-bridge.php' ), glob( $root . '/mailsvc-bridge/*.php' ) );
	}

	/**
	 * The call scanner sees a missing domain, so that the test below can fail.
	 */
	public function test_scanner() {
		$calls = $this->calls( "<?php\necho esc_html__( 'A, b', 'mailsvc' ) . __( 'C' ) . _n( '%d x', '%d xs', count( \$a ), 'mailsvc' );" );
		$this->assertSame(
			array(
				array( 'esc_html__', 2, array( "'A, b'", "'mailsvc'" ) ),
				array( '__', 2, array( "'C'" ) ),
				array( '_n', 2, array( "'%d x'", "'%d xs'", 'count($a)', "'mailsvc'" ) ),
			),
			$calls
		);
	}

	/**
	 * Every call names the domain, with a literal string to translate.
	 */
	public function test_every_string_has_the_domain() {
		$seen = 0;
		foreach ( $this->files() as $file ) {
			foreach ( $this->calls( file_get_contents( $file ) ) as list( $fn, $line, $args ) ) {
				$where = basename( $file ) . ':' . $line . ' ' . $fn;
				$this->assertSame( "'mailsvc'", $args[ self::DOMAIN_ARGUMENT[ $fn ] ] ?? null, $where . ': the text domain' );
				$this->assertMatchesRegularExpression( '/^\'.*\'$/s', $args[0], $where . ': a literal string' );
				++$seen;
			}
		}
		$this->assertGreaterThan( 50, $seen );
	}

	/**
	 * The template in languages/ holds every string (make pot writes it).
	 */
	public function test_template_is_current() {
		$pot = file_get_contents( dirname( __DIR__ ) . '/mailsvc-bridge/languages/mailsvc.pot' );
		foreach ( $this->files() as $file ) {
			foreach ( $this->calls( file_get_contents( $file ) ) as list( $fn, $line, $args ) ) {
				$msgid = stripslashes( substr( $args[0], 1, -1 ) );
				$this->assertStringContainsString( 'msgid ' . json_encode( $msgid, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES ), $pot, basename( $file ) . ':' . $line . ': not in mailsvc.pot; run make pot' );
			}
		}
	}
}
