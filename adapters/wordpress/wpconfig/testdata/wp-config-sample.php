<?php
/**
 * The base configuration for WordPress, as a site using mailsvc writes it.
 *
 * @package WordPress
 */

// ** Database settings - You can get this info from your web host ** //
/** The name of the database for WordPress */
define( 'DB_NAME', 'wordpress' );

/** Database username */
define( 'DB_USER', 'wp_user' );

/** Database password */
define( 'DB_PASSWORD', 'p@ss\'w"rd\\x' );

/** Database hostname */
define( 'DB_HOST', '127.0.0.1:3307' );

/** Database charset to use in creating database tables. */
define( 'DB_CHARSET', 'utf8' );

/** The database collate type. Don't change this if in doubt. */
define( 'DB_COLLATE', 'utf8_general_ci' );

/**#@+
 * Authentication unique keys and salts.
 *
 * @since 2.6.0
 */
define( 'AUTH_KEY',         'k#5]Y\+%x\'p{N<|Qb/L^7zOu$~c-8@w' );
define( 'SECURE_AUTH_KEY',  'L!z)Q7&|mR<E6_Uy:0V5rT%jPw+xsC' );
define( 'LOGGED_IN_KEY',    '=xK8$eA2#s@F}gB1nQ(zY7!hJ^vM4;l' );
define( 'NONCE_KEY',        'b9W*u%E[o3Tq&y6}Hc?k2Lr$Zp/Ng=' );
define( 'AUTH_SALT',        'Vt4#I_f!sM1@dP0)eO8(yQ7*gR6&hS' );
define( 'SECURE_AUTH_SALT', 'u5^Jk6%Ll7$Mm8#Nn9@Oo0!Pp1)Qq2' );
define( 'LOGGED_IN_SALT',   '3Rr(4Ss*5Tt&6Uu^7Vv%8Ww$9Xx#0Y' );
define( 'NONCE_SALT',       'y@1Zz!2Aa)3Bb(4Cc*5Dd&6Ee^7Ff%' );

/**#@-*/

/**
 * WordPress database table prefix.
 *
 * You can have multiple installations in one database if you give each
 * a unique prefix. Only numbers, letters, and underscores please!
 */
$table_prefix = 'site1_';

/**
 * For developers: WordPress debugging mode.
 */
define( 'WP_DEBUG', false );

/* Add any custom values between this line and the "stop editing" line. */

// mailsvc: pinned credentials and behaviour.
define( 'MAILSVC_SMTP_PASSWORD', 'smtp-secret' );
define( 'MAIL_SVC_DEBUG_HTTP', true );
define( 'MAIL_SVC_PRESERVE_DATA', false );
define( 'MAILSVC_AWS_SES_SMTP_PORT', 587 );
define( 'MAILSVC_AWS_SES_ENABLE_V2_API', TRUE );
define( 'MAILSVC_AWS_REGION', getenv( 'AWS_REGION' ) ?: 'eu-west-1' );

if ( ! defined( 'WP_ENVIRONMENT_TYPE' ) ) {
	define( 'WP_ENVIRONMENT_TYPE', 'staging' );
}

defined( 'MAIL_SVC_DEBUG_SECRET_VISIBILITY' ) || define( 'MAIL_SVC_DEBUG_SECRET_VISIBILITY', 'mask' );

/*
 * Multisite is off.
 *
 * define( 'WP_ALLOW_MULTISITE', true );
 */

# Memory.
define( 'WP_MEMORY_LIMIT', '256M' );

define( 'WP_HOME', 'https://' . 'example.com' );
define( 'WP_SITEURL', WP_HOME . '/wp' );
define( 'DISALLOW_FILE_EDIT', true );
define( 'AUTOSAVE_INTERVAL', 60 * 5 );
define( 'WP_POST_REVISIONS', 0x0A );





/* That's all, stop editing! Happy publishing. */

/** Absolute path to the WordPress directory. */
if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}

/** Sets up WordPress vars and included files. */
require_once ABSPATH . 'wp-settings.php';
