package sendgridfake

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of SendGrid's signed Event Webhook.
const (
	SignatureHeader = "X-Twilio-Email-Event-Webhook-Signature"
	TimestampHeader = "X-Twilio-Email-Event-Webhook-Timestamp"
)

// EventWebhook signs Event Webhook calls as SendGrid's signed event
// webhook does: ECDSA P-256 over SHA-256(timestamp || body), sent as the
// base64 of the ASN.1 DER signature.
type EventWebhook struct {
	key *ecdsa.PrivateKey
}

// NewEventWebhook returns a signer with a fresh P-256 key.
func NewEventWebhook() (*EventWebhook, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate event webhook key: %w", err)
	}
	return &EventWebhook{key: k}, nil
}

// PublicKey returns the verification key as SendGrid shows it: base64 of
// the DER SubjectPublicKeyInfo.
func (e *EventWebhook) PublicKey() string {
	der, err := x509.MarshalPKIXPublicKey(&e.key.PublicKey)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return base64.StdEncoding.EncodeToString(der)
}

// Sign returns the signature header value of a call with timestamp and
// body.
func (e *EventWebhook) Sign(timestamp string, body []byte) string {
	d := sha256.Sum256(append([]byte(timestamp), body...))
	sig, err := ecdsa.SignASN1(rand.Reader, e.key, d[:])
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// Header returns the signature and timestamp headers of a call made at.
func (e *EventWebhook) Header(at time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := http.Header{}
	h.Set(SignatureHeader, e.Sign(ts, body))
	h.Set(TimestampHeader, ts)
	return h
}

// Malleate returns another signature that verifies wherever sig does,
// made without the key: s replaced by n−s, re-encoded as DER and base64.
func Malleate(sig string) (string, error) {
	der, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return "", fmt.Errorf("malleate: %w", err)
	}
	var rs struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &rs); err != nil || len(rest) != 0 {
		return "", errors.New("malleate: not a DER ECDSA signature")
	}
	rs.S = new(big.Int).Sub(elliptic.P256().Params().N, rs.S)
	out, err := asn1.Marshal(rs)
	if err != nil {
		return "", fmt.Errorf("malleate: %w", err)
	}
	return base64.StdEncoding.EncodeToString(out), nil
}

// NonCanonicalBase64 spells a padded base64 text differently with the
// same bytes: the unused low bits of its last character before the
// padding set, which a lenient decoder ignores. It reports false when b64
// has no padding (no unused bits) or they are already set.
func NonCanonicalBase64(b64 string) (string, bool) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	body := strings.TrimRight(b64, "=")
	if body == "" || len(body) == len(b64) {
		return "", false
	}
	last := strings.IndexByte(alphabet, body[len(body)-1])
	if last < 0 || last&1 == 1 {
		return "", false
	}
	return body[:len(body)-1] + string(alphabet[last|1]) + b64[len(body):], true
}
