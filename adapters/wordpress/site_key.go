package wordpress

// siteKeyLabel derives a site's key from wp_salt('auth').
const siteKeyLabel = "mailsvc-site"

// SiteKey returns the key by which a site's bridge names its site to a
// service that serves several (the X-Mailsvc-Site header), from
// wp_salt('auth') as the bridge computes it:
// hash_hmac('sha256', 'mailsvc-site', wp_salt('auth')). Only the site's
// own salts give it, so no visitor can name a site.
func SiteKey(authSalt string) string {
	return hmacHex(authSalt, siteKeyLabel)
}
