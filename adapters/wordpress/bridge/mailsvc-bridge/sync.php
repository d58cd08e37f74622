<?php
/**
 * What each page load publishes for the service, which runs outside PHP
 * and cannot call WordPress's filters: the OAuth redirect addresses, the
 * log redaction patterns and the results of the service's filters, each in
 * an autoloaded option written only when it changes.
 *
 * @package mailsvc
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/**
 * Publishes $value in the autoloaded option $name, written only when it
 * differs from what the option holds ($missing when there is none), so
 * that a page load that changes nothing writes nothing.
 *
 * @param string $name    The option.
 * @param mixed  $value   What to publish.
 * @param mixed  $missing What get_option() gives when the option is missing.
 */
function mailsvc_bridge_publish( $name, $value, $missing ) {
	if ( get_option( $name, $missing ) !== $value ) {
		update_option( $name, $value, true );
	}
}

add_action( 'wp_loaded', 'mailsvc_bridge_sync_oauth_redirects' );

/**
 * Publishes the site's mail_svc_{provider}_oauth_redirect_uri filters to the
 * service, which runs outside PHP and cannot call them: each filter is
 * applied to this site's own REST callback URL, and a result that differs
 * from it is an override, stored in the mailsvc_oauth_redirect_uris option
 * (provider => URI) that the service reads when it starts an authorization.
 * The option is written only when it changes, so a page load costs three
 * apply_filters() calls and no query (the option is autoloaded).
 */
function mailsvc_bridge_sync_oauth_redirects() {
	$overrides = array();
	foreach ( array( 'google', 'microsoft', 'zoho' ) as $provider ) {
		$hook = 'mail_svc_' . $provider . '_oauth_redirect_uri';
		if ( ! has_filter( $hook ) ) {
			continue;
		}
		$local = rest_url( 'mailsvc/v1/oauth/' . $provider . '/callback' );
		$uri   = apply_filters( $hook, $local, $provider );
		if ( is_string( $uri ) && '' !== $uri && $uri !== $local ) {
			$overrides[ $provider ] = $uri;
		}
	}
	mailsvc_bridge_publish( 'mailsvc_oauth_redirect_uris', $overrides, array() );
}

add_action( 'wp_loaded', 'mailsvc_bridge_sync_log_redact_patterns' );

/**
 * Publishes the site's mail_svc_log_redact_patterns filter to the service,
 * which runs outside PHP and cannot call it: the filter is applied to an
 * empty list, and the patterns it returns (PCRE patterns with their
 * delimiters, e.g. '/order-[0-9]+/i'; a capture group redacts only what it
 * captures) are stored in the mailsvc_log_redact_patterns option, which
 * the service reads before it redacts a stored email body (log_body
 * redacted mode). The option is written only when it changes, so a page
 * load costs one apply_filters() call and no query (the option is
 * autoloaded).
 */
function mailsvc_bridge_sync_log_redact_patterns() {
	$patterns = array();
	if ( has_filter( 'mail_svc_log_redact_patterns' ) ) {
		$filtered = apply_filters( 'mail_svc_log_redact_patterns', array() );
		foreach ( is_array( $filtered ) ? $filtered : array() as $pattern ) {
			if ( is_string( $pattern ) && '' !== $pattern ) {
				$patterns[] = $pattern;
			}
		}
	}
	mailsvc_bridge_publish( 'mailsvc_log_redact_patterns', $patterns, array() );
}

/*
 * The service's filters: mail_svc_rest_capability, mail_svc_sensitive_keys,
 * mail_svc_log_retention_days and mail_svc_api_debug_response_enabled.
 *
 * The service runs outside PHP and cannot call them, so each page load
 * applies every one of them that has a callback to the default the
 * service would use, and publishes the results that differ from it in the
 * autoloaded mailsvc_filters option, which the service reads again every
 * 30 seconds. The option is written only when a result changes; a page
 * load without these filters costs four has_filter() calls (and one small
 * query for the stored retention setting when a retention filter is
 * registered). The default a
 * filter receives is what the constants of wp-config.php give (a constant
 * sets the default, the filter has the last word, as in WordPress).
 */

add_action( 'wp_loaded', 'mailsvc_bridge_sync_filters' );

/**
 * Evaluates the service's filters and publishes their results.
 */
function mailsvc_bridge_sync_filters() {
	$published = array();

	if ( has_filter( 'mail_svc_rest_capability' ) ) {
		$default = mailsvc_bridge_default_capability();
		$cap     = apply_filters( 'mail_svc_rest_capability', $default, '/wp-json/mailsvc/v1' );
		if ( is_string( $cap ) && '' !== trim( $cap ) && $cap !== $default ) {
			$published['rest_capability'] = trim( $cap );
		}
	}

	if ( has_filter( 'mail_svc_sensitive_keys' ) ) {
		$default = array();
		if ( defined( 'MAILSVC_SENSITIVE_KEYS' ) && is_string( MAILSVC_SENSITIVE_KEYS ) ) {
			$default = array_values( array_filter( array_map( 'trim', explode( ',', MAILSVC_SENSITIVE_KEYS ) ), 'strlen' ) );
		}
		$keys = apply_filters( 'mail_svc_sensitive_keys', $default );
		$add  = array();
		foreach ( is_array( $keys ) ? $keys : array() as $key ) {
			if ( is_string( $key ) && '' !== trim( $key ) && ! in_array( trim( $key ), $default, true ) ) {
				$add[] = trim( $key );
			}
		}
		if ( ! empty( $add ) ) {
			$published['sensitive_keys'] = array_values( array_unique( $add ) );
		}
	}

	if ( has_filter( 'mail_svc_log_retention_days' ) ) {
		$default = mailsvc_bridge_log_retention_setting();
		$days    = apply_filters( 'mail_svc_log_retention_days', $default );
		if ( is_numeric( $days ) && (int) $days >= 0 && (int) $days !== $default ) {
			$published['log_retention_days'] = (int) $days;
		}
	}

	if ( has_filter( 'mail_svc_api_debug_response_enabled' ) ) {
		$default = false;
		if ( defined( 'MAIL_SVC_DEBUG_ATTACH_API_DEBUG' ) ) {
			$value   = constant( 'MAIL_SVC_DEBUG_ATTACH_API_DEBUG' );
			$default = is_bool( $value ) ? $value : in_array( strtolower( trim( (string) $value ) ), array( 'true', '1', 'yes', 'on' ), true );
		}
		$enabled = (bool) apply_filters( 'mail_svc_api_debug_response_enabled', $default );
		if ( $enabled !== $default ) {
			$published['api_debug_response_enabled'] = $enabled;
		}
	}

	// WordPress's own application password decisions, for the callers
	// that reach the service without the bridge (docs/security.md).
	// wp_is_application_passwords_available() also asks for HTTPS, which
	// the service checks itself: the filter is given true.
	if ( has_filter( 'wp_is_application_passwords_available' ) && ! apply_filters( 'wp_is_application_passwords_available', true ) ) {
		$published['app_passwords_unavailable'] = true;
	}
	if ( has_filter( 'wp_is_application_passwords_available_for_user' ) && empty( $published['app_passwords_unavailable'] ) ) {
		$off = mailsvc_bridge_app_passwords_unavailable_for();
		if ( ! empty( $off ) ) {
			$published['app_passwords_unavailable_for'] = $off;
		}
	}
	if ( has_action( 'wp_authenticate_application_password_errors' ) ) {
		$published['app_password_errors'] = true;
	}

	// The staging guard captures mail on a staging, development or local
	// site (docs/staging.md): wp_get_environment_type() reads the
	// WP_ENVIRONMENT_TYPE environment variable, which the service cannot
	// see, before the constant it can.
	if ( function_exists( 'wp_get_environment_type' ) ) {
		$environment = wp_get_environment_type();
		if ( 'production' !== $environment ) {
			$published['environment_type'] = $environment;
		}
	}

	// Written once even when empty: an autoloaded option that exists costs
	// no query on the next page loads, a missing one costs one each time.
	mailsvc_bridge_publish( 'mailsvc_filters', $published, null );
}

/**
 * The users who have application passwords and for whom the site's
 * wp_is_application_passwords_available_for_user filter says no.
 *
 * @return int[] User ids.
 */
function mailsvc_bridge_app_passwords_unavailable_for() {
	$users = get_users(
		array(
			'blog_id'  => 0,
			'meta_key' => '_application_passwords', // phpcs:ignore WordPress.DB.SlowDBQuery.slow_db_query_meta_key -- only the users who have one.
			'fields'   => 'all',
			'number'   => 1000,
		)
	);
	$off = array();
	foreach ( $users as $user ) {
		if ( ! apply_filters( 'wp_is_application_passwords_available_for_user', true, $user ) ) {
			$off[] = (int) $user->ID;
		}
	}
	sort( $off );
	return $off;
}

/**
 * The capability the service requires before any filter: wp-config.php's
 * MAILSVC_REST_CAPABILITY, else manage_options.
 *
 * @return string
 */
function mailsvc_bridge_default_capability() {
	return defined( 'MAILSVC_REST_CAPABILITY' ) && is_string( MAILSVC_REST_CAPABILITY ) && '' !== MAILSVC_REST_CAPABILITY
		? MAILSVC_REST_CAPABILITY : 'manage_options';
}

/**
 * The log_retention_days setting as the service stores it (the "general"
 * scope of {$base_prefix}mailsvc_settings, a JSON number), or the
 * service's default of 90 when it is not stored or cannot be read.
 *
 * @return int
 */
function mailsvc_bridge_log_retention_setting() {
	$value = mailsvc_bridge_service_value( 'settings', "scope = 'general' AND setting_key = 'log_retention_days'", 'setting_value' );
	$days  = null === $value ? null : json_decode( (string) $value );
	return is_int( $days ) && $days >= 0 ? $days : 90;
}
