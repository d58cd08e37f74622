<?php
/**
 * Host hooks: the service's events run here as WordPress actions, from
 * the outbox table, by the service's signed request or WP-cron; and the
 * route where the service asks WordPress to check an application password.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/**
 * Host hooks: the service's events run here as WordPress actions.
 *
 * The service records each event in {$base_prefix}mailsvc_hook_events (the
 * outbox), in the transaction of the change that causes it, and asks the
 * site to run it with a signed POST to the REST route
 * mailsvc-bridge/v1/hooks; a WP-cron event runs them every minute too, for
 * when that request fails. A run claims rows atomically (one UPDATE that
 * only takes rows nobody holds or whose holder's claim has expired), runs
 * each as do_action() and marks it done, so each event runs once across
 * the service's replicas and concurrent PHP requests. A row whose request
 * died is claimed again after MAILSVC_BRIDGE_HOOK_CLAIM_TIMEOUT seconds, at
 * most MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS times; a callback that throws is
 * recorded with its error and not run again. docs/hooks.md lists the hooks
 * and their arguments.
 */

/** Seconds after which a claimed, unfinished hook event is claimed again. */
const MAILSVC_BRIDGE_HOOK_CLAIM_TIMEOUT = 300;
/** Runs of one hook event at most (each started by a request that died). */
const MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS = 3;
/** Hook events claimed at a time. */
const MAILSVC_BRIDGE_HOOK_BATCH = 20;
/** Days an outbox row is kept. */
const MAILSVC_BRIDGE_HOOK_RETENTION_DAYS = 7;
/** Seconds a timestamped runner request stays valid. */
const MAILSVC_BRIDGE_HOOK_RUN_WINDOW = 60;

add_action( 'wp_loaded', 'mailsvc_bridge_publish_hooks' );
add_action( 'rest_api_init', 'mailsvc_bridge_register_hook_route' );
add_action( 'rest_api_init', 'mailsvc_bridge_register_auth_route' );
add_filter( 'cron_schedules', 'mailsvc_bridge_cron_schedules' );
add_action( 'init', 'mailsvc_bridge_schedule_hooks' );
add_action( 'mailsvc_bridge_run_hooks', 'mailsvc_bridge_cron_run_hooks' );

/**
 * The hooks the service fires in WordPress.
 *
 * @return string[] Hook names.
 */
function mailsvc_bridge_hook_names() {
	return array(
		'mail_svc_test_email_sent',
		'mail_svc_pro_webhook_received',
		'mail_svc_pro_webhook_ses',
		'mail_svc_api_debug',
		'mail_svc_delivered',
		'wp_mail_failed',
	);
}

/**
 * The outbox table.
 *
 * @return string Table name.
 */
function mailsvc_bridge_hook_table() {
	global $wpdb;
	return ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_hook_events';
}

/**
 * Decides which host hooks a message that wp_mail() queues fires when its
 * delivery ends: mail_svc_delivered (flag 1) and wp_mail_failed (flag 2),
 * each only while the site has a callback on it. For wp_mail_failed the
 * wp_mail() arguments are kept in the stored message ('wp_mail'), so the
 * WP_Error can carry them.
 *
 * @param array $stored    The message column, by reference.
 * @param array $mail_data The wp_mail() arguments (to, subject, message, headers, attachments).
 * @return int Flags for the log's host_hooks column.
 */
function mailsvc_bridge_message_hooks( &$stored, $mail_data ) {
	$flags = 0;
	if ( has_action( 'mail_svc_delivered' ) ) {
		$flags |= 1;
	}
	if ( has_action( 'wp_mail_failed' ) && false !== wp_json_encode( $mail_data ) ) {
		$flags            |= 2;
		$stored['wp_mail'] = $mail_data;
	}
	return $flags;
}

/**
 * Publishes the hooks the site has callbacks on in the mailsvc_host_hooks
 * option that the service reads (it records the events of the others not
 * at all). Written only when it changes.
 */
function mailsvc_bridge_publish_hooks() {
	$listeners = array();
	foreach ( mailsvc_bridge_hook_names() as $hook ) {
		if ( has_action( $hook ) ) {
			$listeners[] = $hook;
		}
	}
	// The service calls the runner at the site's stored address, never
	// one a page load derives from its Host header.
	$value = array( 'listeners' => $listeners );
	if ( get_option( 'mailsvc_host_hooks' ) !== $value ) {
		update_option( 'mailsvc_host_hooks', $value, true );
	}
}

/**
 * Registers the runner route the service calls: POST mailsvc-bridge/v1/hooks.
 */
function mailsvc_bridge_register_hook_route() {
	register_rest_route(
		'mailsvc-bridge/v1',
		'/hooks',
		array(
			'methods'             => 'POST',
			'callback'            => 'mailsvc_bridge_hook_route',
			'permission_callback' => 'mailsvc_bridge_hook_request_signed',
		)
	);
}

/**
 * The runner key: derived from wp_salt( 'auth' ), which the service
 * computes from the same wp-config.php.
 *
 * @return string Hex key.
 */
function mailsvc_bridge_hook_key() {
	return hash_hmac( 'sha256', 'mailsvc-hook-runner', wp_salt( 'auth' ) );
}

/**
 * Checks a runner request's signature: the X-Mailsvc-Signature header is
 * the hex HMAC-SHA256 of the X-Mailsvc-Timestamp header (Unix seconds,
 * within MAILSVC_BRIDGE_HOOK_RUN_WINDOW of now) under the runner key.
 *
 * @param WP_REST_Request $request The request.
 * @return true|WP_Error
 */
function mailsvc_bridge_hook_request_signed( $request ) {
	$ts  = (string) $request->get_header( 'x_mailsvc_timestamp' );
	$sig = (string) $request->get_header( 'x_mailsvc_signature' );
	if ( ! preg_match( '/^\d{1,12}$/', $ts ) || abs( time() - (int) $ts ) > MAILSVC_BRIDGE_HOOK_RUN_WINDOW
		|| ! hash_equals( hash_hmac( 'sha256', $ts, mailsvc_bridge_hook_key() ), strtolower( $sig ) ) ) {
		return new WP_Error( 'rest_forbidden', 'The hook runner request is not signed by the mailsvc service.', array( 'status' => 401 ) );
	}
	return true;
}

/**
 * Registers the route where the service asks WordPress to decide an
 * application password that reached it without the bridge (the direct
 * path, SMTP AUTH) on a site whose wp_authenticate_application_password_errors
 * callbacks decide per request: POST mailsvc-bridge/v1/auth.
 */
function mailsvc_bridge_register_auth_route() {
	register_rest_route(
		'mailsvc-bridge/v1',
		'/auth',
		array(
			'methods'             => 'POST',
			'callback'            => 'mailsvc_bridge_auth_route',
			'permission_callback' => 'mailsvc_bridge_auth_request_signed',
		)
	);
}

/**
 * Checks a question's signature: X-Mailsvc-Signature is the hex
 * HMAC-SHA256 of X-Mailsvc-Timestamp (Unix seconds, within
 * MAILSVC_BRIDGE_HOOK_RUN_WINDOW of now), a line feed and the body, under
 * the verdict key.
 *
 * @param WP_REST_Request $request The request.
 * @return true|WP_Error
 */
function mailsvc_bridge_auth_request_signed( $request ) {
	$ts  = (string) $request->get_header( 'x_mailsvc_timestamp' );
	$sig = (string) $request->get_header( 'x_mailsvc_signature' );
	if ( ! preg_match( '/^\d{1,12}$/', $ts ) || abs( time() - (int) $ts ) > MAILSVC_BRIDGE_HOOK_RUN_WINDOW
		|| ! hash_equals( hash_hmac( 'sha256', $ts . "\n" . $request->get_body(), mailsvc_bridge_verdict_key() ), strtolower( $sig ) ) ) {
		return new WP_Error( 'rest_forbidden', 'The question is not signed by the mailsvc service.', array( 'status' => 401 ) );
	}
	return true;
}

/**
 * Decides an application password as WordPress decides one on its own
 * API: wp_authenticate_application_password() with the client's address
 * and HTTPS state, so that every filter (availability, per user, the
 * errors callbacks) sees the client, and last_ip records it.
 *
 * @param WP_REST_Request $request The request: login, password, ip, https.
 * @return array|WP_Error The user's id, or WordPress's refusal (401).
 */
function mailsvc_bridge_auth_route( $request ) {
	$in = json_decode( $request->get_body(), true );
	if ( ! is_array( $in ) || ! isset( $in['login'], $in['password'] ) || ! is_string( $in['login'] ) || ! is_string( $in['password'] ) ) {
		return new WP_Error( 'bad_request', 'A login and a password are required.', array( 'status' => 400 ) );
	}
	$ip = isset( $in['ip'] ) && is_string( $in['ip'] ) ? filter_var( $in['ip'], FILTER_VALIDATE_IP ) : false;
	if ( false !== $ip ) {
		$_SERVER['REMOTE_ADDR'] = $ip;
	}
	if ( ! empty( $in['https'] ) ) {
		$_SERVER['HTTPS'] = 'on';
	} else {
		unset( $_SERVER['HTTPS'] );
	}
	add_filter( 'application_password_is_api_request', '__return_true', PHP_INT_MAX );
	$user = wp_authenticate_application_password( null, $in['login'], $in['password'] );
	remove_filter( 'application_password_is_api_request', '__return_true', PHP_INT_MAX );
	if ( $user instanceof WP_User ) {
		return array( 'user_id' => (int) $user->ID );
	}
	if ( is_wp_error( $user ) ) {
		return new WP_Error( $user->get_error_code(), $user->get_error_message(), array( 'status' => 401 ) );
	}
	return new WP_Error( 'application_passwords_disabled', 'Application passwords are not available.', array( 'status' => 401 ) );
}

/**
 * Runs the pending hooks for the service's request.
 *
 * @return array The number of events run.
 */
function mailsvc_bridge_hook_route() {
	return array( 'ran' => mailsvc_bridge_run_hooks( 10 ) );
}

/**
 * Adds the one-minute schedule of the cron event.
 *
 * @param array $schedules Schedules.
 * @return array Schedules.
 */
function mailsvc_bridge_cron_schedules( $schedules ) {
	$schedules['mailsvc_minute'] = array(
		'interval' => 60,
		'display'  => 'Every minute (mailsvc hooks)',
	);
	return $schedules;
}

/**
 * Schedules the cron event that runs pending hooks when the service's
 * request did not get through.
 */
function mailsvc_bridge_schedule_hooks() {
	if ( ! wp_next_scheduled( 'mailsvc_bridge_run_hooks' ) ) {
		wp_schedule_event( time(), 'mailsvc_minute', 'mailsvc_bridge_run_hooks' );
	}
}

/**
 * The cron event: runs pending hooks, gives up on events whose requests
 * kept dying, and prunes old rows.
 */
function mailsvc_bridge_cron_run_hooks() {
	global $wpdb;
	mailsvc_bridge_run_hooks( 25 );
	$table    = mailsvc_bridge_hook_table();
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$wpdb->query(
		$wpdb->prepare(
			"UPDATE `{$table}` SET done_at = UTC_TIMESTAMP(6), claimed_by = NULL, last_error = %s
			WHERE done_at IS NULL AND attempts >= %d AND claimed_at < UTC_TIMESTAMP(6) - INTERVAL %d SECOND",
			'Abandoned: the PHP requests running it died ' . MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS . ' times.',
			MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS,
			MAILSVC_BRIDGE_HOOK_CLAIM_TIMEOUT
		)
	);
	$wpdb->query( $wpdb->prepare( "DELETE FROM `{$table}` WHERE created_at < UTC_TIMESTAMP(6) - INTERVAL %d DAY", MAILSVC_BRIDGE_HOOK_RETENTION_DAYS ) );
	// phpcs:enable
	$wpdb->suppress_errors( $suppress );
}

/**
 * Runs pending hook events for up to $budget seconds and returns how many
 * ran. Each batch is claimed with a token of this run; each event is
 * started (its attempt counted, its claim renewed) only while the claim is
 * still this run's, and marked done after its callbacks return or throw.
 * Claimed events left when the budget is spent are released.
 *
 * @param int $budget Seconds.
 * @return int Events run.
 */
function mailsvc_bridge_run_hooks( $budget ) {
	global $wpdb;
	$table    = mailsvc_bridge_hook_table();
	$token    = bin2hex( random_bytes( 16 ) );
	$until    = microtime( true ) + $budget;
	$ran      = 0;
	$suppress = $wpdb->suppress_errors( true );
	// The ids of the events this run started (the integers of its rows).
	$started_ids = array();
	// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	while ( microtime( true ) < $until ) {
		$claimed = $wpdb->query(
			$wpdb->prepare(
				"UPDATE `{$table}` SET claimed_by = %s, claimed_at = UTC_TIMESTAMP(6)
				WHERE done_at IS NULL AND attempts < %d
				AND (claimed_at IS NULL OR claimed_at < UTC_TIMESTAMP(6) - INTERVAL %d SECOND)
				ORDER BY id LIMIT %d",
				$token,
				MAILSVC_BRIDGE_HOOK_MAX_ATTEMPTS,
				MAILSVC_BRIDGE_HOOK_CLAIM_TIMEOUT,
				MAILSVC_BRIDGE_HOOK_BATCH
			)
		);
		if ( ! $claimed ) {
			break; // Nothing pending, or the table is not there (yet).
		}
		$rows = $wpdb->get_results( $wpdb->prepare( "SELECT id, hook, args FROM `{$table}` WHERE claimed_by = %s AND done_at IS NULL ORDER BY id", $token ), ARRAY_A );
		foreach ( (array) $rows as $row ) {
			if ( microtime( true ) >= $until ) {
				break;
			}
			$started = $wpdb->query( $wpdb->prepare( "UPDATE `{$table}` SET attempts = attempts + 1, claimed_at = UTC_TIMESTAMP(6) WHERE id = %d AND claimed_by = %s AND done_at IS NULL", $row['id'], $token ) );
			if ( 1 !== (int) $started ) {
				continue; // Our claim expired and another request holds it.
			}
			$started_ids[] = (int) $row['id'];
			$error         = mailsvc_bridge_run_hook( (string) $row['hook'], (string) $row['args'] );
			// The event ran: it is marked done, tried again when the
			// database answers with an error (a deadlock between runners),
			// since an event left claimed would run once more after its
			// claim expires.
			for ( $try = 0; $try < 5; $try++ ) {
				if ( false !== $wpdb->query( $wpdb->prepare( "UPDATE `{$table}` SET done_at = UTC_TIMESTAMP(6), claimed_by = NULL, last_error = NULLIF(%s, '') WHERE id = %d AND claimed_by = %s", $error, $row['id'], $token ) ) ) {
					break;
				}
				usleep( 20000 * ( $try + 1 ) );
			}
			++$ran;
		}
	}
	// Release what this run claimed but did not start. An event it
	// started stays claimed even if marking it done failed: it runs again
	// only once its claim has expired, as for a request that died.
	$keep = empty( $started_ids ) ? '' : ' AND id NOT IN (' . implode( ',', $started_ids ) . ')';
	$wpdb->query( $wpdb->prepare( "UPDATE `{$table}` SET claimed_by = NULL, claimed_at = NULL WHERE claimed_by = %s AND done_at IS NULL{$keep}", $token ) );
	// phpcs:enable
	$wpdb->suppress_errors( $suppress );
	return $ran;
}

/**
 * Runs one hook event with its arguments (a JSON array). wp_mail_failed
 * gets WordPress's own argument, a WP_Error whose data are the wp_mail()
 * arguments and the log id; the other hooks get the arguments as they are.
 *
 * @param string $hook The hook.
 * @param string $json Its arguments.
 * @return string The error a callback threw, or ''.
 */
function mailsvc_bridge_run_hook( $hook, $json ) {
	if ( ! in_array( $hook, mailsvc_bridge_hook_names(), true ) ) {
		return 'Not a mailsvc hook: ' . $hook;
	}
	$args = json_decode( $json, true );
	if ( ! is_array( $args ) ) {
		return 'The arguments are not a JSON array.';
	}
	// On a multisite network a message's hooks run on the site that sent it.
	$site     = mailsvc_bridge_hook_site( $hook, $args );
	$switched = $site > 0 && $site !== (int) get_current_blog_id() && switch_to_blog( $site );
	try {
		if ( 'wp_mail_failed' === $hook ) {
			$event = isset( $args[0] ) && is_array( $args[0] ) ? $args[0] : array();
			$data  = isset( $event['mail_data'] ) && is_array( $event['mail_data'] ) ? $event['mail_data'] : array();
			$data['mailsvc_log_id'] = isset( $event['log_id'] ) ? (int) $event['log_id'] : 0;
			$error = isset( $event['error'] ) ? (string) $event['error'] : '';
			/** This action is documented in wp-includes/pluggable.php */
			do_action( 'wp_mail_failed', new WP_Error( 'wp_mail_failed', $error, $data ) );
		} else {
			do_action_ref_array( $hook, array_values( $args ) );
		}
	} catch ( Throwable $e ) {
		return get_class( $e ) . ': ' . $e->getMessage();
	} finally {
		if ( $switched ) {
			restore_current_blog();
		}
	}
	return '';
}

/**
 * The site (blog id) whose message a hook event is about, on a multisite
 * network: the site_id of the log that wp_mail_failed and
 * mail_svc_delivered name; 0 when not on a network or not known (a log
 * already removed).
 *
 * @param string $hook The hook.
 * @param array  $args Its arguments.
 * @return int
 */
function mailsvc_bridge_hook_site( $hook, $args ) {
	global $wpdb;
	if ( ! is_multisite() ) {
		return 0;
	}
	$log_id = 0;
	if ( 'wp_mail_failed' === $hook && isset( $args[0]['log_id'] ) ) {
		$log_id = (int) $args[0]['log_id'];
	} elseif ( 'mail_svc_delivered' === $hook && isset( $args[0] ) ) {
		$log_id = (int) $args[0];
	}
	if ( $log_id <= 0 ) {
		return 0;
	}
	$table    = mailsvc_bridge_table( 'logs' );
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant.
	$site = (int) $wpdb->get_var( $wpdb->prepare( "SELECT site_id FROM `{$table}` WHERE id = %d", $log_id ) );
	$wpdb->suppress_errors( $suppress );
	return $site;
}
