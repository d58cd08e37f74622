<?php
/**
 * Email controls: WordPress core emails switched off from the Settings
 * screen, stopped through WordPress's own filters and counted per day.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/*
 * Email controls: WordPress core emails switched off from the Settings
 * screen (GET and PUT /settings/email-controls; docs/hooks.md, "Email
 * controls").
 *
 * The switches are the settings scope "email_controls" of
 * {$base_prefix}mailsvc_settings (kind => false when switched off), read
 * with one query the first time a core email is about to be built in a
 * request (a long-running PHP process reads them again after a minute);
 * a page load that builds no core email reads nothing.
 *
 * Each kind is stopped through the filter WordPress offers for it:
 * - where WordPress has a "send this email?" filter applied only when the
 *   email is about to be built (send_password_change_email,
 *   send_email_change_email, send_site_admin_email_change_email,
 *   auto_plugin_update_send_email, auto_theme_update_send_email), it
 *   answers false;
 * - elsewhere the filter of the email's contents or headers marks the
 *   email with an X-Mailsvc-Control header naming its kind, and a
 *   pre_wp_mail callback (which both this bridge's wp_mail() and
 *   WordPress's own apply) stops a marked email before it is queued or
 *   sent; the admin email change confirmation, whose only filter is its
 *   text, is marked by its recipient for the next wp_mail() of the
 *   request.
 *
 * Nothing stopped is lost silently: each stopped email adds one to its
 * kind's counter of the day (the site's calendar day) in
 * {$base_prefix}mailsvc_email_control_counts, which the dashboard and
 * GET /settings/email-controls show, and fires the action
 * mail_svc_email_suppressed. When the counter cannot be written (the
 * service's tables are missing), the email is sent as before.
 */

mailsvc_bridge_email_control_filters(
	array(
		'wp_new_user_notification_email_admin'  => 'new_user_admin',
		'wp_new_user_notification_email'        => 'new_user_user',
		'wp_password_change_notification_email' => 'password_change_admin',
		'auto_core_update_email'                => 'auto_update_core',
	),
	static function ( $kind ) {
		return static function ( $email ) use ( $kind ) {
			return mailsvc_bridge_email_control_mark_email( $email, array( $kind ) );
		};
	}
);
mailsvc_bridge_email_control_filters(
	array(
		'comment_notification_headers'           => 'comment_notification',
		'comment_moderation_headers'             => 'comment_moderation',
		'user_request_action_email_headers'      => 'privacy_request_user',
		'user_request_confirmed_email_headers'   => 'privacy_request_confirmed_admin',
		'user_erasure_fulfillment_email_headers' => 'privacy_erasure_done_user',
		'wp_privacy_personal_data_email_headers' => 'privacy_export_ready_user',
	),
	static function ( $kind ) {
		return static function ( $headers ) use ( $kind ) {
			return mailsvc_bridge_email_control_off( $kind ) ? mailsvc_bridge_email_control_mark( $headers, array( $kind ) ) : $headers;
		};
	}
);
mailsvc_bridge_email_control_filters(
	array(
		'send_password_change_email'         => 'password_change_user',
		'send_email_change_email'            => 'email_change_user',
		'send_site_admin_email_change_email' => 'admin_email_change',
		'auto_plugin_update_send_email'      => 'auto_update_plugins',
		'auto_theme_update_send_email'       => 'auto_update_themes',
	),
	static function ( $kind ) {
		return static function ( $send ) use ( $kind ) {
			return mailsvc_bridge_email_control_switch( $send, $kind );
		};
	}
);
add_filter( 'auto_plugin_theme_update_email', 'mailsvc_bridge_email_control_plugin_theme', PHP_INT_MAX, 4 );
add_filter( 'new_admin_email_content', 'mailsvc_bridge_email_control_new_admin_email', PHP_INT_MAX, 2 );
add_filter( 'pre_wp_mail', 'mailsvc_bridge_email_control_pre_wp_mail', PHP_INT_MIN, 2 );

/**
 * Hooks, at the last priority, one filter per core email: for each filter
 * name of $kinds, the callback $filter makes for its kind.
 *
 * @param array<string,string> $kinds  Filter name => kind of email.
 * @param callable             $filter Makes the filter of a kind.
 */
function mailsvc_bridge_email_control_filters( $kinds, $filter ) {
	foreach ( $kinds as $name => $kind ) {
		add_filter( $name, $filter( $kind ), PHP_INT_MAX );
	}
}

/**
 * The kinds of core email the controls cover, as the service lists them
 * (core.EmailControlKinds).
 *
 * @return string[]
 */
function mailsvc_bridge_email_control_kinds() {
	return array(
		'new_user_admin',
		'new_user_user',
		'password_change_user',
		'password_change_admin',
		'email_change_user',
		'comment_notification',
		'comment_moderation',
		'auto_update_core',
		'auto_update_plugins',
		'auto_update_themes',
		'privacy_request_user',
		'privacy_request_confirmed_admin',
		'privacy_erasure_done_user',
		'privacy_export_ready_user',
		'admin_email_change',
		'admin_email_change_confirm',
	);
}

/**
 * Reports whether a kind of core email is switched off: its key in the
 * settings scope "email_controls" is false. Read once per request (again
 * after a minute); when the table cannot be read, every kind is on.
 *
 * @param string $kind The kind.
 * @return bool
 */
function mailsvc_bridge_email_control_off( $kind ) {
	global $wpdb;
	static $off     = null;
	static $read_at = 0;
	if ( null === $off || time() - $read_at >= 60 ) {
		$off     = array();
		$read_at = time();
		if ( isset( $wpdb ) ) {
			$table    = mailsvc_bridge_table( 'settings' );
			$suppress = $wpdb->suppress_errors( true );
			// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
			$rows = $wpdb->get_results( "SELECT setting_key, setting_value FROM `{$table}` WHERE scope = 'email_controls'", ARRAY_A );
			$wpdb->suppress_errors( $suppress );
			foreach ( is_array( $rows ) ? $rows : array() as $row ) {
				if ( isset( $row['setting_key'], $row['setting_value'] ) && false === json_decode( (string) $row['setting_value'], true ) ) {
					$off[ $row['setting_key'] ] = true;
				}
			}
		}
	}
	return isset( $off[ $kind ] );
}

/**
 * Adds the X-Mailsvc-Control header naming kinds to wp_mail() headers.
 *
 * @param string|string[] $headers Headers as wp_mail() takes them.
 * @param string[]        $kinds   The kinds.
 * @return string|string[] The headers, of the same type.
 */
function mailsvc_bridge_email_control_mark( $headers, $kinds ) {
	$line = 'X-Mailsvc-Control: ' . implode( ',', $kinds );
	if ( is_array( $headers ) ) {
		$headers[] = $line;
		return $headers;
	}
	$headers = (string) $headers;
	if ( '' !== $headers && "\n" !== substr( $headers, -1 ) ) {
		$headers .= "\n";
	}
	return $headers . $line . "\n";
}

/**
 * Marks an email given as WordPress's filters of a whole email give it
 * (to, subject, message or body, headers) when every one of kinds is
 * switched off.
 *
 * @param array    $email The email.
 * @param string[] $kinds Its kinds.
 * @return array
 */
function mailsvc_bridge_email_control_mark_email( $email, $kinds ) {
	if ( ! is_array( $email ) || ! $kinds ) {
		return $email;
	}
	foreach ( $kinds as $kind ) {
		if ( ! mailsvc_bridge_email_control_off( $kind ) ) {
			return $email;
		}
	}
	$email['headers'] = mailsvc_bridge_email_control_mark( isset( $email['headers'] ) ? $email['headers'] : '', $kinds );
	return $email;
}

/**
 * Answers a "send this email?" filter: false for a switched-off kind,
 * once its count is written; otherwise what it was given.
 *
 * @param bool   $send Whether WordPress would send the email.
 * @param string $kind The kind.
 * @return bool
 */
function mailsvc_bridge_email_control_switch( $send, $kind ) {
	if ( ! $send || ! mailsvc_bridge_email_control_off( $kind ) ) {
		return $send;
	}
	return mailsvc_bridge_email_control_count( $kind, null ) ? false : $send;
}

/**
 * The email of an automatic plugin and theme update: marked when every
 * kind it reports on (plugins, themes) is switched off. WordPress's
 * updater leaves a switched-off kind out before it builds the email
 * (auto_plugin_update_send_email, auto_theme_update_send_email), so an
 * email that still reports on both is sent.
 *
 * @param array  $email      The email.
 * @param string $type       success, fail or mixed.
 * @param array  $successful The successful updates by type (plugin, theme).
 * @param array  $failed     The failed updates by type.
 * @return array
 */
function mailsvc_bridge_email_control_plugin_theme( $email, $type, $successful = array(), $failed = array() ) {
	$kinds = array();
	foreach ( array( 'plugin' => 'auto_update_plugins', 'theme' => 'auto_update_themes' ) as $key => $kind ) {
		if ( ! empty( $successful[ $key ] ) || ! empty( $failed[ $key ] ) ) {
			$kinds[] = $kind;
		}
	}
	return mailsvc_bridge_email_control_mark_email( $email, $kinds );
}

/**
 * The admin email change confirmation: its only filter is its text, so
 * when the kind is switched off its recipient (the new address) is
 * remembered, and the next wp_mail() of the request to that address is
 * stopped.
 *
 * @param string $text            The email's text.
 * @param array  $new_admin_email The change: hash and newemail.
 * @return string The text, unchanged.
 */
function mailsvc_bridge_email_control_new_admin_email( $text, $new_admin_email = array() ) {
	if ( is_array( $new_admin_email ) && ! empty( $new_admin_email['newemail'] ) && mailsvc_bridge_email_control_off( 'admin_email_change_confirm' ) ) {
		mailsvc_bridge_email_control_pending( (string) $new_admin_email['newemail'] );
	}
	return $text;
}

/**
 * Remembers (with an address) or takes (without one) the recipient of the
 * admin email change confirmation to stop.
 *
 * @param string|null $address The address to remember.
 * @return string The address remembered before, '' when none.
 */
function mailsvc_bridge_email_control_pending( $address = null ) {
	static $pending = '';
	$before         = $pending;
	$pending        = null === $address ? '' : $address;
	return $before;
}

/**
 * The pre_wp_mail callback: stops a marked email (and the admin email
 * change confirmation remembered for its recipient), counting it per
 * kind, and answers true as wp_mail() would for a sent one. An email
 * whose count cannot be written goes on (null).
 *
 * @param null|bool $return What an earlier callback answered.
 * @param array     $atts   wp_mail()'s arguments.
 * @return null|bool
 */
function mailsvc_bridge_email_control_pre_wp_mail( $return, $atts ) {
	if ( null !== $return || ! is_array( $atts ) ) {
		return $return;
	}
	$kinds   = array();
	$headers = isset( $atts['headers'] ) ? $atts['headers'] : array();
	if ( ! is_array( $headers ) ) {
		$headers = explode( "\n", str_replace( "\r\n", "\n", (string) $headers ) );
	}
	foreach ( $headers as $header ) {
		if ( is_string( $header ) && preg_match( '/^\s*x-mailsvc-control\s*:(.*)$/i', $header, $m ) ) {
			foreach ( explode( ',', $m[1] ) as $kind ) {
				$kind = trim( $kind );
				// Only a kind switched off stops an email: a tag that some
				// other code wrote for a kind that is on stops nothing.
				if ( in_array( $kind, mailsvc_bridge_email_control_kinds(), true ) && mailsvc_bridge_email_control_off( $kind ) ) {
					$kinds[ $kind ] = true;
				}
			}
		}
	}
	$pending = mailsvc_bridge_email_control_pending();
	if ( '' !== $pending ) {
		$to = isset( $atts['to'] ) ? $atts['to'] : array();
		$to = is_array( $to ) ? $to : explode( ',', (string) $to );
		if ( 1 === count( $to ) && 0 === strcasecmp( trim( (string) reset( $to ) ), $pending ) ) {
			$kinds['admin_email_change_confirm'] = true;
		} else {
			mailsvc_bridge_email_control_pending( $pending ); // another email came between: keep waiting.
		}
	}
	if ( ! $kinds ) {
		return $return;
	}
	$counted = true;
	foreach ( array_keys( $kinds ) as $kind ) {
		$counted = mailsvc_bridge_email_control_count( $kind, $atts ) && $counted;
	}
	return $counted ? true : null;
}

/**
 * Counts one stopped email of a kind: one upsert of its counter of the
 * day (the site's calendar day), then the mail_svc_email_suppressed
 * action.
 *
 * @param string     $kind The kind.
 * @param array|null $atts wp_mail()'s arguments, null when WordPress's
 *                         own switch stopped the email before it was built.
 * @return bool Whether the count was written.
 */
function mailsvc_bridge_email_control_count( $kind, $atts ) {
	global $wpdb;
	if ( ! isset( $wpdb ) ) {
		return false;
	}
	$day      = function_exists( 'wp_date' ) ? wp_date( 'Y-m-d' ) : gmdate( 'Y-m-d' );
	$table    = mailsvc_bridge_table( 'email_control_counts' );
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$done = $wpdb->query( $wpdb->prepare( "INSERT INTO `{$table}` (kind, day, suppressed) VALUES (%s, %s, 1) ON DUPLICATE KEY UPDATE suppressed = suppressed + 1", $kind, $day ) );
	$wpdb->suppress_errors( $suppress );
	if ( false === $done ) {
		return false;
	}
	/**
	 * Fires when the email controls stopped a WordPress core email.
	 *
	 * @param string     $kind The kind (docs/hooks.md, "Email controls").
	 * @param array|null $atts wp_mail()'s arguments, or null when the
	 *                         email was stopped before it was built.
	 */
	do_action( 'mail_svc_email_suppressed', $kind, $atts );
	return true;
}
