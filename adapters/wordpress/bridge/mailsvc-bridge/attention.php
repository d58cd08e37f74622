<?php
/**
 * Trouble where owners look: what needs the site owner's attention,
 * wherever in wp-admin they are.
 *
 * - A notice on every wp-admin screen, for the users holding the REST
 *   capability, while the service does not answer, mail is failing (a
 *   connection failing, or messages failed in the last 24 hours), or mail
 *   is held (the staging guard, or the flood guard: condition 'flood').
 *   Each condition is dismissible: a
 *   dismissal hides that one condition for that user until it changes (the
 *   service goes down again, a new message fails, another is held).
 * - A count on the Mail menu, in WordPress's count bubble: the messages
 *   failed in the last 24 hours and still failed, plus the held ones
 *   (counted in the site's own table, so they show while the service is
 *   stopped too).
 * - A WordPress Dashboard widget: today's deliveries and failures, the
 *   queue, each connection's health, a link to Mail.
 *
 * On a multisite network the three show in Network Admin too, for the
 * super admins, with the network's figures: the service's answer on the
 * main site's URL, where a super admin sees the whole network, kept in a
 * network transient of its own; the links go to Network Admin's Mail page.
 *
 * The service's answer (GET /dashboard/stats?range=today, with the user's
 * own cookie and a wp_rest nonce) is kept in a transient for a minute, and
 * asked with a 1-second connection and 2-second answer limit, so wp-admin
 * never waits long on a stopped service.
 *
 * @package mailsvc
 */

defined( 'ABSPATH' ) || exit;

/** The transient that keeps the service's answer. */
const MAILSVC_BRIDGE_ATTENTION_TRANSIENT = 'mailsvc_attention';
/** The network transient that keeps the service's answer for Network Admin. */
const MAILSVC_BRIDGE_ATTENTION_NETWORK_TRANSIENT = 'mailsvc_attention_network';
/** Seconds the answer is kept. */
const MAILSVC_BRIDGE_ATTENTION_TTL = 60;
/** The user meta of the dismissed conditions: condition => its key when dismissed. */
const MAILSVC_BRIDGE_ATTENTION_DISMISSED = 'mailsvc_attention_dismissed';
/** The option that remembers since when the service has not answered. */
const MAILSVC_BRIDGE_ATTENTION_DOWN_SINCE = 'mailsvc_attention_down_since';

add_action( 'admin_notices', 'mailsvc_bridge_attention_notices' );
add_action( 'admin_menu', 'mailsvc_bridge_attention_menu_count', 100 );
add_action( 'wp_dashboard_setup', 'mailsvc_bridge_attention_dashboard_widget' );
add_action( 'network_admin_notices', 'mailsvc_bridge_attention_notices' );
add_action( 'network_admin_menu', 'mailsvc_bridge_attention_menu_count', 100 );
add_action( 'wp_network_dashboard_setup', 'mailsvc_bridge_attention_dashboard_widget' );
add_action( 'wp_ajax_mailsvc_attention_dismiss', 'mailsvc_bridge_attention_dismiss' );
add_action( 'admin_footer', 'mailsvc_bridge_attention_dismiss_script' );

/**
 * Whether the current user may see the service's state.
 *
 * @return bool
 */
function mailsvc_bridge_attention_may_see() {
	return is_user_logged_in() && current_user_can( is_network_admin() ? 'manage_network_options' : mailsvc_bridge_admin_capability() );
}

/**
 * The Mail page of the current admin: Network Admin's on Network Admin,
 * the site's elsewhere.
 *
 * @return array array( menu slug, URL ).
 */
function mailsvc_bridge_attention_mail_page() {
	if ( is_network_admin() ) {
		return array( 'mailsvc-network', network_admin_url( 'admin.php?page=mailsvc-network' ) );
	}
	return array( 'mailsvc', admin_url( 'admin.php?page=mailsvc' ) );
}

/**
 * The service's state: the attention object and today's totals and
 * connections of GET /dashboard/stats, or array( 'service' => 'down' )
 * when the service does not answer, or array( 'service' => 'unknown' )
 * when its answer cannot be read. Asked once a minute at most.
 *
 * @return array
 */
function mailsvc_bridge_attention_state() {
	static $state = null;
	if ( null !== $state ) {
		return $state;
	}
	$network = is_network_admin();
	// A super admin on the main site's URL acts for the whole network: the
	// service's answer to them is kept apart from a site administrator's.
	$key    = MAILSVC_BRIDGE_ATTENTION_TRANSIENT . ( is_multisite() && is_super_admin() ? '_super' : '' );
	$cached = $network ? get_site_transient( MAILSVC_BRIDGE_ATTENTION_NETWORK_TRANSIENT ) : get_transient( $key );
	if ( is_array( $cached ) ) {
		$state = $cached;
		return $state;
	}
	$state = mailsvc_bridge_attention_fetch();
	if ( 'down' === $state['service'] ) {
		$since = (int) get_option( MAILSVC_BRIDGE_ATTENTION_DOWN_SINCE, 0 );
		if ( $since < 1 ) {
			$since = time();
			update_option( MAILSVC_BRIDGE_ATTENTION_DOWN_SINCE, $since, false );
		}
		$state['down_since'] = $since;
		$state['queued']     = mailsvc_bridge_queued_count();
	} elseif ( 'running' === $state['service'] ) {
		delete_option( MAILSVC_BRIDGE_ATTENTION_DOWN_SINCE );
	}
	if ( $network ) {
		set_site_transient( MAILSVC_BRIDGE_ATTENTION_NETWORK_TRANSIENT, $state, MAILSVC_BRIDGE_ATTENTION_TTL );
	} else {
		set_transient( $key, $state, MAILSVC_BRIDGE_ATTENTION_TTL );
	}
	return $state;
}

/**
 * Asks the service for today's statistics with the user's own session: on
 * the site's URL, or on Network Admin on the main site's (the network's).
 *
 * @return array
 */
function mailsvc_bridge_attention_fetch() {
	$conn = mailsvc_bridge_service_connect( 1 );
	if ( null === $conn ) {
		return array( 'service' => 'down' );
	}
	list( $fp, $base ) = $conn;
	stream_set_timeout( $fp, 2 );
	$host   = isset( $_SERVER['HTTP_HOST'] ) ? (string) $_SERVER['HTTP_HOST'] : (string) wp_parse_url( home_url(), PHP_URL_HOST );
	$cookie = isset( $_SERVER['HTTP_COOKIE'] ) ? (string) $_SERVER['HTTP_COOKIE'] : '';
	$path   = mailsvc_bridge_site_path();
	if ( is_network_admin() ) {
		switch_to_blog( get_main_site_id() );
		$path = mailsvc_bridge_site_path();
		restore_current_blog();
	}
	$head = 'GET ' . $base . $path . "/wp-json/mailsvc/v1/dashboard/stats?range=today HTTP/1.0\r\n"
		. 'Host: ' . str_replace( array( "\r", "\n" ), '', $host ) . "\r\nConnection: close\r\nAccept: application/json\r\n"
		. 'X-Forwarded-Proto: ' . ( is_ssl() ? 'https' : 'http' ) . "\r\n"
		. 'X-WP-Nonce: ' . wp_create_nonce( 'wp_rest' ) . "\r\n"
		. MAILSVC_BRIDGE_SITE_HEADER . ': ' . mailsvc_bridge_site_key() . "\r\n"
		. 'Cookie: ' . str_replace( array( "\r", "\n" ), '', $cookie ) . "\r\n\r\n";
	$raw = '';
	if ( false !== fwrite( $fp, $head ) ) { // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fwrite -- a socket.
		while ( ! feof( $fp ) && strlen( $raw ) < 1048576 ) {
			$chunk = fread( $fp, 65536 ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fread -- a socket.
			$meta  = stream_get_meta_data( $fp );
			if ( false === $chunk || ! empty( $meta['timed_out'] ) ) {
				break;
			}
			$raw .= $chunk;
		}
	}
	fclose( $fp ); // phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_fclose -- a socket.
	if ( '' === $raw ) {
		return array( 'service' => 'down' );
	}
	$parts = explode( "\r\n\r\n", $raw, 2 );
	$stats = 2 === count( $parts ) && 1 === preg_match( '#^HTTP/\d\.\d 200#', $parts[0] ) ? json_decode( $parts[1], true ) : null;
	if ( ! is_array( $stats ) || ! isset( $stats['attention'] ) || ! is_array( $stats['attention'] ) ) {
		return array( 'service' => 'unknown' );
	}
	return array(
		'service'     => 'running',
		'attention'   => $stats['attention'],
		'totals'      => isset( $stats['totals'] ) && is_array( $stats['totals'] ) ? $stats['totals'] : array(),
		'today'       => isset( $stats['today'] ) && is_array( $stats['today'] ) ? $stats['today'] : array(),
		'connections' => isset( $stats['connections'] ) && is_array( $stats['connections'] ) ? $stats['connections'] : array(),
	);
}

/**
 * The conditions that need attention now, each with the key that changes
 * when the condition does: 'down', 'failing', 'held', 'flood'.
 *
 * @param array $state mailsvc_bridge_attention_state().
 * @return array condition => key.
 */
function mailsvc_bridge_attention_conditions( $state ) {
	$out  = array();
	$held = mailsvc_bridge_attention_held();
	if ( $held > 0 ) {
		$out['held'] = (string) $held;
	}
	$flood = mailsvc_bridge_attention_held( 'held' );
	if ( $flood > 0 ) {
		$out['flood'] = (string) $flood;
	}
	if ( 'down' === $state['service'] ) {
		return array( 'down' => (string) $state['down_since'] ) + $out;
	}
	if ( 'running' !== $state['service'] ) {
		return $out;
	}
	$a   = $state['attention'];
	$ids = array();
	foreach ( (array) $a['failing_connections'] as $c ) {
		$ids[] = (int) $c['id'] . '@' . (string) $c['since'];
	}
	if ( $ids || (int) $a['failed_24h'] > 0 ) {
		$out['failing'] = implode( ',', $ids ) . '|' . (int) $a['last_failed_id'];
	}
	return $out;
}

/**
 * Messages the staging guard holds (status captured), or the flood guard
 * (status held), read from the site's own table, so they are told even
 * while the service is stopped: one indexed query that counts at most
 * 1000, once per request and status.
 *
 * @param string $status 'captured' or 'held'.
 * @return int
 */
function mailsvc_bridge_attention_held( $status = 'captured' ) {
	static $counts = array();
	if ( isset( $counts[ $status ] ) ) {
		return $counts[ $status ];
	}
	global $wpdb;
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_logs';
	// A site's own held mail; Network Admin's counts the whole network's.
	$site     = is_multisite() && ! is_network_admin() ? sprintf( ' AND site_id = %d', (int) get_current_blog_id() ) : '';
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant, the site an integer.
	$counts[ $status ] = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM (SELECT 1 FROM `{$table}` WHERE status = %s{$site} LIMIT 1000) held", $status ) );
	$wpdb->suppress_errors( $suppress );
	return $counts[ $status ];
}

/**
 * A time of the service's answer in the site's date and time format.
 *
 * @param string|int $t RFC 3339 time or Unix time.
 * @return string
 */
function mailsvc_bridge_attention_time( $t ) {
	$ts = is_int( $t ) ? $t : strtotime( (string) $t );
	if ( ! $ts ) {
		return '';
	}
	return wp_date( get_option( 'date_format' ) . ' ' . get_option( 'time_format' ), $ts );
}

/**
 * Prints the notice of each condition the user has not dismissed.
 */
function mailsvc_bridge_attention_notices() {
	if ( ! mailsvc_bridge_attention_may_see() ) {
		return;
	}
	$state      = mailsvc_bridge_attention_state();
	$dismissed  = get_user_meta( get_current_user_id(), MAILSVC_BRIDGE_ATTENTION_DISMISSED, true );
	$dismissed  = is_array( $dismissed ) ? $dismissed : array();
	$screen     = function_exists( 'get_current_screen' ) ? get_current_screen() : null;
	$page       = mailsvc_bridge_attention_mail_page();
	$on_mail    = $screen && in_array( $screen->id, array( 'toplevel_page_mailsvc', 'toplevel_page_mailsvc-network-network' ), true );
	$mail_link  = '<a href="' . esc_url( $page[1] ) . '">' . esc_html__( 'Open Mail', 'mailsvc' ) . '</a>';
	foreach ( mailsvc_bridge_attention_conditions( $state ) as $condition => $key ) {
		if ( isset( $dismissed[ $condition ] ) && $dismissed[ $condition ] === $key ) {
			continue;
		}
		if ( 'held' === $condition && $on_mail ) {
			continue; // The screens show their own banner of held mail.
		}
		$ids   = array(
			'down'    => 'mailsvc-unavailable',
			'failing' => 'mailsvc-attention-failing',
			'held'    => 'mailsvc-captured',
			'flood'   => 'mailsvc-flood-held',
		);
		$id    = $ids[ $condition ];
		$class = in_array( $condition, array( 'held', 'flood' ), true ) ? 'notice-warning' : 'notice-error';
		printf(
			'<div class="notice %1$s is-dismissible mailsvc-attention" id="%2$s" data-condition="%3$s" data-key="%4$s">',
			esc_attr( $class ),
			esc_attr( $id ),
			esc_attr( $condition ),
			esc_attr( $key )
		);
		if ( 'down' === $condition ) {
			mailsvc_bridge_attention_down_text( (int) $state['queued'] );
		} elseif ( 'failing' === $condition ) {
			mailsvc_bridge_attention_failing_text( $state['attention'], $on_mail ? '' : $mail_link );
		} elseif ( 'flood' === $condition ) {
			$flood = mailsvc_bridge_attention_held( 'held' );
			/* translators: %s: number of messages. */
			echo '<p><strong>' . esc_html( sprintf( _n( '%s message is held by the flood guard, not sent.', '%s messages are held by the flood guard, not sent.', $flood, 'mailsvc' ), number_format_i18n( $flood ) ) ) . '</strong> ';
			echo esc_html__( 'A plugin, or WordPress itself, sent far more mail than it usually does.', 'mailsvc' ) . ' ';
			/* translators: %s: the link "Release or discard them". */
			echo wp_kses_post( sprintf( __( '%s on the Email logs screen.', 'mailsvc' ), '<a href="' . esc_url( $page[1] . '#/logs?status=held' ) . '">' . esc_html__( 'Release or discard them', 'mailsvc' ) . '</a>' ) ) . '</p>';
		} else {
			$held = mailsvc_bridge_attention_held();
			/* translators: %s: number of messages. */
			echo '<p><strong>' . esc_html( sprintf( _n( '%s message is held, not sent.', '%s messages are held, not sent.', $held, 'mailsvc' ), number_format_i18n( $held ) ) ) . '</strong> ';
			echo esc_html__( 'mailsvc holds mail on a copy of the live site, on a staging site and in simulation mode.', 'mailsvc' ) . ' ';
			/* translators: %s: the link "Open Mail". */
			echo wp_kses_post( sprintf( __( '%s to release them, or to record this site as the live one.', 'mailsvc' ), $mail_link ) ) . '</p>';
		}
		echo '</div>';
	}
}

/**
 * The words of the notice of a service that does not answer.
 *
 * @param int $queued Messages queued.
 */
function mailsvc_bridge_attention_down_text( $queued ) {
	echo '<p><strong>' . esc_html__( 'The mail service is not running.', 'mailsvc' ) . '</strong> ';
	/* translators: %s: number of messages. */
	echo esc_html( sprintf( _n( '%s message is queued and will go out when it starts.', '%s messages are queued and will go out when it starts.', $queued, 'mailsvc' ), number_format_i18n( $queued ) ) ) . '</p>';
	/* translators: %s: the command that starts the service. */
	echo '<p>' . wp_kses_post( sprintf( __( 'Start it on the server: %s', 'mailsvc' ), '<code>systemctl start mailsvc</code>' ) ) . '</p>';
}

/**
 * The words of the notice of failing mail.
 *
 * @param array  $a         The attention object.
 * @param string $mail_link The link to Mail ('' on the Mail page).
 */
function mailsvc_bridge_attention_failing_text( $a, $mail_link ) {
	echo '<p><strong>' . esc_html__( 'Mail is failing.', 'mailsvc' ) . '</strong></p><ul>';
	foreach ( (array) $a['failing_connections'] as $c ) {
		echo '<li>';
		/* translators: 1: connection name, 2: date and time. */
		echo esc_html( sprintf( __( 'The connection %1$s has been failing since %2$s.', 'mailsvc' ), $c['name'], mailsvc_bridge_attention_time( $c['since'] ) ) );
		if ( '' !== (string) $c['last_error'] ) {
			/* translators: %s: the error. */
			echo ' ' . esc_html( sprintf( __( 'Last error: %s', 'mailsvc' ), $c['last_error'] ) );
		}
		echo '</li>';
	}
	$retrying = (int) $a['retrying'];
	if ( $retrying > 0 ) {
		/* translators: 1: number of messages, 2: date and time. */
		echo '<li>' . esc_html( sprintf( _n( '%1$s message is waiting to be retried; the next attempt is at %2$s.', '%1$s messages are waiting to be retried; the next attempt is at %2$s.', $retrying, 'mailsvc' ), number_format_i18n( $retrying ), mailsvc_bridge_attention_time( $a['next_attempt_at'] ) ) ) . '</li>';
	}
	$failed = (int) $a['failed_24h'];
	if ( $failed > 0 ) {
		/* translators: %s: number of messages. */
		echo '<li>' . esc_html( sprintf( _n( '%s message failed in the last 24 hours.', '%s messages failed in the last 24 hours.', $failed, 'mailsvc' ), number_format_i18n( $failed ) ) ) . '</li>';
	}
	echo '</ul>';
	if ( '' !== $mail_link ) {
		/* translators: %s: the link "Open Mail". */
		echo '<p>' . wp_kses_post( sprintf( __( '%s to see the messages and the connections.', 'mailsvc' ), $mail_link ) ) . '</p>';
	}
}

/**
 * Records a dismissal: the condition stays hidden for this user while its
 * key stays the same.
 */
function mailsvc_bridge_attention_dismiss() {
	check_ajax_referer( 'mailsvc_attention_dismiss' );
	if ( ! mailsvc_bridge_attention_may_see() ) {
		wp_send_json_error( null, 403 );
	}
	$condition = isset( $_POST['condition'] ) ? sanitize_key( wp_unslash( $_POST['condition'] ) ) : '';
	$key       = isset( $_POST['key'] ) ? sanitize_text_field( wp_unslash( $_POST['key'] ) ) : '';
	if ( ! in_array( $condition, array( 'down', 'failing', 'held', 'flood' ), true ) ) {
		wp_send_json_error( null, 400 );
	}
	$dismissed               = get_user_meta( get_current_user_id(), MAILSVC_BRIDGE_ATTENTION_DISMISSED, true );
	$dismissed               = is_array( $dismissed ) ? $dismissed : array();
	$dismissed[ $condition ] = $key;
	update_user_meta( get_current_user_id(), MAILSVC_BRIDGE_ATTENTION_DISMISSED, $dismissed );
	wp_send_json_success();
}

/**
 * Sends a dismissal when the notice's close button is pressed.
 */
function mailsvc_bridge_attention_dismiss_script() {
	if ( ! mailsvc_bridge_attention_may_see() ) {
		return;
	}
	?>
<script>
document.addEventListener( 'click', function ( e ) {
	var box = e.target.closest && e.target.closest( '.mailsvc-attention' );
	if ( ! box || ! e.target.classList.contains( 'notice-dismiss' ) ) {
		return;
	}
	var body = new URLSearchParams( { action: 'mailsvc_attention_dismiss', _ajax_nonce: <?php echo wp_json_encode( wp_create_nonce( 'mailsvc_attention_dismiss' ) ); ?>, condition: box.dataset.condition, key: box.dataset.key } );
	fetch( <?php echo wp_json_encode( admin_url( 'admin-ajax.php' ) ); ?>, { method: 'POST', credentials: 'same-origin', body: body } ).then( function ( r ) {
		document.body.dataset.mailsvcDismissed = r.ok ? box.dataset.condition : 'error';
	} );
} );
</script>
	<?php
}

/**
 * The number of messages that need the owner: failed in the last 24 hours
 * (and still failed) plus held (by the staging guard or the flood guard).
 *
 * @param array $state mailsvc_bridge_attention_state().
 * @return int
 */
function mailsvc_bridge_attention_count( $state ) {
	$failed = 'running' === $state['service'] ? (int) $state['attention']['failed_24h'] : 0;
	return $failed + mailsvc_bridge_attention_held() + mailsvc_bridge_attention_held( 'held' );
}

/**
 * Adds the count bubble to the Mail menu.
 */
function mailsvc_bridge_attention_menu_count() {
	global $menu;
	if ( ! mailsvc_bridge_attention_may_see() || ! is_array( $menu ) ) {
		return;
	}
	$count = mailsvc_bridge_attention_count( mailsvc_bridge_attention_state() );
	if ( $count < 1 ) {
		return;
	}
	$slug = mailsvc_bridge_attention_mail_page()[0];
	foreach ( $menu as $i => $item ) {
		if ( isset( $item[2] ) && $slug === $item[2] ) {
			/* translators: %s: number of messages. */
			$label         = sprintf( _n( '%s message needs attention', '%s messages need attention', $count, 'mailsvc' ), number_format_i18n( $count ) );
			$menu[ $i ][0] .= sprintf(
				' <span class="awaiting-mod count-%1$d" id="mailsvc-menu-count"><span class="pending-count" aria-hidden="true">%2$s</span><span class="screen-reader-text">%3$s</span></span>',
				$count,
				esc_html( number_format_i18n( $count ) ),
				esc_html( $label )
			);
		}
	}
}

/**
 * Adds the Mail widget to the WordPress Dashboard.
 */
function mailsvc_bridge_attention_dashboard_widget() {
	if ( ! mailsvc_bridge_attention_may_see() ) {
		return;
	}
	wp_add_dashboard_widget( 'mailsvc_dashboard_widget', __( 'Mail', 'mailsvc' ), 'mailsvc_bridge_attention_widget' );
}

/**
 * Prints the Mail widget: today's deliveries and failures, the queue, each
 * connection's health, a link to Mail.
 */
function mailsvc_bridge_attention_widget() {
	$state = mailsvc_bridge_attention_state();
	echo '<div id="mailsvc-widget">';
	if ( 'down' === $state['service'] ) {
		echo '<p><strong>' . esc_html__( 'The mail service is not running.', 'mailsvc' ) . '</strong></p>';
	} elseif ( 'running' !== $state['service'] ) {
		echo '<p>' . esc_html__( 'The mail service did not answer in time.', 'mailsvc' ) . '</p>';
	} else {
		$today    = $state['today'];
		$totals   = $state['totals'];
		$attn     = $state['attention'];
		$labelled = array(
			array( __( 'Delivered today', 'mailsvc' ), isset( $today['delivered'] ) ? (int) $today['delivered'] : 0 ),
			array( __( 'Failed today', 'mailsvc' ), isset( $today['failed'] ) ? (int) $today['failed'] : 0 ),
			array( __( 'Queued', 'mailsvc' ), isset( $totals['queued'] ) ? (int) $totals['queued'] : 0 ),
			array( __( 'Retrying', 'mailsvc' ), (int) $attn['retrying'] ),
		);
		echo '<ul class="mailsvc-widget-counts">';
		foreach ( $labelled as $row ) {
			echo '<li>' . esc_html( $row[0] ) . ': <strong>' . esc_html( number_format_i18n( $row[1] ) ) . '</strong></li>';
		}
		echo '</ul>';
		$names = array(
			'healthy'  => __( 'Healthy', 'mailsvc' ),
			'degraded' => __( 'Degraded', 'mailsvc' ),
			'failing'  => __( 'Failing', 'mailsvc' ),
			'unknown'  => __( 'Not checked yet', 'mailsvc' ),
		);
		if ( $state['connections'] ) {
			// WordPress's own colours of trouble (notice-error, notice-warning).
			echo '<style>#mailsvc-widget .mailsvc-health-failing td:last-child{color:#d63638;font-weight:600}#mailsvc-widget .mailsvc-health-degraded td:last-child{color:#996800;font-weight:600}</style>';
			echo '<table class="widefat striped"><thead><tr><th>' . esc_html__( 'Connection', 'mailsvc' ) . '</th><th>' . esc_html__( 'Health', 'mailsvc' ) . '</th></tr></thead><tbody>';
			foreach ( $state['connections'] as $c ) {
				if ( empty( $c['name'] ) ) {
					continue;
				}
				$health = isset( $c['health'], $names[ $c['health'] ] ) ? $c['health'] : 'unknown';
				echo '<tr class="mailsvc-health-' . esc_attr( $health ) . '"><td>' . esc_html( $c['name'] ) . '</td><td>' . esc_html( $names[ $health ] ) . '</td></tr>';
			}
			echo '</tbody></table>';
		}
	}
	echo '<p><a class="button" href="' . esc_url( mailsvc_bridge_attention_mail_page()[1] ) . '">' . esc_html__( 'Open Mail', 'mailsvc' ) . '</a></p></div>';
}
