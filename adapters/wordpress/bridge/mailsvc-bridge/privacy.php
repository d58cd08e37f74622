<?php
/**
 * Personal data export and erase for Tools → Export / Erase Personal
 * Data, on the service's tables through $wpdb.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/*
 * Personal data export and erase (Tools → Export / Erase Personal Data).
 *
 * The exporter and the eraser read and change the service's tables through
 * $wpdb, as wp_mail() writes them (queue.php), rather than calling the service's
 * REST API: the bridge has no credentials of its own for the API, WordPress
 * runs these callbacks in admin AJAX requests, WP-CLI and cron alike, and a
 * request must be answered even while the service is stopped. They do what
 * the service's GET /privacy/export and POST /privacy/erase do (app/privacy.go,
 * adapters/store/privacy.go), in the same shape and in pages of 100 logs.
 */

add_filter( 'wp_privacy_personal_data_exporters', 'mailsvc_bridge_register_exporter' );
add_filter( 'wp_privacy_personal_data_erasers', 'mailsvc_bridge_register_eraser' );

/** Logs per page of an export, and per call of an erase. */
const MAILSVC_BRIDGE_PRIVACY_PAGE = 100;

/**
 * Registers the email log's exporter.
 *
 * @param array $exporters Exporters by key.
 * @return array
 */
function mailsvc_bridge_register_exporter( $exporters ) {
	$exporters['mailsvc-email-log'] = array(
		'exporter_friendly_name' => __( 'Email log', 'mailsvc' ),
		'callback'               => 'mailsvc_bridge_privacy_export',
	);
	return $exporters;
}

/**
 * Registers the email log's eraser.
 *
 * @param array $erasers Erasers by key.
 * @return array
 */
function mailsvc_bridge_register_eraser( $erasers ) {
	$erasers['mailsvc-email-log'] = array(
		'eraser_friendly_name' => __( 'Email log', 'mailsvc' ),
		'callback'             => 'mailsvc_bridge_privacy_erase',
	);
	return $erasers;
}

/**
 * Returns the name of one of the service's tables.
 *
 * @param string $name The table's name without the prefix.
 * @return string
 */
function mailsvc_bridge_table( $name ) {
	global $wpdb;
	return ( isset( $wpdb->base_prefix ) ? $wpdb->base_prefix : $wpdb->prefix ) . 'mailsvc_' . $name;
}

/**
 * Reads one value of one of the service's tables, the query's errors
 * suppressed (the service may not have made the table yet): null when
 * the query fails or finds no row.
 *
 * @param string $name   The table's name without the prefix (mailsvc_bridge_table()).
 * @param string $where  The WHERE condition, constants only.
 * @param string $column What to select.
 * @return string|null
 */
function mailsvc_bridge_service_value( $name, $where, $column ) {
	global $wpdb;
	$table    = mailsvc_bridge_table( $name );
	$suppress = $wpdb->suppress_errors( true );
	// phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name is the site's prefix and a constant, the condition and column constants of the callers.
	$value = $wpdb->get_var( "SELECT {$column} FROM `{$table}` WHERE {$where}" );
	$wpdb->suppress_errors( $suppress );
	return $value;
}

/**
 * Reports whether one of the service's tables exists: an add-on module's
 * tables (the Pro suppression list and provider events) exist only when the service is built
 * with the module.
 *
 * @param string $name The table's name after mailsvc_.
 * @return bool
 */
function mailsvc_bridge_table_exists( $name ) {
	global $wpdb;
	$table = mailsvc_bridge_table( $name );
	return $table === $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $table ) ) );
}

/**
 * Returns the query (and its arguments) of the ids (column log_id) of the
 * logs naming an address as sender, recipient or Reply-To: the addresses
 * table, and the logs not indexed yet matched in their message column.
 *
 * @param string $email The address, lower-cased.
 * @return array Array( SQL, arguments ).
 */
function mailsvc_bridge_naming_ids( $email ) {
	global $wpdb;
	$r    = mailsvc_bridge_table( 'log_recipients' );
	$l    = mailsvc_bridge_table( 'logs' );
	$json = wp_json_encode( $email, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
	return array(
		"SELECT log_id FROM `{$r}` WHERE email = %s UNION SELECT id FROM `{$l}` WHERE recipients_indexed = 0 AND message LIKE %s",
		array( $email, '%"email":' . $wpdb->esc_like( $json ) . '%' ),
	);
}

/**
 * The email log's personal data exporter: one page of the logs naming the
 * address (oldest first, bodies as stored, other people's addresses left
 * out), the provider events naming it and, on page 1, its suppression
 * list entry (the events and the list when the service has the Pro
 * add-on's tables).
 *
 * @param string $email_address The address.
 * @param int    $page          The page, from 1.
 * @return array Array( 'data' => items, 'done' => bool ).
 */
function mailsvc_bridge_privacy_export( $email_address, $page = 1 ) {
	global $wpdb;
	$email = strtolower( trim( (string) $email_address ) );
	$page  = max( 1, (int) $page );
	$items = array();
	if ( '' === $email ) {
		return array( 'data' => $items, 'done' => true );
	}
	list( $naming, $args ) = mailsvc_bridge_naming_ids( $email );
	$args[] = MAILSVC_BRIDGE_PRIVACY_PAGE + 1;
	$args[] = ( $page - 1 ) * MAILSVC_BRIDGE_PRIVACY_PAGE;
	// phpcs:ignore WordPress.DB.PreparedSQL.NotPrepared -- table names are the site's prefix and constants.
	$ids  = array_map( 'intval', (array) $wpdb->get_col( $wpdb->prepare( "SELECT n.log_id FROM ({$naming}) n ORDER BY n.log_id LIMIT %d OFFSET %d", $args ) ) );
	$done = count( $ids ) <= MAILSVC_BRIDGE_PRIVACY_PAGE;
	$ids  = array_slice( $ids, 0, MAILSVC_BRIDGE_PRIVACY_PAGE );
	if ( ! empty( $ids ) ) {
		$in   = implode( ',', $ids );
		$logs = $wpdb->get_results( 'SELECT id, status, subject, text_body, html_body, message, created_at FROM `' . mailsvc_bridge_table( 'logs' ) . "` WHERE id IN ({$in}) ORDER BY id", ARRAY_A ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- integers.
		// The provider events are the Pro add-on's: a service built without
		// it has no events table.
		$events = mailsvc_bridge_table_exists( 'log_events' ) ? $wpdb->get_results( $wpdb->prepare( 'SELECT id, log_id, provider, event, occurred_at, detail FROM `' . mailsvc_bridge_table( 'log_events' ) . "` WHERE log_id IN ({$in}) AND detail LIKE %s ORDER BY id", '%' . $wpdb->esc_like( $email ) . '%' ), ARRAY_A ) : array(); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- integers.
		$by_log = array();
		foreach ( (array) $events as $ev ) {
			$by_log[ (int) $ev['log_id'] ][] = $ev;
		}
		foreach ( (array) $logs as $log ) {
			$items[] = mailsvc_bridge_log_item( $log, $email );
			foreach ( isset( $by_log[ (int) $log['id'] ] ) ? $by_log[ (int) $log['id'] ] : array() as $ev ) {
				$items[] = array(
					'group_id'    => 'mailsvc-email-events',
					'group_label' => __( 'Email delivery events', 'mailsvc' ),
					'item_id'     => 'mailsvc-log-event-' . $ev['id'],
					'data'        => array(
						array( 'name' => __( 'Email log', 'mailsvc' ), 'value' => 'mailsvc-log-' . $ev['log_id'] ),
						array( 'name' => __( 'Date', 'mailsvc' ), 'value' => mailsvc_bridge_rfc3339( $ev['occurred_at'] ) ),
						array( 'name' => __( 'Provider', 'mailsvc' ), 'value' => $ev['provider'] ),
						array( 'name' => __( 'Event', 'mailsvc' ), 'value' => $ev['event'] ),
						array( 'name' => __( 'Detail', 'mailsvc' ), 'value' => $ev['detail'] ),
					),
				);
			}
		}
	}
	if ( 1 === $page && mailsvc_bridge_table_exists( 'suppressions' ) ) {
		$s = $wpdb->get_row( $wpdb->prepare( 'SELECT id, email, reason, source_event, created_at FROM `' . mailsvc_bridge_table( 'suppressions' ) . '` WHERE email = %s', $email ), ARRAY_A ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- the table name.
		if ( $s ) {
			$items[] = array(
				'group_id'    => 'mailsvc-suppressions',
				'group_label' => __( 'Email suppression list', 'mailsvc' ),
				'item_id'     => 'mailsvc-suppression-' . $s['id'],
				'data'        => array(
					array( 'name' => __( 'Address', 'mailsvc' ), 'value' => $s['email'] ),
					array( 'name' => __( 'Reason', 'mailsvc' ), 'value' => $s['reason'] ),
					array( 'name' => __( 'Source', 'mailsvc' ), 'value' => $s['source_event'] ),
					array( 'name' => __( 'Added', 'mailsvc' ), 'value' => mailsvc_bridge_rfc3339( $s['created_at'] ) ),
				),
			);
		}
	}
	return array( 'data' => $items, 'done' => $done );
}

/**
 * Formats a stored UTC time as RFC 3339.
 *
 * @param string $time 'Y-m-d H:i:s[.u]' in UTC.
 * @return string
 */
function mailsvc_bridge_rfc3339( $time ) {
	$t = strtotime( substr( (string) $time, 0, 19 ) . ' UTC' );
	return false === $t ? (string) $time : gmdate( 'Y-m-d\TH:i:s\Z', $t );
}

/**
 * Returns the exported item of one log: in which fields the address
 * appears and how many other recipients there were (their addresses are
 * not exported), with the bodies and attachment names as stored.
 *
 * @param array  $log   The log's row.
 * @param string $email The address, lower-cased.
 * @return array
 */
function mailsvc_bridge_log_item( $log, $email ) {
	$m      = json_decode( (string) $log['message'], true );
	$m      = is_array( $m ) ? $m : array();
	$roles  = array();
	$others = 0;
	$fields = array(
		'From'     => isset( $m['from'] ) ? array( $m['from'] ) : array(),
		'To'       => isset( $m['to'] ) ? $m['to'] : array(),
		'Cc'       => isset( $m['cc'] ) ? $m['cc'] : array(),
		'Bcc'      => isset( $m['bcc'] ) ? $m['bcc'] : array(),
		'Reply-To' => isset( $m['reply_to'] ) ? $m['reply_to'] : array(),
	);
	foreach ( $fields as $name => $list ) {
		$named = false;
		foreach ( (array) $list as $a ) {
			if ( isset( $a['email'] ) && strtolower( trim( $a['email'] ) ) === $email ) {
				$named = true;
			} elseif ( in_array( $name, array( 'To', 'Cc', 'Bcc' ), true ) ) {
				++$others;
			}
		}
		if ( $named ) {
			$roles[] = $name;
		}
	}
	$data = array(
		array( 'name' => __( 'Date', 'mailsvc' ), 'value' => mailsvc_bridge_rfc3339( $log['created_at'] ) ),
		array( 'name' => __( 'Subject', 'mailsvc' ), 'value' => $log['subject'] ),
		array( 'name' => __( 'Status', 'mailsvc' ), 'value' => $log['status'] ),
		array( 'name' => __( 'Your address as', 'mailsvc' ), 'value' => implode( ', ', $roles ) ),
		array( 'name' => __( 'Other recipients', 'mailsvc' ), 'value' => (string) $others ),
	);
	if ( '' !== (string) $log['text_body'] ) {
		$data[] = array( 'name' => __( 'Text body', 'mailsvc' ), 'value' => $log['text_body'] );
	}
	if ( '' !== (string) $log['html_body'] ) {
		$data[] = array( 'name' => __( 'HTML body', 'mailsvc' ), 'value' => $log['html_body'] );
	}
	if ( ! empty( $m['attachments'] ) ) {
		$data[] = array( 'name' => __( 'Attachments', 'mailsvc' ), 'value' => implode( ', ', wp_list_pluck( $m['attachments'], 'filename' ) ) );
	}
	return array(
		'group_id'    => 'mailsvc-email-log',
		'group_label' => __( 'Email log', 'mailsvc' ),
		'item_id'     => 'mailsvc-log-' . $log['id'],
		'data'        => $data,
	);
}

/**
 * The email log's personal data eraser: erases the address from the next
 * 100 delivered or failed logs naming it (bodies and attachments removed,
 * the address replaced by deleted@site.invalid in the addresses, subject,
 * headers, last error and attempts; the provider events naming it
 * removed; statuses and delivery counts kept) and removes its suppression
 * list entry (the events and the list when the service has the Pro
 * add-on's tables). Logs still queued or sending are kept until sent.
 *
 * @param string $email_address The address.
 * @param int    $page          The page (each call erases the next batch).
 * @return array WordPress's eraser answer.
 */
function mailsvc_bridge_privacy_erase( $email_address, $page = 1 ) {
	global $wpdb;
	$email       = strtolower( trim( (string) $email_address ) );
	$replacement = function_exists( 'wp_privacy_anonymize_data' ) ? wp_privacy_anonymize_data( 'email' ) : 'deleted@site.invalid';
	$out         = array(
		'items_removed'  => false,
		'items_retained' => false,
		'messages'       => array(),
		'done'           => true,
	);
	if ( '' === $email || strtolower( $replacement ) === $email ) {
		return $out;
	}
	$logs_table            = mailsvc_bridge_table( 'logs' );
	list( $naming, $args ) = mailsvc_bridge_naming_ids( $email );

	$wpdb->query( 'START TRANSACTION' );
	// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.PreparedSQL.NotPrepared -- table names are the site's prefix and constants, ids integers.
	$ids     = array_map( 'intval', (array) $wpdb->get_col( $wpdb->prepare( "SELECT l.id FROM `{$logs_table}` l JOIN ({$naming}) n ON n.log_id = l.id WHERE l.status IN ('delivered', 'failed') ORDER BY l.id LIMIT %d FOR UPDATE", array_merge( $args, array( MAILSVC_BRIDGE_PRIVACY_PAGE ) ) ) ) );
	$ok      = '' === $wpdb->last_error;
	$pending = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM `{$logs_table}` l JOIN ({$naming}) n ON n.log_id = l.id WHERE l.status IN ('queued', 'sending', 'captured', 'held')", $args ) );
	$ok      = $ok && '' === $wpdb->last_error;
	if ( $ok && ! empty( $ids ) ) {
		$in   = implode( ',', $ids );
		$logs = (array) $wpdb->get_results( "SELECT id, subject, message, last_error FROM `{$logs_table}` WHERE id IN ({$in})", ARRAY_A );
		foreach ( $logs as $log ) {
			$ok = $ok && mailsvc_bridge_erase_log( $log, $email, $replacement );
		}
		$attempts = (array) $wpdb->get_results( 'SELECT id, response, error FROM `' . mailsvc_bridge_table( 'log_attempts' ) . "` WHERE log_id IN ({$in})", ARRAY_A );
		foreach ( $attempts as $a ) {
			$response = str_ireplace( $email, $replacement, (string) $a['response'] );
			$error    = str_ireplace( $email, $replacement, (string) $a['error'] );
			if ( $response !== $a['response'] || $error !== $a['error'] ) {
				$ok = $ok && false !== $wpdb->update( mailsvc_bridge_table( 'log_attempts' ), array( 'response' => $response, 'error' => $error ), array( 'id' => (int) $a['id'] ) );
			}
		}
		if ( mailsvc_bridge_table_exists( 'log_events' ) ) { // The Pro add-on's provider events.
			$ok = $ok && false !== $wpdb->query( $wpdb->prepare( 'DELETE FROM `' . mailsvc_bridge_table( 'log_events' ) . "` WHERE log_id IN ({$in}) AND detail LIKE %s", '%' . $wpdb->esc_like( $email ) . '%' ) );
		}
		$ok = $ok && false !== $wpdb->query( 'DELETE FROM `' . mailsvc_bridge_table( 'log_attachments' ) . "` WHERE log_id IN ({$in})" );
		$ok = $ok && false !== $wpdb->query( $wpdb->prepare( 'DELETE FROM `' . mailsvc_bridge_table( 'log_recipients' ) . "` WHERE log_id IN ({$in}) AND email = %s", $email ) );
	}
	$suppressed = false;
	if ( $ok ) {
		$suppressed = mailsvc_bridge_table_exists( 'suppressions' ) ? $wpdb->query( $wpdb->prepare( 'DELETE FROM `' . mailsvc_bridge_table( 'suppressions' ) . '` WHERE email = %s', $email ) ) : 0;
	}
	// phpcs:enable
	if ( ! $ok || false === $suppressed ) {
		$wpdb->query( 'ROLLBACK' );
		$out['messages'][] = __( 'The email log could not be erased: its tables are not usable.', 'mailsvc' );
		$out['items_retained'] = true;
		return $out;
	}
	$wpdb->query( 'COMMIT' );
	if ( ! empty( $ids ) ) {
		// The address leaves the log search's address index once no log
		// names it as a recipient (a message still queued keeps it). A
		// service older than that index has no such tables: nothing to do.
		$suppress = $wpdb->suppress_errors( true );
		$r        = mailsvc_bridge_table( 'log_recipients' );
		$a        = mailsvc_bridge_table( 'search_addresses' );
		// phpcs:disable WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table names are the site's prefix and constants.
		$wpdb->query( $wpdb->prepare( "DELETE FROM `{$a}` WHERE email = %s AND NOT EXISTS (SELECT 1 FROM `{$r}` r WHERE r.email = %s AND r.kind IN ('to', 'cc', 'bcc'))", $email, $email ) );
		$wpdb->query( $wpdb->prepare( 'DELETE FROM `' . mailsvc_bridge_table( 'search_grams' ) . "` WHERE email = %s AND NOT EXISTS (SELECT 1 FROM `{$a}` a WHERE a.email = %s)", $email, $email ) );
		// phpcs:enable
		$wpdb->suppress_errors( $suppress );
	}
	$out['items_removed'] = ! empty( $ids ) || $suppressed > 0;
	$out['done']          = count( $ids ) < MAILSVC_BRIDGE_PRIVACY_PAGE;
	if ( $out['done'] && $pending > 0 ) {
		$out['items_retained'] = true;
		$out['messages'][]     = sprintf(
			/* translators: %d: the number of email logs kept. */
			_n(
				'%d email log naming this address is still waiting to be sent and was kept; erase again once it is sent.',
				'%d email logs naming this address are still waiting to be sent and were kept; erase again once they are sent.',
				$pending,
				'mailsvc'
			),
			$pending
		);
	}
	return $out;
}

/**
 * Rewrites one log's row with an address erased, and its rows in the
 * addresses and subjects tables.
 *
 * @param array  $log         The log's id, subject, message and last error.
 * @param string $email       The erased address, lower-cased.
 * @param string $replacement What replaces it.
 * @return bool Whether every write succeeded.
 */
function mailsvc_bridge_erase_log( $log, $email, $replacement ) {
	global $wpdb;
	$m = json_decode( (string) $log['message'], true );
	$m = is_array( $m ) ? $m : array();
	$erase = function ( $list ) use ( $email, $replacement ) {
		$out = array();
		foreach ( (array) $list as $a ) {
			if ( isset( $a['email'] ) && strtolower( trim( $a['email'] ) ) === $email ) {
				$out[] = array( 'email' => $replacement );
			} else {
				if ( isset( $a['name'] ) ) {
					$a['name'] = str_ireplace( $email, $replacement, $a['name'] );
				}
				$out[] = $a;
			}
		}
		return $out;
	};
	$lists = array();
	foreach ( array( 'from', 'to', 'cc', 'bcc', 'reply_to' ) as $key ) {
		if ( 'from' === $key ) {
			$lists[ $key ] = isset( $m['from'] ) ? $erase( array( $m['from'] ) ) : array();
			if ( ! empty( $lists[ $key ] ) ) {
				$m['from'] = $lists[ $key ][0];
			}
		} elseif ( ! empty( $m[ $key ] ) ) {
			$m[ $key ]     = $erase( $m[ $key ] );
			$lists[ $key ] = $m[ $key ];
		} else {
			$lists[ $key ] = array();
		}
	}
	if ( ! empty( $m['headers'] ) ) {
		foreach ( $m['headers'] as $i => $h ) {
			$m['headers'][ $i ]['value'] = str_ireplace( $email, $replacement, (string) $h['value'] );
		}
	}
	unset( $m['attachments'] );
	$subject = str_ireplace( $email, $replacement, (string) $log['subject'] );
	$ok      = false !== $wpdb->update(
		mailsvc_bridge_table( 'logs' ),
		array(
			'recipients' => implode( ', ', mailsvc_bridge_render_addresses( array_merge( $lists['to'], $lists['cc'], $lists['bcc'] ) ) ),
			'subject'    => $subject,
			'text_body'  => '',
			'html_body'  => '',
			'message'    => wp_json_encode( $m, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ),
			'last_error' => str_ireplace( $email, $replacement, (string) $log['last_error'] ),
		),
		array( 'id' => (int) $log['id'] )
	);
	if ( $subject !== $log['subject'] ) {
		$ok = $ok && false !== $wpdb->update( mailsvc_bridge_table( 'log_subjects' ), array( 'subject' => $subject ), array( 'log_id' => (int) $log['id'] ) );
	}
	mailsvc_bridge_index_recipients(
		mailsvc_bridge_table( 'log_recipients' ),
		(int) $log['id'],
		array(
			'to'  => $lists['to'],
			'cc'  => $lists['cc'],
			'bcc' => $lists['bcc'],
			'frm' => $lists['from'],
			'rto' => $lists['reply_to'],
		)
	);
	return $ok;
}
