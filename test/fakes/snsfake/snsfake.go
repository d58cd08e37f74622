// Package snsfake is a local stand-in for Amazon SNS's HTTPS side as an
// SNS subscriber sees it: it serves the signing certificate at
// https://sns.<region>.amazonaws.com/SimpleNotificationService-fake.pem
// and the SubscribeURL of subscription confirmations, over TLS with a
// certificate from its own test CA, and signs messages (SignatureVersion
// 1: SHA1withRSA, 2: SHA256withRSA) over SNS's canonical string. Clients
// reach it by dialing Addr for the sns host and trusting CAPEM.
package snsfake

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// CertPath is the path the signing certificate is served at.
const CertPath = "/SimpleNotificationService-fake.pem"

// Fake is a running SNS stand-in.
type Fake struct {
	// Host is the SNS host name the fake answers for.
	Host string
	// CAPEM is the test CA's certificate, PEM.
	CAPEM []byte

	srv           *httptest.Server
	signKey       *rsa.PrivateKey
	signCertPEM   []byte
	confirmations atomic.Int64
	certFetches   atomic.Int64
	lastToken     atomic.Value
}

// Start starts a fake for region (e.g. us-east-1), stopped when the test
// ends.
func Start(t testing.TB, region string) *Fake {
	t.Helper()
	f := &Fake{Host: "sns." + region + ".amazonaws.com"}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "snsfake test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	f.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	tlsKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tlsTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: f.Host},
		DNSNames: []string{f.Host}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	tlsDER, err := x509.CreateCertificate(rand.Reader, tlsTmpl, caCert, &tlsKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}

	f.signKey, err = rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	signTmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: f.Host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	signDER, err := x509.CreateCertificate(rand.Reader, signTmpl, caCert, &f.signKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	f.signCertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: signDER})

	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CertPath, func(w http.ResponseWriter, r *http.Request) {
		f.certFetches.Add(1)
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(f.signCertPEM)
	})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("Action") != "ConfirmSubscription" || r.URL.Query().Get("Token") == "" {
			http.NotFound(w, r)
			return
		}
		f.lastToken.Store(r.URL.Query().Get("Token"))
		f.confirmations.Add(1)
		w.Header().Set("Content-Type", "text/xml")
		_, _ = fmt.Fprint(w, `<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>arn:aws:sns:fake</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>`)
	})
	f.srv = httptest.NewUnstartedServer(mux)
	f.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{tlsDER}, PrivateKey: tlsKey}}}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

// Addr is the host:port to dial for Host.
func (f *Fake) Addr() string { return f.srv.Listener.Addr().String() }

// CertURL is the SigningCertURL of the fake's messages.
func (f *Fake) CertURL() string { return "https://" + f.Host + CertPath }

// Confirmations counts the subscription confirmations received.
func (f *Fake) Confirmations() int { return int(f.confirmations.Load()) }

// CertFetches counts the downloads of the signing certificate.
func (f *Fake) CertFetches() int { return int(f.certFetches.Load()) }

// Client returns an HTTP client that trusts the test CA only and dials
// the fake for every host.
func (f *Fake) Client() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.CAPEM)
	addr := f.Addr()
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
}

// WriteCA writes the CA certificate to dir and returns the file's path.
func (f *Fake) WriteCA(t testing.TB, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "snsfake-ca.pem")
	if err := os.WriteFile(p, f.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Message is an SNS delivery body, field by field.
type Message map[string]string

// stringToSign is SNS's canonical string: the type's keys present, in
// byte order, each as "Key\nValue\n".
func stringToSign(m Message) string {
	keys := []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"}
	if m["Type"] != "Notification" {
		keys = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	}
	var b strings.Builder
	for _, k := range keys {
		if v, ok := m[k]; ok {
			b.WriteString(k + "\n" + v + "\n")
		}
	}
	return b.String()
}

// Sign sets SignatureVersion ("1" or "2"), SigningCertURL and Signature
// of m and returns its JSON body.
func (f *Fake) Sign(m Message, version string) []byte {
	m["SignatureVersion"] = version
	m["SigningCertURL"] = f.CertURL()
	var sig []byte
	var err error
	if version == "1" {
		h := sha1.Sum([]byte(stringToSign(m))) //nolint:gosec // version 1
		sig, err = rsa.SignPKCS1v15(rand.Reader, f.signKey, crypto.SHA1, h[:])
	} else {
		h := sha256.Sum256([]byte(stringToSign(m)))
		sig, err = rsa.SignPKCS1v15(rand.Reader, f.signKey, crypto.SHA256, h[:])
	}
	if err != nil {
		panic(err)
	}
	m["Signature"] = base64.StdEncoding.EncodeToString(sig)
	b, _ := json.Marshal(m)
	return b
}

var seq atomic.Int64

// Notification returns a signed Notification of message (an SES
// notification's JSON) on topic, timestamped at.
func (f *Fake) Notification(topic, message string, at time.Time, version string) []byte {
	return f.Sign(Message{
		"Type": "Notification", "MessageId": fmt.Sprintf("fake-sns-%d-%d", time.Now().UnixNano(), seq.Add(1)),
		"TopicArn": topic, "Message": message, "Timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"),
		"UnsubscribeURL": "https://" + f.Host + "/?Action=Unsubscribe",
	}, version)
}

// SubscriptionConfirmation returns a signed SubscriptionConfirmation for
// topic, timestamped at, whose SubscribeURL is on the fake.
func (f *Fake) SubscriptionConfirmation(topic string, at time.Time, version string) []byte {
	token := fmt.Sprintf("token-%d", seq.Add(1))
	return f.Sign(Message{
		"Type": "SubscriptionConfirmation", "MessageId": fmt.Sprintf("fake-sub-%d", seq.Add(1)), "Token": token,
		"TopicArn": topic, "Message": "You have chosen to subscribe to the topic " + topic + ".",
		"SubscribeURL": "https://" + f.Host + "/?Action=ConfirmSubscription&TopicArn=" + topic + "&Token=" + token,
		"Timestamp":    at.UTC().Format("2006-01-02T15:04:05.000Z"),
	}, version)
}

// SESBounce returns the JSON of an SES Bounce notification of the
// message messageID to recipient; permanent chooses the bounce type.
func SESBounce(messageID, recipient string, permanent bool) string {
	typ, sub := "Transient", "MailboxFull"
	if permanent {
		typ, sub = "Permanent", "General"
	}
	b, _ := json.Marshal(map[string]any{
		"notificationType": "Bounce",
		"bounce": map[string]any{"bounceType": typ, "bounceSubType": sub, "timestamp": time.Now().UTC().Format(time.RFC3339),
			"feedbackId": "fb-1", "bouncedRecipients": []map[string]any{{"emailAddress": recipient, "action": "failed", "status": "5.1.1", "diagnosticCode": "smtp; 550 5.1.1 user unknown"}}},
		"mail": map[string]any{"messageId": messageID, "timestamp": time.Now().UTC().Format(time.RFC3339), "source": "site@example.com", "destination": []string{recipient}},
	})
	return string(b)
}

// SESComplaint returns the JSON of an SES Complaint notification.
func SESComplaint(messageID, recipient string) string {
	b, _ := json.Marshal(map[string]any{
		"notificationType": "Complaint",
		"complaint": map[string]any{"complaintFeedbackType": "abuse", "timestamp": time.Now().UTC().Format(time.RFC3339),
			"feedbackId": "fb-2", "complainedRecipients": []map[string]any{{"emailAddress": recipient}}},
		"mail": map[string]any{"messageId": messageID, "destination": []string{recipient}},
	})
	return string(b)
}

// SESDelivery returns the JSON of an SES Delivery notification.
func SESDelivery(messageID, recipient string) string {
	b, _ := json.Marshal(map[string]any{
		"notificationType": "Delivery",
		"delivery":         map[string]any{"timestamp": time.Now().UTC().Format(time.RFC3339), "recipients": []string{recipient}, "smtpResponse": "250 ok"},
		"mail":             map[string]any{"messageId": messageID, "destination": []string{recipient}},
	})
	return string(b)
}
