package wordpress

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// screensBaseKeyLabel derives the key that signs the screens base URL the
// bridge sends (admin.BaseHeader) from the salt.
const screensBaseKeyLabel = "mailsvc-screens-base"

// ScreensBaseKey derives the key that signs the bridge's screens base URL
// from wp_salt('auth'): the lowercase hex HMAC-SHA256 of
// "mailsvc-screens-base" keyed with the salt, as the bridge computes it
// (mailsvc_bridge_screens_key). It is another label than the hook
// runner's key (HookRunKey), so neither signature stands for the other.
func ScreensBaseKey(authSalt string) string {
	m := hmac.New(sha256.New, []byte(authSalt))
	m.Write([]byte(screensBaseKeyLabel))
	return hex.EncodeToString(m.Sum(nil))
}

// ScreensBaseKeyFunc returns a function that derives ScreensBaseKey from
// s's wp_salt('auth') on each call (the Salter caches the salt once it
// exists), for admin.Options.BaseKey.
func ScreensBaseKeyFunc(s *Salter) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		salt, err := s.Salt(ctx, "auth")
		if err != nil {
			return "", err
		}
		return ScreensBaseKey(salt), nil
	}
}
