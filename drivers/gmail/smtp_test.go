package gmail_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver/oauthdrivertest"
	"github.com/mailsvc/mailsvc/test/fakes/gmailfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

const smtpMailbox = "me@example.com"

func TestSMTPMode(t *testing.T) {
	tests := []struct {
		name          string
		src           *oauthdrivertest.Tokens
		wantErr       bool
		wantRefreshes int
	}{
		{"token accepted", oauthdrivertest.NewTokens(goodToken), false, 0},
		{"535 then refreshed", oauthdrivertest.NewTokens("ya29.stale", goodToken), false, 1},
		{"535 twice is permanent", oauthdrivertest.NewTokens("ya29.stale", "ya29.revoked"), true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := smtpsink.Start(t, smtpsink.WithXOAUTH2(func(user, token string) bool {
				return user == smtpMailbox && token == goodToken
			}))
			settings := core.Settings{"client_id": "cid", "client_secret": "cs", "delivery_mode": "smtp",
				"from_email": smtpMailbox, "smtp_host": sink.Host(), "smtp_port": int64(sink.Port())}
			tr := newTransport(t, settings, tc.src, nil)
			t.Cleanup(func() { _ = tr.(io.Closer).Close() })
			msg := drivertest.FullMessage()
			_, err := tr.Send(context.Background(), msg)
			if tc.src.Refreshes() != tc.wantRefreshes {
				t.Errorf("refreshes = %d, want %d", tc.src.Refreshes(), tc.wantRefreshes)
			}
			if tc.wantErr {
				oauthdrivertest.CheckRefused(t, err, "ya29.")
				if len(sink.Messages()) != 0 {
					t.Fatal("delivered without authentication")
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := sink.Messages()
			if len(got) != 1 || got[0].Username != smtpMailbox || got[0].From != smtpMailbox || len(got[0].To) != 4 {
				t.Fatalf("sink received %+v", got)
			}
			m, err := gmailfake.Parse(got[0].Data)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if m.Subject != msg.Subject || m.From.Email != smtpMailbox || m.From.Name != "Shop" || m.Text != msg.Text || m.HTML != msg.HTML || len(m.Attachments) != 2 || len(m.Bcc) != 0 {
				t.Errorf("message = %q %q %q, %d attachments, bcc %v", m.Subject, m.Text, m.HTML, len(m.Attachments), m.Bcc)
			}
			for _, a := range m.Attachments {
				if a.Filename == "invoice.pdf" && !bytes.Equal(a.Data, drivertest.PDFBytes()) {
					t.Error("pdf bytes differ")
				}
			}
		})
	}
}
