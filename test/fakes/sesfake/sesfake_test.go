package sesfake_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mailsvc/mailsvc/test/fakes/sesfake"
)

const (
	region = "eu-west-1"
	akid   = "AKIAFAKEFAKEFAKE0001"
	secret = "fake/secret/0123456789abcdefghijklmnopqrs"
)

const rawMessage = "From: Shop <shop@example.com>\r\n" +
	"To: Ann <ann@example.org>\r\n" +
	"Cc: cid@example.org\r\n" +
	"Subject: =?UTF-8?q?Caf=C3=A9?=\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=XX\r\n" +
	"\r\n" +
	"--XX\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"caf=C3=A9\r\n" +
	"--XX\r\n" +
	"Content-Type: application/octet-stream\r\n" +
	"Content-Disposition: attachment; filename=\"a.bin\"\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"AAEC/w==\r\n" +
	"--XX--\r\n"

// signedRequest builds a request signed as the SDK signs it.
func signedRequest(t *testing.T, method, u, contentType, body string, creds aws.Credentials, signRegion, service string, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	sum := sha256.Sum256([]byte(body))
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, signRegion, at); err != nil {
		t.Fatal(err)
	}
	return req
}

type xmlError struct {
	Code string `xml:"Error>Code"`
	Type string `xml:"Error>Type"`
}

func TestQueryAuthentication(t *testing.T) {
	fake := sesfake.New(region, akid, secret)
	defer fake.Close()
	form := url.Values{"Action": {"SendRawEmail"}, "Version": {"2010-12-01"},
		"RawMessage.Data":       {base64.StdEncoding.EncodeToString([]byte(rawMessage))},
		"Destinations.member.1": {"ann@example.org"}, "Destinations.member.2": {"hidden@example.org"},
		"ConfigurationSetName": {"cs1"}, "Tags.member.1.Name": {"site"}, "Tags.member.1.Value": {"blog"},
	}.Encode()
	good := aws.Credentials{AccessKeyID: akid, SecretAccessKey: secret}
	now := time.Now()
	tests := []struct {
		name       string
		req        func() *http.Request
		wantStatus int
		wantCode   string
	}{
		{"signed", func() *http.Request {
			return signedRequest(t, "POST", fake.URL+"/", "application/x-www-form-urlencoded; charset=utf-8", form, good, region, "ses", now)
		}, 200, ""},
		{"unsigned", func() *http.Request {
			r, _ := http.NewRequest("POST", fake.URL+"/", strings.NewReader(form))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		}, 403, "MissingAuthenticationToken"},
		{"wrong secret", func() *http.Request {
			return signedRequest(t, "POST", fake.URL+"/", "application/x-www-form-urlencoded", form,
				aws.Credentials{AccessKeyID: akid, SecretAccessKey: "other"}, region, "ses", now)
		}, 403, "SignatureDoesNotMatch"},
		{"unknown key", func() *http.Request {
			return signedRequest(t, "POST", fake.URL+"/", "application/x-www-form-urlencoded", form,
				aws.Credentials{AccessKeyID: "AKIAUNKNOWN", SecretAccessKey: secret}, region, "ses", now)
		}, 403, "InvalidClientTokenId"},
		{"wrong region", func() *http.Request {
			return signedRequest(t, "POST", fake.URL+"/", "application/x-www-form-urlencoded", form, good, "us-east-1", "ses", now)
		}, 403, "SignatureDoesNotMatch"},
		{"wrong service", func() *http.Request {
			return signedRequest(t, "POST", fake.URL+"/", "application/x-www-form-urlencoded", form, good, region, "email", now)
		}, 403, "SignatureDoesNotMatch"},
		{"expired", func() *http.Request {
			return signedRequest(t, "POST", fake.URL+"/", "application/x-www-form-urlencoded", form, good, region, "ses", now.Add(-time.Hour))
		}, 400, "RequestExpired"},
		{"body changed after signing", func() *http.Request {
			r := signedRequest(t, "POST", fake.URL+"/", "application/x-www-form-urlencoded", form, good, region, "ses", now)
			tampered := strings.Replace(form, "cs1", "cs2", 1)
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(tampered)), int64(len(tampered))
			return r
		}, 403, "SignatureDoesNotMatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(tc.req())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantCode == "" {
				var out struct {
					XMLName   xml.Name `xml:"SendRawEmailResponse"`
					MessageID string   `xml:"SendRawEmailResult>MessageId"`
				}
				if err := xml.Unmarshal(body, &out); err != nil || out.MessageID == "" {
					t.Fatalf("success body %s: %v", body, err)
				}
				return
			}
			var e xmlError
			if err := xml.Unmarshal(body, &e); err != nil {
				t.Fatalf("error body %s: %v", body, err)
			}
			if e.Code != tc.wantCode || e.Type != "Sender" {
				t.Fatalf("error %+v, want code %s type Sender", e, tc.wantCode)
			}
		})
	}
	msgs := fake.Messages()
	if len(msgs) != 1 {
		t.Fatalf("recorded %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	p := m.Parsed
	if m.API != sesfake.APIv1 || m.Source != "shop@example.com" || m.ConfigurationSet != "cs1" ||
		strings.Join(m.Destinations, ",") != "ann@example.org,hidden@example.org" || m.TagMap()["site"] != "blog" {
		t.Fatalf("message %+v", m)
	}
	if p.Subject != "Café" || p.Text != "café" || p.From.Name != "Shop" || len(p.Cc) != 1 || p.Cc[0].Email != "cid@example.org" {
		t.Fatalf("parsed %+v", p)
	}
	if len(p.Attachments) != 1 || p.Attachments[0].Filename != "a.bin" || string(p.Attachments[0].Data) != "\x00\x01\x02\xff" {
		t.Fatalf("attachments %+v", p.Attachments)
	}
}

func TestFaultShapes(t *testing.T) {
	fake := sesfake.New(region, akid, secret)
	defer fake.Close()
	tests := []struct {
		name     string
		path     string
		status   int
		code     string
		wantJSON bool
	}{
		{"v1 throttling", "/", 400, "Throttling", false},
		{"v1 unavailable", "/", 503, "ServiceUnavailable", false},
		{"v2 too many requests", "/v2/email/outbound-emails", 429, "TooManyRequestsException", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake.FailNext(1, tc.status, tc.code, "")
			resp, err := http.Post(fake.URL+tc.path, "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.wantJSON {
				if got := resp.Header.Get("X-Amzn-ErrorType"); got != tc.code {
					t.Fatalf("X-Amzn-ErrorType %q, want %q", got, tc.code)
				}
				return
			}
			var e xmlError
			if err := xml.Unmarshal(body, &e); err != nil || e.Code != tc.code {
				t.Fatalf("body %s, want code %s (%v)", body, tc.code, err)
			}
			wantType := "Sender"
			if tc.status >= 500 {
				wantType = "Receiver"
			}
			if e.Type != wantType {
				t.Fatalf("type %q, want %q", e.Type, wantType)
			}
		})
	}
	// Faults answer before authentication: they are counted, but are not
	// authenticated requests.
	if got := fake.RequestCount(); got != len(tests) {
		t.Errorf("RequestCount = %d, want %d", got, len(tests))
	}
	if got := len(fake.Requests()); got != 0 {
		t.Errorf("%d authenticated requests recorded, want 0", got)
	}
}

func TestIMDSRequiresToken(t *testing.T) {
	m := sesfake.NewIMDS("web-role", sesfake.RoleCredentials{AccessKeyID: "ASIAROLE", SecretAccessKey: "s", Token: "tok"})
	defer m.Close()
	get := func(path, token string) int {
		req, _ := http.NewRequest("GET", m.URL+path, nil)
		if token != "" {
			req.Header.Set(sesfake.HeaderToken, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	put := func(ttl string) (int, string) {
		req, _ := http.NewRequest("PUT", m.URL+"/latest/api/token", nil)
		if ttl != "" {
			req.Header.Set(sesfake.HeaderTokenTTL, ttl)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == 200 && resp.Header.Get(sesfake.HeaderTokenTTL) != ttl {
			t.Fatalf("TTL header not echoed: %q", resp.Header.Get(sesfake.HeaderTokenTTL))
		}
		return resp.StatusCode, string(b)
	}
	for _, ttl := range []string{"", "0", "21601", "abc"} {
		if st, _ := put(ttl); st != 400 {
			t.Errorf("PUT token with TTL %q: status %d, want 400", ttl, st)
		}
	}
	st, token := put("600")
	if st != 200 || token == "" {
		t.Fatalf("PUT token: %d %q", st, token)
	}
	tests := []struct {
		path, token string
		want        int
	}{
		{"/latest/meta-data/iam/security-credentials/", "", 401},
		{"/latest/meta-data/iam/security-credentials/", "bogus", 401},
		{"/latest/meta-data/iam/security-credentials/", token, 200},
		{"/latest/meta-data/iam/security-credentials/web-role", "", 401},
		{"/latest/meta-data/iam/security-credentials/web-role", token, 200},
		{"/latest/meta-data/iam/security-credentials/other-role", token, 404},
	}
	for _, tc := range tests {
		if got := get(tc.path, tc.token); got != tc.want {
			t.Errorf("GET %s with token %q: %d, want %d", tc.path, tc.token, got, tc.want)
		}
	}
	if got := m.TokenTTLs(); len(got) != 1 || got[0] != 600 {
		t.Errorf("TokenTTLs = %v, want [600]", got)
	}
	if m.Refused() != 3 || m.CredentialReads() != 1 {
		t.Errorf("refused %d reads %d, want 3 and 1", m.Refused(), m.CredentialReads())
	}
}
