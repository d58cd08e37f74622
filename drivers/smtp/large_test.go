package smtp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/mail"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// A 10 MB attachment and an inline image arrive byte-exact at a real SMTP
// server, over a pipelined session and over the command-by-command path
// (a session that keeps a transcript, a server without PIPELINING), on
// STARTTLS, implicit TLS and plain sessions; every path streams the
// attachment into DATA.
func TestLargeAttachmentArrivesByteExact(t *testing.T) {
	big := make([]byte, 10<<20+7)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	img := make([]byte, 3000)
	if _, err := rand.Read(img); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		transcript bool
		tls        bool
		sinkOpts   []smtpsink.Option
		over       core.Settings
	}{
		{name: "pipelined"},
		{name: "pipelined over STARTTLS", tls: true},
		{name: "with transcript", transcript: true},
		{name: "server without PIPELINING", sinkOpts: []smtpsink.Option{smtpsink.WithoutPipelining()}},
		{name: "server without PIPELINING over implicit TLS", sinkOpts: []smtpsink.Option{smtpsink.WithoutPipelining(), smtpsink.WithImplicitTLS()},
			over: core.Settings{"encryption": "ssl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.sinkOpts
			over := core.Settings{}
			for k, v := range tc.over {
				over[k] = v
			}
			if tc.tls {
				opts = append(opts, smtpsink.WithSTARTTLS())
				over["encryption"] = "tls"
			}
			sink := smtpsink.Start(t, opts...)
			env := core.DriverEnv{}
			if tc.transcript {
				env.Transcript = &transcripts{}
			}
			tr := newTransport(t, settings(sink, over), env, smtpdrv.Options{RootCAs: sink.CertPool()})
			msg := &core.Message{
				From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "ann@example.org"}},
				Subject: "big file", Text: "attached", HTML: `<img src="cid:img">`,
				Attachments: []core.Attachment{
					{Filename: "big.bin", ContentType: "application/octet-stream", Data: big},
					{Filename: "img.png", ContentType: "image/png", Data: img, Inline: true, ContentID: "img"},
				},
			}
			if _, err := tr.Send(context.Background(), msg); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got, err := sink.WaitFor(1, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			p, err := mail.ReadMessage(bytes.NewReader(got[0].Data))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(p.Body)
			byName := map[string][]byte{}
			for _, pt := range leaves(t, p.Header, body) {
				byName[pt.filename] = pt.data
			}
			if !bytes.Equal(byName["big.bin"], big) {
				t.Errorf("big.bin: %d bytes arrived, not the %d sent", len(byName["big.bin"]), len(big))
			}
			if !bytes.Equal(byName["img.png"], img) {
				t.Errorf("img.png: %d bytes arrived, not the %d sent", len(byName["img.png"]), len(img))
			}
		})
	}
}
