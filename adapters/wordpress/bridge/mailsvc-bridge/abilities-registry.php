<?php
/**
 * Abilities (WordPress 6.9 and later): the category and each ability
 * registered with its input and output schema.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/**
 * The JSON schema of a page of a list.
 *
 * @return array
 */
function mailsvc_bridge_ability_page_properties() {
	return array(
		'page'     => array(
			'type'        => 'integer',
			'minimum'     => 1,
			'description' => __( 'The page, from 1.', 'mailsvc' ),
		),
		'per_page' => array(
			'type'        => 'integer',
			'minimum'     => 1,
			'maximum'     => 100,
			'description' => __( 'Items per page (default 10).', 'mailsvc' ),
		),
	);
}

/**
 * The output schema of a list: items under $name, and the totals.
 *
 * @param string $name  The key of the items.
 * @param array  $items The schema of one item.
 * @return array
 */
function mailsvc_bridge_ability_list_schema( $name, $items ) {
	return array(
		'type'       => 'object',
		'properties' => array(
			$name         => array(
				'type'  => 'array',
				'items' => $items,
			),
			'total'       => array(
				'type'        => 'integer',
				'description' => __( 'Items in all pages (X-WP-Total).', 'mailsvc' ),
			),
			'total_pages' => array(
				'type'        => 'integer',
				'description' => __( 'Pages (X-WP-TotalPages).', 'mailsvc' ),
			),
			'capped'      => array(
				'type'        => 'boolean',
				'description' => __( 'The count stopped: at least this many.', 'mailsvc' ),
			),
		),
		'required'   => array( $name, 'total', 'total_pages' ),
	);
}

/**
 * The schema of a period's counts in the dashboard's statistics.
 *
 * @return array
 */
function mailsvc_bridge_ability_period_schema() {
	return array(
		'type'       => 'object',
		'properties' => array(
			'from'         => array( 'type' => 'string' ),
			'to'           => array( 'type' => 'string' ),
			'delivered'    => array( 'type' => 'integer' ),
			'failed'       => array( 'type' => 'integer' ),
			'partial'      => array( 'type' => 'integer' ),
			'total'        => array( 'type' => 'integer' ),
			'success_rate' => array( 'type' => array( 'number', 'null' ) ),
		),
	);
}

/**
 * The annotations of a readonly ability.
 *
 * @return array
 */
function mailsvc_bridge_ability_readonly_meta() {
	return array(
		'annotations'  => array(
			'readonly'    => true,
			'destructive' => false,
			'idempotent'  => true,
		),
		'show_in_rest' => true,
	);
}

/**
 * The annotations of an ability that sends mail.
 *
 * @return array
 */
function mailsvc_bridge_ability_sending_meta() {
	return array(
		'annotations'  => array(
			'readonly'    => false,
			'destructive' => false,
			'idempotent'  => false,
		),
		'show_in_rest' => true,
	);
}

/**
 * Registers the abilities (wp_abilities_api_init).
 */
function mailsvc_bridge_register_abilities() {
	if ( ! function_exists( 'wp_register_ability' ) ) {
		return;
	}
	$permission = 'mailsvc_bridge_ability_permission';
	$log_item   = array(
		'type'       => 'object',
		'properties' => array(
			'id'         => array( 'type' => 'integer' ),
			'status'     => array(
				'type' => 'string',
				'enum' => array( 'queued', 'sending', 'delivered', 'failed', 'captured', 'held' ),
			),
			'message'    => array(
				'type'        => 'object',
				'description' => __( 'The message: to, cc, bcc, from, subject, headers; bodies only in a log\'s detail, as the log-body mode keeps them.', 'mailsvc' ),
			),
			'attempts'   => array( 'type' => 'integer' ),
			'last_error' => array( 'type' => 'string' ),
			'body_mode'  => array( 'type' => 'string' ),
		),
		'required'   => array( 'id', 'status' ),
	);
	$counts     = array( 'type' => 'integer' );

	wp_register_ability(
		'mailsvc/get-stats',
		array(
			'label'               => __( 'Get mail statistics', 'mailsvc' ),
			'description'         => __( 'Returns the queue (queued, sending, live) and the delivered and failed counts over a range, today, the last 7 and 30 days, per connection, with success rates, as the mail dashboard shows them. The range is the last 30 days unless range, days or from/to is given (at most one).', 'mailsvc' ),
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(
					'range' => array(
						'type' => 'string',
						'enum' => array( 'today', '7d', '30d', '90d', '365d' ),
					),
					'days'  => array(
						'type'    => 'integer',
						'minimum' => 1,
						'maximum' => 365,
					),
					'from'  => array(
						'type'        => 'string',
						'description' => __( 'A date YYYY-MM-DD (local midnight) or an RFC 3339 time.', 'mailsvc' ),
					),
					'to'    => array(
						'type'        => 'string',
						'description' => __( 'A date YYYY-MM-DD (that whole day) or an RFC 3339 time (excluded).', 'mailsvc' ),
					),
				),
				'additionalProperties' => false,
				'default'              => array(),
			),
			'output_schema'       => array(
				'type'       => 'object',
				'properties' => array(
					'totals'       => array(
						'type'       => 'object',
						'properties' => array(
							'queued'       => $counts,
							'sending'      => $counts,
							'delivered'    => $counts,
							'failed'       => $counts,
							'partial'      => $counts,
							'captured'     => $counts,
							'success_rate' => array( 'type' => array( 'number', 'null' ) ),
						),
						'required'   => array( 'queued', 'sending', 'delivered', 'failed' ),
					),
					'today'        => mailsvc_bridge_ability_period_schema(),
					'last_7_days'  => mailsvc_bridge_ability_period_schema(),
					'last_30_days' => mailsvc_bridge_ability_period_schema(),
					'range'        => mailsvc_bridge_ability_period_schema(),
					'connections'  => array(
						'type'  => 'array',
						'items' => array( 'type' => 'object' ),
					),
					'timezone'     => array( 'type' => 'string' ),
				),
				'required'   => array( 'totals' ),
			),
			'execute_callback'    => 'mailsvc_bridge_ability_get_stats',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/search-logs',
		array(
			'label'               => __( 'Search email logs', 'mailsvc' ),
			'description'         => __( 'Lists email logs, newest first, without their bodies: by recipient address, domain or subject words (search), status and date range, a page at a time.', 'mailsvc' ),
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array_merge(
					array(
						'search'    => array(
							'type'        => 'string',
							'maxLength'   => 200,
							'description' => __( 'An address, "@domain", "local@", or words of the subject.', 'mailsvc' ),
						),
						'status'    => array(
							'type' => 'string',
							'enum' => array( 'queued', 'sending', 'failed', 'delivered', 'captured', 'held' ),
						),
						'date_from' => array(
							'type'        => 'string',
							'description' => __( 'An RFC 3339 time or a date YYYY-MM-DD (included).', 'mailsvc' ),
						),
						'date_to'   => array(
							'type'        => 'string',
							'description' => __( 'An RFC 3339 time or a date YYYY-MM-DD (that whole day included).', 'mailsvc' ),
						),
					),
					mailsvc_bridge_ability_page_properties()
				),
				'additionalProperties' => false,
				'default'              => array(),
			),
			'output_schema'       => mailsvc_bridge_ability_list_schema( 'logs', $log_item ),
			'execute_callback'    => 'mailsvc_bridge_ability_search_logs',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/get-log',
		array(
			'label'               => __( 'Get an email log', 'mailsvc' ),
			'description'         => __( 'Returns one email log: the message with its headers and bodies as the log-body mode kept them (redacted, full or none), the attachments\' names, types and sizes, and the delivery attempts.', 'mailsvc' ),
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(
					'id' => array(
						'type'    => 'integer',
						'minimum' => 1,
					),
				),
				'required'             => array( 'id' ),
				'additionalProperties' => false,
			),
			'output_schema'       => array_merge(
				$log_item,
				array(
					'properties' => array_merge(
						$log_item['properties'],
						array(
							'attachments'      => array( 'type' => 'array' ),
							'attempts_history' => array( 'type' => 'array' ),
							'redacted_count'   => array( 'type' => 'integer' ),
							'attachments_kept' => array( 'type' => 'boolean' ),
						)
					),
				)
			),
			'execute_callback'    => 'mailsvc_bridge_ability_get_log',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/list-connections',
		array(
			'label'               => __( 'List mail connections', 'mailsvc' ),
			'description'         => __( 'Lists the mail connections (secrets masked) with their health: health_status (unknown, healthy, degraded, down), last_checked_at, last_error, and oauth_status for OAuth providers.', 'mailsvc' ),
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => mailsvc_bridge_ability_page_properties(),
				'additionalProperties' => false,
				'default'              => array(),
			),
			'output_schema'       => mailsvc_bridge_ability_list_schema(
				'connections',
				array(
					'type'       => 'object',
					'properties' => array(
						'id'            => array( 'type' => 'integer' ),
						'name'          => array( 'type' => 'string' ),
						'driver'        => array( 'type' => 'string' ),
						'is_active'     => array( 'type' => 'boolean' ),
						'health_status' => array( 'type' => 'string' ),
						'last_error'    => array( 'type' => array( 'string', 'null' ) ),
					),
					'required'   => array( 'id', 'name', 'driver' ),
				)
			),
			'execute_callback'    => 'mailsvc_bridge_ability_list_connections',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/check-installation',
		array(
			'label'               => __( 'Check the mail installation', 'mailsvc' ),
			'description'         => __( 'Runs the installation checks of mailsvc doctor (database, bridge, service, REST through the site, screens, ...): healthy is false when a critical check is an error; each check says what to do in fix.', 'mailsvc' ),
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(),
				'additionalProperties' => false,
				'default'              => array(),
			),
			'output_schema'       => array(
				'type'       => 'object',
				'properties' => array(
					'healthy' => array( 'type' => 'boolean' ),
					'checks'  => array(
						'type'  => 'array',
						'items' => array(
							'type'       => 'object',
							'properties' => array(
								'name'     => array( 'type' => 'string' ),
								'title'    => array( 'type' => 'string' ),
								'critical' => array( 'type' => 'boolean' ),
								'verdict'  => array(
									'type' => 'string',
									'enum' => array( 'ok', 'warning', 'error' ),
								),
								'message'  => array( 'type' => 'string' ),
								'fix'      => array( 'type' => 'string' ),
							),
						),
					),
				),
				'required'   => array( 'healthy', 'checks' ),
			),
			'execute_callback'    => 'mailsvc_bridge_ability_check_installation',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_readonly_meta(),
		)
	);

	wp_register_ability(
		'mailsvc/send-test-email',
		array(
			'label'               => __( 'Send a test email', 'mailsvc' ),
			'description'         => __( 'Sends a test email at once through a connection (default: the default connection) and records a log. A provider that refuses it is success false with its reason, not an error.', 'mailsvc' ),
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(
					'to'            => array(
						'type'   => 'string',
						'format' => 'email',
					),
					'connection_id' => array(
						'type'    => 'integer',
						'minimum' => 1,
					),
					'subject'       => array( 'type' => 'string' ),
				),
				'required'             => array( 'to' ),
				'additionalProperties' => false,
			),
			'output_schema'       => array(
				'type'       => 'object',
				'properties' => array(
					'success'             => array( 'type' => 'boolean' ),
					'message'             => array( 'type' => 'string' ),
					'log_id'              => array( 'type' => 'integer' ),
					'status'              => array( 'type' => 'string' ),
					'connection_id'       => array( 'type' => 'integer' ),
					'to'                  => array( 'type' => 'string' ),
					'provider_message_id' => array( 'type' => 'string' ),
				),
				'required'   => array( 'success', 'message', 'log_id' ),
			),
			'execute_callback'    => 'mailsvc_bridge_ability_send_test_email',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_sending_meta(),
		)
	);

	$addresses = array(
		'type'  => 'array',
		'items' => array(
			'type'        => 'string',
			'description' => __( '"user@example.com" or "Name <user@example.com>".', 'mailsvc' ),
		),
	);
	wp_register_ability(
		'mailsvc/resend-log',
		array(
			'label'               => __( 'Resend an email log', 'mailsvc' ),
			'description'         => __( 'Puts a failed or delivered log back in the queue; with to, cc or bcc, sends it to those recipients instead as a new log (new_id). A log that no longer holds the whole message (redacted, no body, attachments not kept) cannot be resent.', 'mailsvc' ),
			'category'            => 'mailsvc',
			'input_schema'        => array(
				'type'                 => 'object',
				'properties'           => array(
					'id'  => array(
						'type'    => 'integer',
						'minimum' => 1,
					),
					'to'  => $addresses,
					'cc'  => $addresses,
					'bcc' => $addresses,
				),
				'required'             => array( 'id' ),
				'additionalProperties' => false,
			),
			'output_schema'       => array(
				'type'       => 'object',
				'properties' => array(
					'resent' => array( 'type' => 'boolean' ),
					'id'     => array( 'type' => 'integer' ),
					'new_id' => array( 'type' => 'integer' ),
				),
				'required'   => array( 'resent', 'id' ),
			),
			'execute_callback'    => 'mailsvc_bridge_ability_resend_log',
			'permission_callback' => $permission,
			'meta'                => mailsvc_bridge_ability_sending_meta(),
		)
	);
}
