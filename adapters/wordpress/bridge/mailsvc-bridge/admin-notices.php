<?php
/**
 * The bridge's admin notice when another plugin defined wp_mail(). The
 * notices of a service that does not answer, failing mail and held mail
 * are attention.php's.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

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
