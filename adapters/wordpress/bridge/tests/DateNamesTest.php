<?php
/**
 * The names the Mail page hands the screens to write dates with:
 * mailsvc_bridge_date_names() in mailsvc-bridge/admin.php.
 *
 * @package mailsvc
 */

use PHPUnit\Framework\TestCase;

/**
 * The months, weekdays and am/pm of WordPress's own WP_Locale, in the
 * language wp-admin is shown in; English without the language's pack.
 */
final class DateNamesTest extends TestCase {

	/**
	 * Loads WordPress's WP_Locale (skipped without a WordPress).
	 */
	protected function setUp(): void {
		$file = ABSPATH . WPINC . '/class-wp-locale.php';
		if ( ! is_file( $file ) ) {
			$this->markTestSkipped( 'no WordPress in ' . ABSPATH );
		}
		require_once $file;
		Mailsvc_Test_L10n::$strings = array();
	}

	/**
	 * Forgets the translations.
	 */
	protected function tearDown(): void {
		Mailsvc_Test_L10n::$strings = array();
	}

	/**
	 * Languages: the translations of WordPress's default domain a site
	 * has, and names the bridge then hands over.
	 *
	 * @return array[]
	 */
	public function languages() {
		$english = array(
			'month'          => array( 'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December' ),
			'month_genitive' => array( 'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December' ),
			'month_abbrev'   => array( 'Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec' ),
			'weekday'        => array( 'Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday' ),
			'weekday_abbrev' => array( 'Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat' ),
			'meridiem'       => array(
				'am' => 'am',
				'pm' => 'pm',
				'AM' => 'AM',
				'PM' => 'PM',
			),
			'decline'        => false,
		);
		$german                   = $english;
		$german['month']          = array( 'Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember' );
		$german['month_genitive'] = $german['month'];
		$german['month_abbrev']   = array( 'Jan.', 'Feb.', 'März', 'Apr.', 'Mai', 'Juni', 'Juli', 'Aug.', 'Sep.', 'Okt.', 'Nov.', 'Dez.' );
		$german['weekday']        = array( 'Sonntag', 'Montag', 'Dienstag', 'Mittwoch', 'Donnerstag', 'Freitag', 'Samstag' );
		$german['weekday_abbrev'] = array( 'So.', 'Mo.', 'Di.', 'Mi.', 'Do.', 'Fr.', 'Sa.' );
		$german['meridiem']       = array(
			'am' => 'vorm.',
			'pm' => 'nachm.',
			'AM' => 'Vorm.',
			'PM' => 'Nachm.',
		);
		$german_strings = array();
		foreach ( $english['month'] as $i => $month ) {
			$german_strings[ $month ]                                                        = $german['month'][ $i ];
			$german_strings[ "genitive\x04" . $month ]                                       = $german['month_genitive'][ $i ];
			$german_strings[ $month . " abbreviation\x04" . $english['month_abbrev'][ $i ] ] = $german['month_abbrev'][ $i ];
		}
		foreach ( $english['weekday'] as $i => $day ) {
			$german_strings[ $day ]                             = $german['weekday'][ $i ];
			$german_strings[ $english['weekday_abbrev'][ $i ] ] = $german['weekday_abbrev'][ $i ];
		}
		foreach ( $english['meridiem'] as $key => $word ) {
			$german_strings[ $word ] = $german['meridiem'][ $key ];
		}

		// A language that declines a month after a day number: its
		// genitive differs and it says so as wp_maybe_decline_date() reads it.
		$polish                      = $english;
		$polish['month'][2]          = 'Marzec';
		$polish['month_genitive'][2] = 'marca';
		$polish['month_abbrev'][2]   = 'mar';
		$polish['decline']           = true;
		$polish_strings              = array(
			'March'                                   => 'Marzec',
			"genitive\x04March"                       => 'marca',
			"March abbreviation\x04Mar"               => 'mar',
			"decline months names: on or off\x04off" => 'on',
		);

		return array(
			'no language pack: English' => array( array(), $english ),
			'German'                    => array( $german_strings, $german ),
			'Polish, declined'          => array( $polish_strings, $polish ),
		);
	}

	/**
	 * The names are WP_Locale's, in order, and the decline flag is the
	 * language's.
	 *
	 * @dataProvider languages
	 * @param string[] $strings Translations of the default domain.
	 * @param array    $want    The names handed to the screens.
	 */
	public function test_date_names( $strings, $want ) {
		Mailsvc_Test_L10n::$strings = $strings;
		$this->assertSame( $want, mailsvc_bridge_date_names( new WP_Locale() ) );
	}

	/**
	 * Without a locale given, the names are those of the global $wp_locale,
	 * as WordPress loaded it for the page.
	 */
	public function test_global_locale() {
		Mailsvc_Test_L10n::$strings = array( 'June' => 'Juni' );
		$saved                      = $GLOBALS['wp_locale'] ?? null;
		$GLOBALS['wp_locale']       = new WP_Locale();
		try {
			$this->assertSame( 'Juni', mailsvc_bridge_date_names()['month'][5] );
		} finally {
			$GLOBALS['wp_locale'] = $saved;
		}
	}
}
