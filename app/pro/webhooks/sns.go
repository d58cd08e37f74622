package webhooks

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1 is SHA1withRSA
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/mailsvc/mailsvc/core"
)

// snsHost is the host an SNS certificate or subscription URL must name:
// sns.<region>.amazonaws.com (or .amazonaws.com.cn), as AWS's own
// message validators require.
var snsHost = regexp.MustCompile(`^sns\.[a-zA-Z0-9\-]{3,}\.amazonaws\.com(\.cn)?$`)

// maxCert bounds a downloaded signing certificate.
const maxCert = 64 << 10

// certCacheSize bounds the certificates kept in memory.
const certCacheSize = 16

// CheckSNSURL checks that raw is an https URL on an
// sns.<region>.amazonaws.com host (default port, no credentials), the
// only place SigningCertURL and SubscribeURL may point to.
func CheckSNSURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Port() != "" || !snsHost.MatchString(u.Hostname()) {
		return nil, errors.New("not an https URL on an sns.<region>.amazonaws.com host")
	}
	return u, nil
}

// SNSMessage is an SNS HTTP(S) delivery: a Notification, a
// SubscriptionConfirmation or an UnsubscribeConfirmation.
type SNSMessage struct {
	Type             string `json:"Type"`
	MessageID        string `json:"MessageId"`
	Token            string `json:"Token,omitempty"`
	TopicArn         string `json:"TopicArn"`
	Subject          string `json:"Subject,omitempty"`
	Message          string `json:"Message"`
	Timestamp        string `json:"Timestamp"`
	SignatureVersion string `json:"SignatureVersion"`
	Signature        string `json:"Signature"`
	SigningCertURL   string `json:"SigningCertURL"`
	SubscribeURL     string `json:"SubscribeURL,omitempty"`
	UnsubscribeURL   string `json:"UnsubscribeURL,omitempty"`
	// Lambda-style spellings, read as the URL ones.
	SigningCertURLAlt string `json:"SigningCertUrl,omitempty"`
	SubscribeURLAlt   string `json:"SubscribeUrl,omitempty"`
	// hasSubject tells an empty Subject from none.
	hasSubject bool
}

// StringToSign returns the canonical string SNS signs: for each key of
// the message type that is present, in byte order, "Key\nValue\n".
func (m *SNSMessage) StringToSign() string {
	var b strings.Builder
	add := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	if m.Type == "Notification" {
		add("Message", m.Message)
		add("MessageId", m.MessageID)
		if m.Subject != "" || m.hasSubject {
			add("Subject", m.Subject)
		}
		add("Timestamp", m.Timestamp)
		add("TopicArn", m.TopicArn)
		add("Type", m.Type)
		return b.String()
	}
	add("Message", m.Message)
	add("MessageId", m.MessageID)
	add("SubscribeURL", m.SubscribeURL)
	add("Timestamp", m.Timestamp)
	add("Token", m.Token)
	add("TopicArn", m.TopicArn)
	add("Type", m.Type)
	return b.String()
}

// SNSVerifier checks SNS signatures against the signing certificate
// (fetched over https from an sns.<region>.amazonaws.com host and
// cached) and confirms subscriptions.
type SNSVerifier struct {
	// Client makes the certificate and SubscribeURL requests; nil means
	// http.DefaultClient. Redirects are never followed.
	Client *http.Client

	mu    sync.Mutex
	certs map[string]*x509.Certificate
	order []string
}

// errUnavailable marks a failure to reach SNS (503, so SNS retries).
var errUnavailable = errors.New("sns unavailable")

func (v *SNSVerifier) get(ctx context.Context, u *url.URL, limit int64) ([]byte, error) {
	c := v.Client
	if c == nil {
		c = http.DefaultClient
	}
	nc := *c
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := nc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: %v", errUnavailable, u.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: GET %s%s: HTTP %d", errUnavailable, u.Host, u.Path, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", errUnavailable, u.Host, err)
	}
	return b, nil
}

// cert returns the signing certificate at raw, from the cache or
// fetched.
func (v *SNSVerifier) cert(ctx context.Context, raw string) (*x509.Certificate, error) {
	u, err := CheckSNSURL(raw)
	if err != nil || !strings.HasSuffix(u.Path, ".pem") {
		return nil, unauthorized("The SNS signing certificate URL is not trusted.")
	}
	key := u.String()
	v.mu.Lock()
	c := v.certs[key]
	v.mu.Unlock()
	if c != nil {
		return c, nil
	}
	b, err := v.get(ctx, u, maxCert)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, unauthorized("The SNS signing certificate is not PEM.")
	}
	c, err = x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, unauthorized("The SNS signing certificate does not parse.")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.certs == nil {
		v.certs = map[string]*x509.Certificate{}
	}
	if _, ok := v.certs[key]; !ok {
		v.order = append(v.order, key)
		if len(v.order) > certCacheSize {
			delete(v.certs, v.order[0])
			v.order = v.order[1:]
		}
	}
	v.certs[key] = c
	return c, nil
}

// Verify checks m's signature (SignatureVersion 1: SHA1withRSA, 2:
// SHA256withRSA) with the certificate at its SigningCertURL. An
// unverifiable message is an EUNAUTHORIZED error; SNS unreachable an
// EUNAVAILABLE one.
func (v *SNSVerifier) Verify(ctx context.Context, m *SNSMessage) error {
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil || len(sig) == 0 {
		return unauthorized("The SNS signature is missing.")
	}
	var h crypto.Hash
	var digest []byte
	switch m.SignatureVersion {
	case "1":
		s := sha1.Sum([]byte(m.StringToSign())) //nolint:gosec // the protocol's version 1
		h, digest = crypto.SHA1, s[:]
	case "2":
		s := sha256.Sum256([]byte(m.StringToSign()))
		h, digest = crypto.SHA256, s[:]
	default:
		return unauthorized("The SNS signature version is not supported.")
	}
	c, err := v.cert(ctx, m.SigningCertURL)
	if errors.Is(err, errUnavailable) {
		return core.Errorf(core.EUNAVAILABLE, "The SNS signing certificate could not be fetched; try again later.")
	} else if err != nil {
		return err
	}
	pub, ok := c.PublicKey.(*rsa.PublicKey)
	if !ok {
		return unauthorized("The SNS signing certificate has no RSA key.")
	}
	if rsa.VerifyPKCS1v15(pub, h, digest, sig) != nil {
		return unauthorized("The SNS signature does not verify.")
	}
	return nil
}

// Confirm confirms a subscription by GET on its SubscribeURL, which must
// be an https URL on an sns.<region>.amazonaws.com host.
func (v *SNSVerifier) Confirm(ctx context.Context, subscribeURL string) error {
	u, err := CheckSNSURL(subscribeURL)
	if err != nil {
		return core.InvalidField("SubscribeURL", "Must be an https URL on an sns.<region>.amazonaws.com host.")
	}
	if _, err := v.get(ctx, u, maxCert); err != nil {
		return core.Errorf(core.EUNAVAILABLE, "The SNS subscription could not be confirmed; SNS will send the confirmation again.")
	}
	return nil
}
