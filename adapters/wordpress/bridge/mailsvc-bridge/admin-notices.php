<?php
/**
 * The bridge's admin notices: another plugin defined wp_mail(), the Mail
 * page's notice when the service does not answer, and the notice of mail
 * captured on a staging copy.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

add_action( 'admin_notices', 'mailsvc_bridge_unavailable_notice' );
add_action( 'admin_notices', 'mailsvc_bridge_captured_notice' );

/**
 * Prints the admin notice shown when another plugin defined wp_mail().
 */
function mailsvc_bridge_conflict_notice() {
	if ( ! current_user_can( 'manage_options' ) ) {
		return;
	}
	printf(
		'<div class="notice notice-error"><p>%s</p></div>',
		esc_html(
			sprintf(
				/* translators: %s: the plugin, or file, that defined wp_mail(). */
				__( 'mailsvc: wp_mail() is already defined by %s, so the mailsvc bridge could not take over and this site\'s mail does not go through mailsvc. Deactivate that plugin to let mailsvc deliver the mail.', 'mailsvc' ),
				mailsvc_bridge_wp_mail_owner()
			)
		)
	);
}

/**
 * The Mail page's notice when the service does not answer.
 */
function mailsvc_bridge_unavailable_notice() {
	$screen = function_exists( 'get_current_screen' ) ? get_current_screen() : null;
	if ( ! $screen || 'toplevel_page_mailsvc' !== $screen->id || ! current_user_can( mailsvc_bridge_admin_capability() ) || mailsvc_bridge_service_running() ) {
		return;
	}
	$queued = mailsvc_bridge_queued_count();
	echo '<div class="notice notice-warning" id="mailsvc-unavailable"><p><strong>' . esc_html__( 'The mail service is not running.', 'mailsvc' ) . '</strong> ';
	/* translators: %d: the number of queued messages. */
	echo esc_html( sprintf( _n( '%d message is queued and will go out when it starts.', '%d messages are queued and will go out when it starts.', $queued, 'mailsvc' ), $queued ) ) . '</p>';
	echo '<p>' . sprintf(
		/* translators: 1: the command that starts the service, 2: the command that runs it by hand, 3: the constant naming the site's wp-config.php. */
		esc_html__( 'Start it on the server: %1$s (or run %2$s with the site\'s %3$s). Then reload this page.', 'mailsvc' ),
		'<code>systemctl start mailsvc</code>',
		'<code>mailsvc serve</code>',
		'MAILSVC_WP_CONFIG'
	) . '</p></div>'; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- escaped, and the placeholders' markup is fixed.
}

/**
 * The staging guard's notice on every other wp-admin screen (the Mail
 * page's screens have their own banner): while messages are held
 * (captured: a copy of the live site, a staging site, simulation mode),
 * an administrator sees how many and where to release them, wherever in
 * wp-admin they are. One indexed query, for administrators only, that
 * counts at most 1000 held messages.
 */
function mailsvc_bridge_captured_notice() {
	$screen = function_exists( 'get_current_screen' ) ? get_current_screen() : null;
	if ( ! $screen || 'toplevel_page_mailsvc' === $screen->id || ! current_user_can( mailsvc_bridge_admin_capability() ) ) {
		return;
	}
	global $wpdb;
	$table    = ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_logs';
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$held = (int) $wpdb->get_var( "SELECT COUNT(*) FROM (SELECT 1 FROM `{$table}` WHERE status = 'captured' LIMIT 1000) held" );
	$wpdb->suppress_errors( $suppress );
	if ( $held < 1 ) {
		return;
	}
	if ( $held >= 1000 ) {
		/* translators: %d: the number of held messages counted, 1000. */
		$count = sprintf( __( 'At least %d messages are held, not sent.', 'mailsvc' ), 1000 );
	} else {
		/* translators: %d: the number of held messages. */
		$count = sprintf( _n( '%d message is held, not sent.', '%d messages are held, not sent.', $held, 'mailsvc' ), $held );
	}
	echo '<div class="notice notice-warning" id="mailsvc-captured"><p><strong>' . esc_html( $count ) . '</strong> ';
	echo esc_html__( 'mailsvc holds mail on a copy of the live site, on a staging site and in simulation mode.', 'mailsvc' ) . ' ';
	echo sprintf(
		/* translators: %s: a link to the Mail page, with the words "Open Mail". */
		esc_html__( '%s to release them, or to record this site as the live one.', 'mailsvc' ),
		'<a href="' . esc_url( admin_url( 'admin.php?page=mailsvc' ) ) . '">' . esc_html__( 'Open Mail', 'mailsvc' ) . '</a>'
	) . '</p></div>'; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- escaped, and the link is built of escaped parts.
}
