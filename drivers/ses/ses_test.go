package ses_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/ses"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/test/fakes/sesfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

const (
	region    = "eu-central-1"
	accessKey = "AKIATESTSTATIC000001"
	secretKey = "s3cr3t/STATIC+key/0123456789abcdefghijk"
)

// fake is the SES fake as the conformance suite drives it. The suite's
// key is the secret access key of accessKey; the fake refuses another one
// as SES does (403 SignatureDoesNotMatch).
type fake struct{ *sesfake.Server }

// awsCodes are the AWS error codes the fake answers with for the HTTP
// statuses the suite injects.
var awsCodes = map[int]string{400: "MessageRejected", 403: "AccessDenied", 429: "TooManyRequestsException",
	500: "InternalFailure", 503: "ServiceUnavailable"}

func (f fake) URL() string            { return f.Server.URL }
func (f fake) Requests() int          { return f.Server.RequestCount() }
func (f fake) FailNext(n, status int) { f.Server.FailNext(n, status, awsCodes[status], "") }

// Messages reads the recorded raw messages. Bcc recipients never show in
// the message itself: they are the envelope destinations that are neither
// To nor Cc.
func (f fake) Messages() []drivertest.Message {
	var out []drivertest.Message
	for _, m := range f.Server.Messages() {
		p := m.Parsed
		rec := drivertest.Recorded([]*sesfake.ParsedMessage{p})[0]
		rec.ID = m.ID
		rec.Text, rec.HTML = strings.ReplaceAll(p.Text, "\r\n", "\n"), strings.ReplaceAll(p.HTML, "\r\n", "\n")
		rec.Headers = map[string]string{}
		visible := map[string]bool{}
		for _, a := range append(rec.To, rec.Cc...) {
			visible[a.Email] = true
		}
		for _, d := range m.Destinations {
			if !visible[d] {
				rec.Bcc = append(rec.Bcc, core.Address{Email: d})
			}
		}
		for k := range p.Header {
			rec.Headers[k] = p.Header.Get(k)
		}
		out = append(out, rec)
	}
	return out
}

// startSES starts the SES fake that knows the test's key, closed when t
// ends.
func startSES(t *testing.T) *sesfake.Server {
	f := sesfake.New(region, accessKey, secretKey)
	t.Cleanup(f.Close)
	return f
}

func TestConformance(t *testing.T) {
	h := drivertest.Harness{
		KeepsHeaders:      true,
		Slug:              ses.Slug,
		Key:               secretKey,
		WrongKey:          "wrong/secret/0123456789abcdefghijklmn",
		Start:             func() drivertest.Fake { return fake{sesfake.New(region, accessKey, secretKey)} },
		AttachmentsByName: true,
		Settings: func(url, key string) core.Settings {
			return core.Settings{"region": region, "access_key": accessKey, "secret": key, "custom_endpoint": url}
		},
	}
	t.Run("Send", func(t *testing.T) { drivertest.Send(t, h) })
	t.Run("Verify", func(t *testing.T) { drivertest.Verify(t, h) })
}

func simpleMessage() *core.Message {
	return &core.Message{
		From:    core.Address{Email: "shop@example.com"},
		To:      []core.Address{{Email: "ann@example.org"}},
		Subject: "Hi",
		Text:    "Hello",
	}
}

func staticSettings(fake *sesfake.Server, extra core.Settings) core.Settings {
	s := core.Settings{"region": region, "access_key": accessKey, "secret": secretKey, "custom_endpoint": fake.URL}
	maps.Copy(s, extra)
	return s
}

// newTransport validates settings through the registered driver's schema,
// as the connections use case does, then builds the transport.
func newTransport(t *testing.T, settings core.Settings) core.Transport {
	t.Helper()
	d, ok := core.LookupDriver(ses.Slug)
	if !ok {
		t.Fatal("driver ses is not registered")
	}
	if err := d.ValidateSettings(settings); err != nil {
		t.Fatalf("ValidateSettings: %v", err)
	}
	tr, err := d.New(&core.Connection{ID: 7, Driver: ses.Slug, Settings: settings}, core.DriverEnv{HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tr
}

func emailsOf(in []sesfake.Address) []string {
	var out []string
	for _, a := range in {
		out = append(out, a.Email)
	}
	return out
}

func TestSendRoundTrip(t *testing.T) {
	fake := startSES(t)
	tests := []struct {
		name     string
		extra    core.Settings
		wantAPI  string
		wantFrom sesfake.Address
		wantCS   string
		wantTags map[string]string
	}{
		{"v1 plain", nil, sesfake.APIv1, sesfake.Address{Name: "Shop", Email: "shop@example.com"}, "", map[string]string{}},
		{"v1 configuration set and tags", core.Settings{"configuration_set": "marketing", "static_tags": "site=blog, env=prod"},
			sesfake.APIv1, sesfake.Address{Name: "Shop", Email: "shop@example.com"}, "marketing", map[string]string{"site": "blog", "env": "prod"}},
		{"v2 configuration set and tags", core.Settings{"enable_v2_api": true, "configuration_set": "tx", "static_tags": "app=mailsvc"},
			sesfake.APIv2, sesfake.Address{Name: "Shop", Email: "shop@example.com"}, "tx", map[string]string{"app": "mailsvc"}},
		{"v2 connection sender overrides", core.Settings{"enable_v2_api": true, "from_email": "noreply@example.net", "from_name": "Example Net"},
			sesfake.APIv2, sesfake.Address{Name: "Example Net", Email: "noreply@example.net"}, "", map[string]string{}},
		{"v1 endpoint with trailing slash", core.Settings{"custom_endpoint": fake.URL + "/"},
			sesfake.APIv1, sesfake.Address{Name: "Shop", Email: "shop@example.com"}, "", map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(fake.Messages())
			tr := newTransport(t, staticSettings(fake, tc.extra))
			rcpt, err := tr.Send(context.Background(), drivertest.FullMessage())
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			msgs := fake.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("fake recorded %d new messages, want 1", len(msgs)-before)
			}
			m := msgs[len(msgs)-1]
			if rcpt.MessageID == "" || rcpt.MessageID != m.ID {
				t.Errorf("receipt id %q, want the SES MessageId %q", rcpt.MessageID, m.ID)
			}
			if m.API != tc.wantAPI || m.AccessKeyID != accessKey {
				t.Errorf("api %s key %s, want %s %s", m.API, m.AccessKeyID, tc.wantAPI, accessKey)
			}
			if m.Source != tc.wantFrom.Email {
				t.Errorf("source %q, want %q", m.Source, tc.wantFrom.Email)
			}
			if m.ConfigurationSet != tc.wantCS {
				t.Errorf("configuration set %q, want %q", m.ConfigurationSet, tc.wantCS)
			}
			if got := m.TagMap(); !reflect.DeepEqual(got, tc.wantTags) {
				t.Errorf("tags %v, want %v", got, tc.wantTags)
			}
			wantDest := []string{"ann@example.org", "bob@example.org", "cid@example.org", "dan@example.org"}
			if !reflect.DeepEqual(m.SortedDestinations(), wantDest) {
				t.Errorf("destinations %v, want %v", m.SortedDestinations(), wantDest)
			}
			if tc.wantAPI == sesfake.APIv2 && (!reflect.DeepEqual(m.V2Bcc, []string{"dan@example.org"}) || len(m.V2To) != 2 || len(m.V2Cc) != 1) {
				t.Errorf("v2 destination to=%v cc=%v bcc=%v", m.V2To, m.V2Cc, m.V2Bcc)
			}
			p := m.Parsed
			if p.From != tc.wantFrom {
				t.Errorf("From %+v, want %+v", p.From, tc.wantFrom)
			}
			if got := emailsOf(p.To); !reflect.DeepEqual(got, []string{"ann@example.org", "bob@example.org"}) {
				t.Errorf("To %v", got)
			}
			if got := emailsOf(p.Cc); !reflect.DeepEqual(got, []string{"cid@example.org"}) {
				t.Errorf("Cc %v", got)
			}
			if len(p.Bcc) != 0 || p.Header.Get("Bcc") != "" || bytes.Contains(m.Raw, []byte("dan@example.org")) {
				t.Errorf("the Bcc recipient leaked into the message: header %q", p.Header.Get("Bcc"))
			}
			if p.Subject != "Order #42 — ünïcode" || p.Text != "Plain body\r\nline 2" && p.Text != "Plain body\nline 2" {
				t.Errorf("subject %q text %q", p.Subject, p.Text)
			}
			if !strings.Contains(p.HTML, `cid:logo1`) || p.Header.Get("X-Order") != "42" {
				t.Errorf("html %q X-Order %q", p.HTML, p.Header.Get("X-Order"))
			}
			if len(p.Attachments) != 2 {
				t.Fatalf("%d attachments, want 2", len(p.Attachments))
			}
			byName := map[string]sesfake.Attachment{}
			for _, a := range p.Attachments {
				byName[a.Filename] = a
			}
			if a := byName["invoice.pdf"]; !bytes.Equal(a.Data, drivertest.PDFBytes()) || a.ContentType != "application/pdf" || a.Inline {
				t.Errorf("invoice.pdf differs: type %s inline %v, %d bytes", a.ContentType, a.Inline, len(a.Data))
			}
			if a := byName["logo.png"]; !bytes.Equal(a.Data, drivertest.PNGBytes()) || !a.Inline || a.ContentID != "logo1" {
				t.Errorf("logo.png differs: inline %v cid %q, %d bytes", a.Inline, a.ContentID, len(a.Data))
			}
		})
	}
}

func TestSigV4Scope(t *testing.T) {
	fake := startSES(t)
	for _, v2 := range []bool{false, true} {
		before := len(fake.Requests())
		tr := newTransport(t, staticSettings(fake, core.Settings{"enable_v2_api": v2}))
		if _, err := tr.Send(context.Background(), simpleMessage()); err != nil {
			t.Fatalf("v2=%v Send: %v", v2, err)
		}
		reqs := fake.Requests()[before:]
		if len(reqs) != 1 {
			t.Fatalf("v2=%v: %d requests, want exactly 1", v2, len(reqs))
		}
		r := reqs[0]
		wantPath, wantAction := "/", "SendRawEmail"
		if v2 {
			wantPath, wantAction = "/v2/email/outbound-emails", "SendEmail"
		}
		if r.Path != wantPath || r.Action != wantAction || r.AccessKeyID != accessKey || r.Region != region ||
			r.Service != "ses" || !r.Authorized || r.SessionToken != "" {
			t.Errorf("v2=%v request %+v", v2, r)
		}
		if !slices.Contains(r.SignedHeaders, "host") || !slices.Contains(r.SignedHeaders, "x-amz-date") || r.AmzDate == "" {
			t.Errorf("v2=%v signed headers %v, X-Amz-Date %q", v2, r.SignedHeaders, r.AmzDate)
		}
	}
}

func TestConcurrentSend(t *testing.T) {
	fake := startSES(t)
	for _, v2 := range []bool{false, true} {
		tr := newTransport(t, staticSettings(fake, core.Settings{"enable_v2_api": v2}))
		const n = 8
		errs := make(chan error, n)
		ids := make(chan string, n)
		for range n {
			go func() {
				r, err := tr.Send(context.Background(), simpleMessage())
				errs <- err
				ids <- r.MessageID
			}()
		}
		seen := map[string]bool{}
		for range n {
			if err := <-errs; err != nil {
				t.Fatalf("v2=%v: %v", v2, err)
			}
			seen[<-ids] = true
		}
		if len(seen) != n {
			t.Errorf("v2=%v: %d distinct message ids, want %d", v2, len(seen), n)
		}
	}
	if got := len(fake.Messages()); got != 16 {
		t.Errorf("fake accepted %d messages, want 16", got)
	}
}

func TestIMDSCredentials(t *testing.T) {
	role := sesfake.RoleCredentials{AccessKeyID: "ASIAROLEKEY000000001", SecretAccessKey: "role/secret/abcdef", Token: "session-token-xyz"}
	tests := []struct {
		name    string
		ttl     any // nil: not set
		v2      bool
		wantTTL int
	}{
		{"v1 explicit ttl", int64(900), false, 900},
		{"v2 explicit ttl", int64(60), true, 60},
		{"default ttl", nil, false, 21600},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := sesfake.NewIMDS("mail-role", role)
			defer md.Close()
			fake := sesfake.New(region, "", "")
			defer fake.Close()
			fake.AddKey(role.AccessKeyID, role.SecretAccessKey, role.Token)
			s := core.Settings{"region": region, "imds_role_source": true, "imds_endpoint": md.URL,
				"custom_endpoint": fake.URL, "enable_v2_api": tc.v2}
			if tc.ttl != nil {
				s["imds_token_ttl"] = tc.ttl
			}
			tr := newTransport(t, s)
			for i := range 2 {
				if _, err := tr.Send(context.Background(), simpleMessage()); err != nil {
					t.Fatalf("Send %d: %v", i, err)
				}
			}
			for _, r := range fake.Requests() {
				if r.AccessKeyID != role.AccessKeyID || r.SessionToken != role.Token || !r.Authorized {
					t.Errorf("request signed with %s token %q authorized %v, want the role's key and token", r.AccessKeyID, r.SessionToken, r.Authorized)
				}
			}
			if n := len(fake.Messages()); n != 2 {
				t.Errorf("%d messages accepted, want 2", n)
			}
			ttls := md.TokenTTLs()
			if len(ttls) == 0 {
				t.Fatal("no IMDSv2 token was requested")
			}
			for _, got := range ttls {
				if got != tc.wantTTL {
					t.Errorf("token TTL %d, want %d", got, tc.wantTTL)
				}
			}
			if md.Refused() != 0 {
				t.Errorf("%d metadata reads without a token", md.Refused())
			}
			if md.CredentialReads() != 1 {
				t.Errorf("credentials read %d times, want 1 (cached)", md.CredentialReads())
			}
		})
	}
}

func TestSendFailures(t *testing.T) {
	tests := []struct {
		name          string
		v2            bool
		status        int
		code          string
		wantTemporary bool
	}{
		{"v1 throttling", false, 400, "Throttling", true},
		{"v1 message rejected", false, 400, "MessageRejected", false},
		{"v1 invalid token", false, 403, "InvalidClientTokenId", false},
		{"v1 configuration set missing", false, 400, "ConfigurationSetDoesNotExist", false},
		{"v1 internal failure", false, 500, "InternalFailure", true},
		{"v1 unavailable", false, 503, "ServiceUnavailable", true},
		{"v2 too many requests", true, 429, "TooManyRequestsException", true},
		{"v2 message rejected", true, 400, "MessageRejected", false},
		{"v2 sending paused", true, 400, "SendingPausedException", false},
		{"v2 internal", true, 500, "InternalServiceErrorException", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startSES(t)
			tr := newTransport(t, staticSettings(fake, core.Settings{"enable_v2_api": tc.v2}))
			fake.FailNext(1, tc.status, tc.code, "simulated "+tc.code)
			_, err := tr.Send(context.Background(), simpleMessage())
			if err == nil {
				t.Fatal("Send succeeded; the SDK must not retry behind the queue's back")
			}
			var de *core.DeliveryError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not classified", err)
			}
			if core.IsTemporary(err) != tc.wantTemporary {
				t.Errorf("temporary = %v, want %v: %v", core.IsTemporary(err), tc.wantTemporary, err)
			}
			if !strings.Contains(err.Error(), tc.code) {
				t.Errorf("error %q does not name the AWS code %s", err, tc.code)
			}
			if strings.Contains(err.Error(), secretKey) {
				t.Errorf("error shows the secret: %v", err)
			}
			if len(fake.Messages()) != 0 {
				t.Errorf("a failed send was recorded")
			}
		})
	}
}

func TestSecretsMaskedInNetworkErrors(t *testing.T) {
	// An endpoint that cannot be reached and that carries the credentials
	// in its path: the transport error names the URL, and the credentials
	// must still not show.
	for _, v2 := range []bool{false, true} {
		d, _ := core.LookupDriver(ses.Slug)
		s := core.Settings{"region": region, "access_key": accessKey, "secret": secretKey, "enable_v2_api": v2,
			"custom_endpoint": "http://127.0.0.1:1/" + accessKey + "/" + secretKey}
		tr, err := d.New(&core.Connection{Driver: ses.Slug, Settings: s}, core.DriverEnv{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tr.Send(context.Background(), simpleMessage())
		if err == nil || !core.IsTemporary(err) {
			t.Fatalf("v2=%v: %v, want a temporary error", v2, err)
		}
		if strings.Contains(err.Error(), secretKey) || strings.Contains(err.Error(), accessKey) {
			t.Errorf("v2=%v: error shows a credential: %v", v2, err)
		}
		if !strings.Contains(err.Error(), core.Mask) {
			t.Errorf("v2=%v: error %q was expected to carry the masked URL", v2, err)
		}
		var de *core.DeliveryError
		if !errors.As(err, &de) {
			t.Errorf("v2=%v: masking lost the classification", v2)
		}
	}
}

func TestWrongSecretIsPermanentAndMasked(t *testing.T) {
	fake := sesfake.New(region, accessKey, "the-real-secret")
	defer fake.Close()
	for _, v2 := range []bool{false, true} {
		tr := newTransport(t, staticSettings(fake, core.Settings{"enable_v2_api": v2}))
		_, err := tr.Send(context.Background(), simpleMessage())
		if err == nil || core.IsTemporary(err) {
			t.Fatalf("v2=%v: %v, want a permanent error", v2, err)
		}
		if !strings.Contains(err.Error(), "SignatureDoesNotMatch") || strings.Contains(err.Error(), secretKey) {
			t.Errorf("v2=%v: error %q", v2, err)
		}
	}
}

func TestVerify(t *testing.T) {
	fake := startSES(t)
	tests := []struct {
		name          string
		extra         core.Settings
		fail          int // status of an injected fault, 0 for none
		wantErr       bool
		wantTemporary bool
		wantAction    string
	}{
		{"v1 ok", nil, 0, false, false, "GetSendQuota"},
		{"v2 ok", core.Settings{"enable_v2_api": true}, 0, false, false, "GetAccount"},
		{"v1 bad key", core.Settings{"access_key": "AKIAWRONGWRONGWRONG0"}, 0, true, false, ""},
		{"v2 bad key", core.Settings{"enable_v2_api": true, "access_key": "AKIAWRONGWRONGWRONG0"}, 0, true, false, ""},
		{"v1 bad secret", core.Settings{"secret": "nope-nope-nope"}, 0, true, false, ""},
		{"v1 unavailable", nil, 503, true, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(fake.Requests())
			tr := newTransport(t, staticSettings(fake, tc.extra))
			if tc.fail != 0 {
				fake.FailNext(1, tc.fail, "ServiceUnavailable", "")
			}
			err := tr.(core.Verifier).Verify(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("Verify: %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if core.IsTemporary(err) != tc.wantTemporary {
					t.Errorf("temporary = %v, want %v: %v", core.IsTemporary(err), tc.wantTemporary, err)
				}
				if strings.Contains(err.Error(), secretKey) {
					t.Errorf("error shows the secret: %v", err)
				}
				return
			}
			reqs := fake.Requests()[before:]
			if len(reqs) != 1 || reqs[0].Action != tc.wantAction || !reqs[0].Authorized {
				t.Errorf("requests %+v, want one authorized %s", reqs, tc.wantAction)
			}
			if len(fake.Messages()) != 0 {
				t.Error("Verify sent a message")
			}
		})
	}
}

func TestSchemaValidation(t *testing.T) {
	d, ok := core.LookupDriver(ses.Slug)
	if !ok {
		t.Fatal("driver ses is not registered")
	}
	drivertest.ValidateCases(t, d, []drivertest.SchemaCase{
		{Name: "api with static keys", Settings: core.Settings{"region": "us-east-1", "access_key": "AKIA1", "secret": "s"}},
		{Name: "api without region", Settings: core.Settings{"access_key": "AKIA1", "secret": "s"}, WantFields: []string{"region"}},
		{Name: "api without keys", Settings: core.Settings{"region": "us-east-1"}, WantFields: []string{"access_key", "secret"}},
		{Name: "api without anything", Settings: core.Settings{"delivery_mode": "api"}, WantFields: []string{"access_key", "region", "secret"}},
		{Name: "imds without keys", Settings: core.Settings{"region": "us-east-1", "imds_role_source": true}},
		{Name: "imds ttl too large", Settings: core.Settings{"region": "us-east-1", "imds_role_source": true, "imds_token_ttl": 21601}, WantFields: []string{"imds_token_ttl"}},
		{Name: "imds ttl zero", Settings: core.Settings{"region": "us-east-1", "imds_role_source": true, "imds_token_ttl": 0}, WantFields: []string{"imds_token_ttl"}},
		{Name: "bad region", Settings: core.Settings{"region": "Frankfurt", "access_key": "AKIA1", "secret": "s"}, WantFields: []string{"region"}},
		{Name: "good tags", Settings: core.Settings{"region": "us-east-1", "access_key": "A", "secret": "s", "static_tags": "a=b, c_d=e-f"}},
		{Name: "tag without value", Settings: core.Settings{"region": "us-east-1", "access_key": "A", "secret": "s", "static_tags": "a=b,c"}, WantFields: []string{"static_tags"}},
		{Name: "tag with space", Settings: core.Settings{"region": "us-east-1", "access_key": "A", "secret": "s", "static_tags": "a=b c"}, WantFields: []string{"static_tags"}},
		{Name: "tag twice", Settings: core.Settings{"region": "us-east-1", "access_key": "A", "secret": "s", "static_tags": "a=b,a=c"}, WantFields: []string{"static_tags"}},
		{Name: "tag with dot", Settings: core.Settings{"region": "us-east-1", "access_key": "A", "secret": "s", "static_tags": "site=example.com"}, WantFields: []string{"static_tags"}},
		{Name: "bad endpoint", Settings: core.Settings{"region": "us-east-1", "access_key": "A", "secret": "s", "custom_endpoint": "email.local"}, WantFields: []string{"custom_endpoint"}},
		{Name: "bad mode", Settings: core.Settings{"delivery_mode": "ftp"}, WantFields: []string{"delivery_mode"}},
		{Name: "smtp complete", Settings: core.Settings{"delivery_mode": "smtp", "smtp_username": "u", "smtp_password": "p", "smtp_region": "eu-west-1"}},
		{Name: "smtp region from region", Settings: core.Settings{"delivery_mode": "smtp", "smtp_username": "u", "smtp_password": "p", "region": "eu-west-1"}},
		{Name: "smtp without credentials", Settings: core.Settings{"delivery_mode": "smtp", "smtp_host": "mail.example.com"}, WantFields: []string{"smtp_password", "smtp_username"}},
		{Name: "smtp without host or region", Settings: core.Settings{"delivery_mode": "smtp", "smtp_username": "u", "smtp_password": "p"}, WantFields: []string{"smtp_host"}},
		{Name: "smtp bad encryption", Settings: core.Settings{"delivery_mode": "smtp", "smtp_username": "u", "smtp_password": "p", "region": "eu-west-1", "smtp_encryption": "starttls"}, WantFields: []string{"smtp_encryption"}},
		{Name: "smtp bad port", Settings: core.Settings{"delivery_mode": "smtp", "smtp_username": "u", "smtp_password": "p", "region": "eu-west-1", "smtp_port": 70000}, WantFields: []string{"smtp_port"}},
		{Name: "unknown key", Settings: core.Settings{"region": "us-east-1", "access_key": "A", "secret": "s", "api_key": "x"}, WantFields: []string{"api_key"}},
	}, nil)
}

func TestSchemaDefaultsAndSensitivity(t *testing.T) {
	d, _ := core.LookupDriver(ses.Slug)
	s := core.Settings{"region": "us-east-1", "access_key": "A", "secret": "s"}
	if err := d.ValidateSettings(s); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"delivery_mode": "api", "imds_token_ttl": int64(21600), "smtp_port": int64(587),
		"smtp_encryption": "tls", "enable_v2_api": false, "imds_role_source": false}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("default %s = %#v, want %#v", k, s[k], v)
		}
	}
	for _, k := range []string{"access_key", "secret", "smtp_username", "smtp_password"} {
		if f := d.Field(k); f == nil || !f.Sensitive {
			t.Errorf("field %s is not sensitive", k)
		}
	}
	// Every key a SES constant pins must be a field of the schema.
	for _, k := range []string{"region", "access_key", "secret", "configuration_set", "custom_endpoint", "enable_v2_api",
		"static_tags", "smtp_username", "smtp_password", "smtp_host", "smtp_port", "smtp_encryption", "smtp_region",
		"imds_role_source", "imds_token_ttl"} {
		if d.Field(k) == nil {
			t.Errorf("pinned key %s is not in the schema", k)
		}
		if len(core.PinConstants(ses.Slug, k)) < 2 {
			t.Errorf("key %s has no named SES constant", k)
		}
	}
	var regions int
	for _, p := range d.Presets {
		if p.Settings.String("delivery_mode") == "api" && p.Settings.String("region") != "" {
			regions++
		}
	}
	if regions < 5 {
		t.Errorf("%d API region presets, want the common regions", regions)
	}
}

func TestParseStaticTags(t *testing.T) {
	tests := []struct {
		in      string
		want    []ses.Tag
		wantErr bool
	}{
		{"", nil, false},
		{" , ", nil, false},
		{"a=b", []ses.Tag{{Name: "a", Value: "b"}}, false},
		{" site = blog ,env=prod-1 ", []ses.Tag{{Name: "site", Value: "blog"}, {Name: "env", Value: "prod-1"}}, false},
		{"a=", nil, true},
		{"=b", nil, true},
		{"a=b=c", nil, true},
		{"a:b", nil, true},
		{"a=b,a=c", nil, true},
		{"ü=x", nil, true},
		{strings.Repeat("n", 257) + "=v", nil, true},
		{"n=" + strings.Repeat("v", 257), nil, true},
		{strings.Repeat("n", 256) + "=" + strings.Repeat("v", 256), []ses.Tag{{Name: strings.Repeat("n", 256), Value: strings.Repeat("v", 256)}}, false},
		{"a\nb=c", nil, true},
	}
	for _, tc := range tests {
		got, err := ses.ParseStaticTags(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseStaticTags(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err != nil && core.ErrorFields(err)["static_tags"] == "" {
			t.Errorf("ParseStaticTags(%q) error %v does not name static_tags", tc.in, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseStaticTags(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSMTPSettingsMapping(t *testing.T) {
	tests := []struct {
		name string
		in   core.Settings
		want core.Settings
	}{
		{"defaults from region", core.Settings{"delivery_mode": "smtp", "region": "eu-west-1", "smtp_username": "u", "smtp_password": "p"},
			core.Settings{"host": "email-smtp.eu-west-1.amazonaws.com", "port": int64(587), "encryption": "tls", "auth": true, "username": "u", "password": "p"}},
		{"smtp region wins over region", core.Settings{"region": "eu-west-1", "smtp_region": "us-west-2", "smtp_username": "u", "smtp_password": "p", "smtp_port": int64(465), "smtp_encryption": "ssl"},
			core.Settings{"host": "email-smtp.us-west-2.amazonaws.com", "port": int64(465), "encryption": "ssl", "auth": true, "username": "u", "password": "p"}},
		{"explicit host wins", core.Settings{"smtp_host": "vpce.example.com", "smtp_region": "us-west-2", "smtp_username": "u", "smtp_password": "p", "from_email": "a@example.com"},
			core.Settings{"host": "vpce.example.com", "port": int64(587), "encryption": "tls", "auth": true, "username": "u", "password": "p"}},
	}
	for _, tc := range tests {
		if got := ses.SMTPSettings(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: SMTPSettings = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func smtpModeSettings(sink *smtpsink.Sink, encryption, username, password string, extra core.Settings) core.Settings {
	s := core.Settings{"delivery_mode": "smtp", "smtp_host": sink.Host(), "smtp_port": int64(sink.Port()),
		"smtp_encryption": encryption, "smtp_username": username, "smtp_password": password, "smtp_region": "eu-west-1"}
	maps.Copy(s, extra)
	return s
}

func TestSMTPModeSend(t *testing.T) {
	const user, pass = "AKIASMTPUSER00000001", "BSmtpPassw0rd/derived+from+secret"
	tests := []struct {
		name       string
		sinkOpts   []smtpsink.Option
		encryption string
		extra      core.Settings
		wantFrom   string
		wantTLS    bool
	}{
		{"starttls", []smtpsink.Option{smtpsink.WithAuth(user, pass), smtpsink.WithSTARTTLS(), smtpsink.WithRequireTLS()}, "tls", nil, "shop@example.com", true},
		{"implicit tls with sender override", []smtpsink.Option{smtpsink.WithAuth(user, pass), smtpsink.WithImplicitTLS()}, "ssl",
			core.Settings{"from_email": "noreply@example.net", "from_name": "Net"}, "noreply@example.net", true},
		{"plain on loopback", []smtpsink.Option{smtpsink.WithAuth(user, pass)}, "none", nil, "shop@example.com", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := smtpsink.Start(t, tc.sinkOpts...)
			s := smtpModeSettings(sink, tc.encryption, user, pass, tc.extra)
			d, _ := core.LookupDriver(ses.Slug)
			if err := d.ValidateSettings(s); err != nil {
				t.Fatalf("ValidateSettings: %v", err)
			}
			tr, err := ses.NewSMTP(&core.Connection{ID: 3, Driver: ses.Slug, Settings: s}, core.DriverEnv{}, smtpdrv.Options{RootCAs: sink.CertPool()})
			if err != nil {
				t.Fatalf("NewSMTP: %v", err)
			}
			defer tr.Close()
			if err := tr.Verify(context.Background()); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if _, err := tr.Send(context.Background(), drivertest.FullMessage()); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := sink.Messages()
			if len(got) != 1 {
				t.Fatalf("sink got %d messages, want 1", len(got))
			}
			r := got[0]
			if r.Username != user || r.TLS != tc.wantTLS || r.From != tc.wantFrom {
				t.Errorf("received user %q tls %v from %q, want %q %v %q", r.Username, r.TLS, r.From, user, tc.wantTLS, tc.wantFrom)
			}
			if want := []string{"ann@example.org", "bob@example.org", "cid@example.org", "dan@example.org"}; !reflect.DeepEqual(r.To, want) {
				t.Errorf("envelope %v, want %v", r.To, want)
			}
			p, err := sesfake.ParseMIME(r.Data)
			if err != nil {
				t.Fatal(err)
			}
			if p.Header.Get("Bcc") != "" || len(p.Attachments) != 2 || p.From.Email != tc.wantFrom {
				t.Errorf("parsed bcc %q, %d attachments, from %q", p.Header.Get("Bcc"), len(p.Attachments), p.From.Email)
			}
		})
	}
}

func TestSMTPModeThroughRegistry(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("u", "right"))
	tests := []struct {
		name          string
		password      string
		fail          func()
		wantErr       bool
		wantTemporary bool
	}{
		{"accepted", "right", nil, false, false},
		{"bad password is permanent", "wrong-secret-value", nil, true, false},
		{"4xx is temporary", "right", func() { sink.FailNext(1, 451, "try later") }, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTransport(t, smtpModeSettings(sink, "none", "u", tc.password, nil))
			if _, ok := tr.(*ses.SMTPTransport); !ok {
				t.Fatalf("smtp mode built %T", tr)
			}
			if tc.fail != nil {
				tc.fail()
			}
			_, err := tr.Send(context.Background(), simpleMessage())
			if (err != nil) != tc.wantErr {
				t.Fatalf("Send: %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				return
			}
			if core.IsTemporary(err) != tc.wantTemporary {
				t.Errorf("temporary = %v, want %v: %v", core.IsTemporary(err), tc.wantTemporary, err)
			}
			if strings.Contains(err.Error(), tc.password) {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	d, _ := core.LookupDriver(ses.Slug)
	tests := []struct {
		settings core.Settings
		want     string
	}{
		{core.Settings{"region": "ap-south-1", "access_key": "A", "secret": "s"}, "https://email.ap-south-1.amazonaws.com"},
		{core.Settings{"region": "ap-south-1", "access_key": "A", "secret": "s", "custom_endpoint": "https://vpce.example.com/"}, "https://vpce.example.com"},
	}
	for _, tc := range tests {
		tr, err := d.New(&core.Connection{Driver: ses.Slug, Settings: tc.settings}, core.DriverEnv{})
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.(*ses.Transport).BaseURL(); got != tc.want {
			t.Errorf("BaseURL = %q, want %q", got, tc.want)
		}
	}
}

// Amazon SES takes no SMTPUTF8: a non-ASCII domain goes as its A-label
// with the header in ASCII, and a non-ASCII local part is refused for
// good before any request.
func TestInternationalAddresses(t *testing.T) {
	fake := startSES(t)
	tr := newTransport(t, staticSettings(fake, nil))
	msg := &core.Message{From: core.Address{Name: "Bücher", Email: "shop@bücher.example"}, To: []core.Address{{Email: "ann@exämple.org"}},
		Subject: "Grüße", Text: "Hallo"}
	if _, err := tr.Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m := fake.Messages()[len(fake.Messages())-1]
	if m.Source != "shop@xn--bcher-kva.example" || !reflect.DeepEqual(m.SortedDestinations(), []string{"ann@xn--exmple-cua.org"}) {
		t.Errorf("source %q destinations %v, want A-label domains", m.Source, m.SortedDestinations())
	}
	for i, c := range m.Raw {
		if c >= 0x80 {
			t.Fatalf("byte %d of the raw message is not ASCII:\n%s", i, m.Raw)
		}
	}
	before := len(fake.Messages())
	msg.To = []core.Address{{Email: "jürgen@example.de"}}
	_, err := tr.Send(context.Background(), msg)
	if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "SMTPUTF8") || len(fake.Messages()) != before {
		t.Errorf("non-ASCII local part: %v (temporary %v), %d requests", err, core.IsTemporary(err), len(fake.Messages())-before)
	}
}

// TestPartKeepsHeaders: a part of a split message (its Envelope set) goes
// to the part's recipients only, with the message's To and Cc headers as
// written, on both APIs.
func TestPartKeepsHeaders(t *testing.T) {
	for _, api := range []string{"v1", "v2"} {
		t.Run(api, func(t *testing.T) {
			fake := startSES(t)
			extra := core.Settings{}
			if api == "v2" {
				extra["enable_v2_api"] = true
			}
			tr := newTransport(t, staticSettings(fake, extra))
			msg := drivertest.FullMessage()
			msg.To = []core.Address{{Email: "a@example.org"}, {Email: "b@example.org"}}
			msg.Cc = []core.Address{{Email: "c@example.org"}}
			msg.Bcc = []core.Address{{Email: "d@example.org"}}
			msg.Envelope = []core.Address{msg.To[1], msg.Bcc[0]}
			_, m := drivertest.SendRecorded(t, tr, msg, fake.Messages, 1)
			if !reflect.DeepEqual(m.SortedDestinations(), []string{"b@example.org", "d@example.org"}) {
				t.Errorf("destinations %v, want b and d", m.SortedDestinations())
			}
			if len(m.Parsed.To) != 2 || len(m.Parsed.Cc) != 1 || len(m.Parsed.Bcc) != 0 {
				t.Errorf("headers To %v Cc %v Bcc %v, want the message's To and Cc", m.Parsed.To, m.Parsed.Cc, m.Parsed.Bcc)
			}
		})
	}
}
