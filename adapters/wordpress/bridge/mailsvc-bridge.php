<?php
/**
 * Plugin Name: mailsvc bridge
 * Description: Replaces wp_mail() so that the site's mail is queued for the mailsvc delivery service in the site's own database. Installed by `mailsvc wp install`; removed by `mailsvc uninstall`.
 * Version:     1.0.0
 * License:     GPL-2.0-or-later
 *
 * A must-use plugin: WordPress loads it before pluggable.php, so the
 * wp_mail() defined here is the one the site uses. It follows WordPress's
 * own wp_mail() (wp-includes/pluggable.php) step by step, but instead of
 * sending through PHPMailer it inserts one `queued` row into
 * {$wpdb->prefix}mailsvc_logs, which the service's workers deliver. The
 * row's `message` column is the JSON the service's store reads
 * (adapters/store/log.go, storedMessage); attachments are copied into it
 * as base64 so that they outlive the request's temporary files, and so are
 * the files wp_mail()'s sixth argument embeds (WordPress 6.9's $embeds),
 * as inline attachments with their Content-IDs.
 *
 * One exception: mail from a source the service names in its bridge
 * directive excluded_sources is not queued but sent the way WordPress's
 * own wp_mail() sends it (PHPMailer, phpmailer_init), so the site's
 * previous mail setup keeps handling it. The directive is read from
 * {$wpdb->base_prefix}mailsvc_settings (scope "bridge") once per request;
 * when it is absent or cannot be read, every message is queued.
 *
 * It also runs the service's events as WordPress actions
 * (mail_svc_delivered, wp_mail_failed, the mail_svc_* events): see
 * mailsvc-bridge/host-hooks.php and docs/hooks.md; and it stops the
 * WordPress core emails switched off by the email controls, counting each
 * one: see mailsvc-bridge/email-controls.php.
 *
 * This file is the loader: WordPress loads the PHP files at the top of
 * mu-plugins/ only, so each concern lives in its own file in the
 * mailsvc-bridge/ folder beside it, required below in a fixed order (the
 * order in which their actions and filters are added). Every function is
 * prefixed mailsvc_bridge_, every constant MAILSVC_BRIDGE_. The folder is
 * installed, replaced and removed with this file by `mailsvc wp install`
 * and `mailsvc uninstall`.
 *
 * It reads nothing but $wpdb and needs no configuration. The table prefix is
 * $wpdb->base_prefix, the $table_prefix of wp-config.php that the service
 * reads too (the same as $wpdb->prefix except on a multisite network).
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** This file: stack frames in it are the bridge's own. */
const MAILSVC_BRIDGE_FILE = __FILE__;
/** The folder of the bridge's files. */
const MAILSVC_BRIDGE_DIR = __DIR__ . DIRECTORY_SEPARATOR . 'mailsvc-bridge';

require_once MAILSVC_BRIDGE_DIR . '/translation.php';
require_once MAILSVC_BRIDGE_DIR . '/takeover.php';
require_once MAILSVC_BRIDGE_DIR . '/addresses.php';
require_once MAILSVC_BRIDGE_DIR . '/attachments.php';
require_once MAILSVC_BRIDGE_DIR . '/phpmailer.php';
require_once MAILSVC_BRIDGE_DIR . '/queue.php';
require_once MAILSVC_BRIDGE_DIR . '/privacy.php';
require_once MAILSVC_BRIDGE_DIR . '/sync.php';
require_once MAILSVC_BRIDGE_DIR . '/admin.php';
require_once MAILSVC_BRIDGE_DIR . '/forwarding.php';
require_once MAILSVC_BRIDGE_DIR . '/screens.php';
require_once MAILSVC_BRIDGE_DIR . '/service-status.php';
require_once MAILSVC_BRIDGE_DIR . '/admin-notices.php';
require_once MAILSVC_BRIDGE_DIR . '/relay.php';
require_once MAILSVC_BRIDGE_DIR . '/host-hooks.php';
require_once MAILSVC_BRIDGE_DIR . '/email-controls.php';
require_once MAILSVC_BRIDGE_DIR . '/abilities.php';
require_once MAILSVC_BRIDGE_DIR . '/abilities-registry.php';
require_once MAILSVC_BRIDGE_DIR . '/attention.php';
