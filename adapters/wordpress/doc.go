// Package wordpress authenticates requests exactly as WordPress core's REST
// API does, from the WordPress tables ({prefix}users, {prefix}usermeta,
// {prefix}options) and the salt constants of wp-config.php, and writes
// users and application passwords into those tables in WordPress's own
// format (standalone mode). The algorithms follow
// shared/research/wordpress-auth.md and are cross-checked in the tests
// against PHP and the WordPress source of Debian's wordpress package.
//
// Pieces:
//
//   - phpserialize.go: PHP serialize/unserialize (ordered *Array),
//     is_serialized, maybe_unserialize, PHP truthiness.
//   - password.go: phpass ($P$/$H$), WordPress 6.8 "$wp" bcrypt, plain
//     bcrypt, md5, wp_fast_hash ($generic$), application-password
//     normalisation and the cookie's pass_frag.
//   - salt.go: wp_salt() and wp_hash().
//   - auth.go, capabilities.go, request.go: the Authenticator (logged-in
//     cookie + REST nonce, or application password over HTTP Basic) and
//     WP_User's roles and capabilities.
//   - source.go: the Source the Authenticator reads through, and its gorm
//     implementation for MySQL/MariaDB and SQLite.
//   - standalone.go: EnsureSchema, CreateUser, CreateApplicationPassword.
//
// Decisions where WordPress versions or the product spec differ from core:
//
//   - pass_frag: the cookie HMAC is checked with both the 6.8+ rule and the
//     6.1 rule (they differ only for hash formats one of the versions
//     cannot have issued a cookie for), so no WordPress version setting is
//     needed.
//   - Application-password hashes of every format either version stores
//     are accepted ($generic$, $P$, bcrypt, and md5 as 6.1 would).
//   - Spec over core: a valid cookie without a nonce, or with a wrong one,
//     is EUNAUTHORIZED (core: anonymous, or 403 rest_cookie_invalid_nonce);
//     failed Basic credentials are EUNAUTHORIZED (core since 6.1.4:
//     anonymous). Neither ever authenticates anyone.
//   - Credentials written in standalone mode use phpass portable hashes,
//     which WordPress 6.1 and 6.8+ both verify.
//
// The HTTP layer decides whether a request is secure (TLS or a trusted
// proxy header), sets r.RemoteAddr to the client address it trusts (it is
// recorded as an application password's last_ip), and after a cookie
// authentication may send a fresh nonce:
// CreateNonce(user, a.SessionToken(r), "wp_rest").
//
// Not implemented: multisite (sitemeta salts and options, per-blog
// prefixes, super admins); the auth/secure_auth cookies (sent only to
// /wp-admin); a _wpnonce sent only in a form body; remove_accents() in
// sanitize_user (the default MySQL collations compare accents equal
// anyway); plugins that replace pluggable functions or hook the filters
// involved; sessions stored elsewhere than the session_tokens user meta.
package wordpress
