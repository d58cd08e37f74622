<?php
/**
 * Translation: every string the bridge shows goes through WordPress's
 * gettext functions with the text domain "mailsvc", loaded on init from
 * WordPress's languages folder (wp-content/languages/plugins/
 * mailsvc-{locale}.mo, where a site's own translation lives and survives
 * upgrades) or else from this folder's languages/ (docs/translation.md).
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** The bridge's text domain. */
const MAILSVC_BRIDGE_TEXT_DOMAIN = 'mailsvc';

add_action( 'init', 'mailsvc_bridge_load_textdomain', 0 );

/**
 * Loads the text domain (on init, before anything of the bridge is shown:
 * earlier, WordPress does not know the user's locale yet).
 */
function mailsvc_bridge_load_textdomain() {
	load_muplugin_textdomain( MAILSVC_BRIDGE_TEXT_DOMAIN, basename( MAILSVC_BRIDGE_DIR ) . '/languages' );
}
