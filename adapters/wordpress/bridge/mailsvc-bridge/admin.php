<?php
/**
 * The Mail menu: the service's admin screens framed inside wp-admin, on
 * a site and on a network's Network Admin, and the page a user without
 * the capability is shown.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/*
 * The Mail menu: the service's admin screens inside wp-admin.
 *
 * A "Mail" page for the users holding the REST capability (manage_options,
 * or MAILSVC_REST_CAPABILITY, through the mail_svc_rest_capability filter as
 * the service applies it) frames the screens the service serves at /admin/.
 * They use the logged-in session: the cookie the browser already has and a
 * wp_rest nonce handed over in the frame's URL fragment (never sent to a
 * server), so there is no second sign-in. MAILSVC_SCREENS_URL is where
 * the browser reaches the screens (default: the bridge's own route
 * mailsvc-bridge/v1/screens/, which forwards to the service's /admin/; see
 * screens.php); MAILSVC_SCREENS_API_URL is the REST base they
 * call (default: the site's own rest_url('mailsvc/v1')).
 */

add_action( 'admin_menu', 'mailsvc_bridge_admin_menu' );
add_action( 'network_admin_menu', 'mailsvc_bridge_network_admin_menu' );

/**
 * Returns the capability the Mail page and the service's routes require.
 *
 * @return string
 */
function mailsvc_bridge_admin_capability() {
	$cap      = mailsvc_bridge_default_capability();
	$filtered = apply_filters( 'mail_svc_rest_capability', $cap, '/wp-json/mailsvc/v1' );
	return is_string( $filtered ) && '' !== $filtered ? $filtered : $cap;
}

/**
 * Adds the Mail menu page.
 */
function mailsvc_bridge_admin_menu() {
	add_menu_page( __( 'Mail', 'mailsvc' ), __( 'Mail', 'mailsvc' ), mailsvc_bridge_admin_capability(), 'mailsvc', 'mailsvc_bridge_admin_page', 'dashicons-email-alt', 81 );
}

/**
 * Adds Network Admin's Mail page on a multisite network: the screens for
 * the whole network (the main site's REST URL, where a super admin sees
 * every site), with a filter by site.
 */
function mailsvc_bridge_network_admin_menu() {
	add_menu_page( __( 'Mail', 'mailsvc' ), __( 'Mail', 'mailsvc' ), 'manage_network_options', 'mailsvc-network', 'mailsvc_bridge_network_admin_page', 'dashicons-email-alt', 81 );
}

/**
 * Prints Network Admin's Mail page: a site filter above the screens.
 */
function mailsvc_bridge_network_admin_page() {
	if ( ! current_user_can( 'manage_network_options' ) ) {
		wp_die( esc_html__( 'Sorry, you are not allowed to access this page.', 'mailsvc' ), 403 );
	}
	// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only filter.
	$site = isset( $_GET['site'] ) ? absint( $_GET['site'] ) : 0;
	echo '<form method="get" style="margin:8px 0 8px 0;"><input type="hidden" name="page" value="mailsvc-network" />';
	echo '<label for="mailsvc-site">' . esc_html__( 'Site', 'mailsvc' ) . '</label> <select id="mailsvc-site" name="site" onchange="this.form.submit()">';
	echo '<option value="0">' . esc_html__( 'All sites', 'mailsvc' ) . '</option>';
	foreach ( get_sites( array( 'number' => 1000 ) ) as $blog ) {
		$label = $blog->domain . $blog->path;
		echo '<option value="' . (int) $blog->blog_id . '"' . selected( $site, (int) $blog->blog_id, false ) . '>' . esc_html( $label ) . '</option>';
	}
	echo '</select></form>';
	mailsvc_bridge_admin_page( get_rest_url( get_main_site_id(), 'mailsvc/v1' ), $site );
}

/**
 * Prints the Mail page: the screens in a frame that fills the content area.
 *
 * @param string $network_api On Network Admin: the main site's REST base.
 * @param int    $site        On Network Admin: the site filter (0: all).
 */
function mailsvc_bridge_admin_page( $network_api = '', $site = 0 ) {
	$cap = '' !== $network_api ? 'manage_network_options' : mailsvc_bridge_admin_capability();
	if ( ! current_user_can( $cap ) ) {
		wp_die( esc_html__( 'Sorry, you are not allowed to access this page.', 'mailsvc' ), 403 );
	}
	$screens = defined( 'MAILSVC_SCREENS_URL' ) && MAILSVC_SCREENS_URL ? MAILSVC_SCREENS_URL : mailsvc_bridge_screens_url();
	if ( $screens === mailsvc_bridge_screens_url() && ! mailsvc_bridge_service_running() ) {
		return; // The notice says why and what to do; a frame would only show the 503.
	}
	$api     = defined( 'MAILSVC_SCREENS_API_URL' ) && MAILSVC_SCREENS_API_URL ? MAILSVC_SCREENS_API_URL : rest_url( 'mailsvc/v1' );
	if ( '' !== $network_api ) {
		$api = $network_api;
	}
	$args    = array(
		'embed' => 'wp',
		'nonce' => wp_create_nonce( 'wp_rest' ),
		'api'   => untrailingslashit( $api ),
		'dates' => wp_json_encode( mailsvc_bridge_date_names() ),
	);
	if ( $site > 0 ) {
		$args['site'] = (int) $site;
	}
	// The OAuth callback returns here (MAILSVC_ADMIN_URL) with its flags.
	// phpcs:disable WordPress.Security.NonceVerification.Recommended -- read-only flags shown to the user.
	foreach ( array( 'oauth', 'oauth_error', 'provider', 'connection_id' ) as $flag ) {
		if ( isset( $_GET[ $flag ] ) && is_string( $_GET[ $flag ] ) ) {
			$args[ $flag ] = sanitize_key( wp_unslash( $_GET[ $flag ] ) );
		}
	}
	// phpcs:enable
	$src = esc_url( $screens ) . '#' . esc_attr( http_build_query( $args, '', '&', PHP_QUERY_RFC3986 ) );
	echo '<div class="wrap mailsvc-wrap" style="margin:0 0 0 -20px;">';
	echo '<h1 class="screen-reader-text">' . esc_html__( 'Mail', 'mailsvc' ) . '</h1>';
	echo '<iframe id="mailsvc-screens" title="' . esc_attr__( 'Mail', 'mailsvc' ) . '" src="' . $src . '"'; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- escaped above.
	echo ' style="display:block;width:100%;height:calc(100vh - 32px);border:0;background:transparent;"></iframe>';
	echo '</div>';
	echo '<style>#wpbody-content{padding-bottom:0}#wpfooter{display:none}</style>';
}

/**
 * The names the screens write dates with, in the language wp-admin is
 * shown in: WordPress's $wp_locale (its translations of the months, their
 * genitive and abbreviations, the weekdays and their abbreviations, and
 * am/pm), and whether the language declines a month after a day number
 * (wp_maybe_decline_date()). Without the language's pack WordPress's
 * names are the English ones, and so are these. The Mail page hands them
 * to the screens in the frame's URL fragment; the screens standalone keep
 * English.
 *
 * @param WP_Locale|null $locale The locale to read; null: $wp_locale.
 * @return array month, month_genitive, month_abbrev (12 each, January
 *               first), weekday, weekday_abbrev (7 each, Sunday first),
 *               meridiem (am, pm, AM, PM) and decline.
 */
function mailsvc_bridge_date_names( $locale = null ) {
	if ( null === $locale ) {
		$locale = $GLOBALS['wp_locale'];
	}
	$names = array(
		'month'          => array(),
		'month_genitive' => array(),
		'month_abbrev'   => array(),
		'weekday'        => array(),
		'weekday_abbrev' => array(),
		'meridiem'       => array(),
	);
	for ( $m = 1; $m <= 12; $m++ ) {
		$month                     = $locale->get_month( $m );
		$names['month'][]          = $month;
		$names['month_genitive'][] = $locale->month_genitive[ sprintf( '%02d', $m ) ];
		$names['month_abbrev'][]   = $locale->get_month_abbrev( $month );
	}
	for ( $d = 0; $d < 7; $d++ ) {
		$weekday                   = $locale->get_weekday( $d );
		$names['weekday'][]        = $weekday;
		$names['weekday_abbrev'][] = $locale->get_weekday_abbrev( $weekday );
	}
	foreach ( array( 'am', 'pm', 'AM', 'PM' ) as $meridiem ) {
		$names['meridiem'][ $meridiem ] = $locale->get_meridiem( $meridiem );
	}
	// WordPress's own string, in its own domain, as wp_maybe_decline_date() reads it.
	$names['decline'] = 'on' === translate_with_gettext_context( 'off', 'decline months names: on or off', 'default' );
	return $names;
}

add_action( 'admin_page_access_denied', 'mailsvc_bridge_admin_page_denied' );

/**
 * Refuses the Mail page, to a user without the capability, with the words
 * the service's screens use ("Access denied") rather than WordPress's
 * generic refusal.
 */
function mailsvc_bridge_admin_page_denied() {
	// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- only compared.
	if ( ! isset( $_GET['page'] ) || 'mailsvc' !== $_GET['page'] ) {
		return;
	}
	wp_die(
		'<h1>' . esc_html__( 'Access denied', 'mailsvc' ) . '</h1><p>' . esc_html__( 'Sorry, you are not allowed to manage mail on this site.', 'mailsvc' ) . '</p>',
		esc_html__( 'Access denied', 'mailsvc' ),
		array( 'response' => 403 )
	);
}
