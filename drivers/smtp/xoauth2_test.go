package smtp_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver/oauthdrivertest"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

const mailbox = "box@example.com"

// oauthSink starts a sink that accepts XOAUTH2 for mailbox with the
// token "fresh-token" only.
func oauthSink(t *testing.T, opts ...smtpsink.Option) *smtpsink.Sink {
	return smtpsink.Start(t, append(opts, smtpsink.WithXOAUTH2(func(user, token string) bool {
		return user == mailbox && token == "fresh-token"
	}))...)
}

func newXOAUTH2(t *testing.T, sink *smtpsink.Sink, set core.Settings, tokens core.TokenSource, env core.DriverEnv, opts smtpdrv.Options) core.Transport {
	t.Helper()
	env.Tokens = tokens
	if set == nil {
		set = core.Settings{}
	}
	tr, err := smtpdrv.NewXOAUTH2(&core.Connection{ID: 9, Driver: "outlook", Settings: set}, env, sink.Host(), sink.Port(),
		smtpdrv.XOAUTH2{Username: mailbox, Tokens: tokens}, opts)
	if err != nil {
		t.Fatalf("NewXOAUTH2: %v", err)
	}
	t.Cleanup(func() { _ = tr.(io.Closer).Close() })
	return tr
}

func TestXOAUTH2Send(t *testing.T) {
	tests := []struct {
		name          string
		tokens        []string
		wantRefreshes int
		wantErr       bool // permanent refusal
	}{
		{name: "valid token", tokens: []string{"fresh-token"}},
		{name: "refused once, refreshed", tokens: []string{"stale-token", "fresh-token"}, wantRefreshes: 1},
		{name: "refused after the refresh", tokens: []string{"stale-token", "revoked-token"}, wantRefreshes: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := oauthSink(t)
			ts := oauthdrivertest.NewTokens(tc.tokens...)
			tr := newXOAUTH2(t, sink, core.Settings{smtpdrv.KeyFromEmail: mailbox, smtpdrv.KeyFromName: "Box"}, ts, core.DriverEnv{}, smtpdrv.Options{})
			msg := message()
			msg.From = core.Address{}
			_, err := tr.Send(context.Background(), msg)
			if refreshes := ts.Refreshes(); refreshes != tc.wantRefreshes {
				t.Errorf("refreshes = %d, want %d", refreshes, tc.wantRefreshes)
			}
			if rejected := ts.Rejected(); tc.wantRefreshes > 0 && rejected[0] != "stale-token" {
				t.Errorf("Refreshed got rejected %q, want the stale token", rejected[0])
			}
			if tc.wantErr {
				oauthdrivertest.CheckRefused(t, err, tc.tokens...)
				if len(sink.Messages()) != 0 {
					t.Fatal("message delivered without authentication")
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := sink.AwaitOne(t)
			if got.Username != mailbox || got.From != mailbox {
				t.Fatalf("authenticated as %q, MAIL FROM %q; want %q", got.Username, got.From, mailbox)
			}
			if !strings.Contains(string(got.Data), "From: \"Box\" <box@example.com>") {
				t.Fatalf("From header not the connection's sender:\n%s", got.Data)
			}
		})
	}
}

func TestXOAUTH2PoolsAuthenticatedSessions(t *testing.T) {
	sink := oauthSink(t)
	ts := oauthdrivertest.NewTokens("fresh-token")
	tr := newXOAUTH2(t, sink, nil, ts, core.DriverEnv{}, smtpdrv.Options{})
	for i := 0; i < 3; i++ {
		if _, err := tr.Send(context.Background(), message()); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
	}
	if gets := ts.Gets(); gets != 1 || sink.Connections() != 1 || sink.Auths() != 1 {
		t.Fatalf("token gets %d, connections %d, auths %d; want one of each", gets, sink.Connections(), sink.Auths())
	}
}

func TestXOAUTH2STARTTLSOnLoopback(t *testing.T) {
	sink := oauthSink(t, smtpsink.WithSTARTTLS(), smtpsink.WithRequireTLS())
	ts := oauthdrivertest.NewTokens("fresh-token")
	tr := newXOAUTH2(t, sink, nil, ts, core.DriverEnv{}, smtpdrv.Options{RootCAs: sink.CertPool()})
	if _, err := tr.Send(context.Background(), message()); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := sink.AwaitOne(t)
	if !got.TLS {
		t.Fatal("message sent without TLS although the server offers STARTTLS")
	}
}

func TestXOAUTH2TokenSourceErrorsPassThrough(t *testing.T) {
	sink := oauthSink(t)
	for _, tc := range []struct {
		name          string
		err           error
		wantTemporary bool
	}{
		{"needs authorization", core.Permanent(errors.New("connection needs a new authorization")), false},
		{"authorization server down", core.Temporary(errors.New("token endpoint unreachable")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := oauthdrivertest.Failing(tc.err)
			tr := newXOAUTH2(t, sink, nil, ts, core.DriverEnv{}, smtpdrv.Options{})
			_, err := tr.Send(context.Background(), message())
			if !errors.Is(err, tc.err) || core.IsTemporary(err) != tc.wantTemporary {
				t.Fatalf("Send = %v, want %v (temporary %v)", err, tc.err, tc.wantTemporary)
			}
			if sink.Connections() != 0 {
				t.Fatalf("connected %d times without a token", sink.Connections())
			}
		})
	}
}

func TestXOAUTH2VerifyAndTranscriptMasking(t *testing.T) {
	sink := oauthSink(t)
	ts := oauthdrivertest.NewTokens("stale-token", "fresh-token")
	rec := &transcripts{}
	tr := newXOAUTH2(t, sink, nil, ts, core.DriverEnv{Transcript: rec}, smtpdrv.Options{})
	if err := tr.(core.Verifier).Verify(context.Background()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if sink.AuthFailures() != 1 || sink.Auths() != 1 || len(sink.Messages()) != 0 {
		t.Fatalf("auth failures %d, auths %d, messages %d; want 1, 1, 0", sink.AuthFailures(), sink.Auths(), len(sink.Messages()))
	}
	text := rec.all(9)
	if !strings.Contains(text, "EHLO") || !strings.Contains(text, "535") {
		t.Fatalf("transcript misses the session:\n%s", text)
	}
	b64 := base64.StdEncoding.EncodeToString
	for _, tok := range []string{"stale-token", "fresh-token"} {
		for _, form := range []string{tok, b64([]byte(tok)), b64([]byte("user=" + mailbox + "\x01auth=Bearer " + tok + "\x01\x01"))} {
			if strings.Contains(text, form) {
				t.Fatalf("transcript shows %q:\n%s", form, text)
			}
		}
	}
}

func TestNewXOAUTH2RejectsBadEndpoint(t *testing.T) {
	ts := oauthdrivertest.NewTokens("t")
	for _, tc := range []struct {
		name, host, user string
		port             int
		wantField        string
	}{
		{"no mailbox", "smtp.office365.com", "", 587, smtpdrv.KeyFromEmail},
		{"host with scheme", "smtp://smtp.office365.com", mailbox, 587, "smtp_host"},
		{"port out of range", "smtp.office365.com", mailbox, 0, "smtp_port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := smtpdrv.NewXOAUTH2(&core.Connection{ID: 1, Settings: core.Settings{}}, core.DriverEnv{Tokens: ts},
				tc.host, tc.port, smtpdrv.XOAUTH2{Username: tc.user, Tokens: ts}, smtpdrv.Options{})
			if _, ok := core.ErrorFields(err)[tc.wantField]; !ok {
				t.Fatalf("NewXOAUTH2 = %v, want a validation error on %s", err, tc.wantField)
			}
		})
	}
}
