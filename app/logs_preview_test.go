package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// settingsMap is a SettingsReader of fixed values.
type settingsMap map[string]any

func (s settingsMap) Get(context.Context) (map[string]any, error) { return s, nil }

// TestLogDetailInlinePreview checks the previews a log's detail gives of
// its inline images (WordPress's $embeds), for the HTML preview to show
// in place of their cid: references: an inline raster image whose bytes
// the log keeps, at most app.MaxInlinePreview bytes; never an attachment,
// an SVG, a larger image, or bytes the log will not keep.
func TestLogDetailInlinePreview(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0xff}
	big := bytes.Repeat([]byte{1}, app.MaxInlinePreview+1)
	atts := []core.Attachment{
		{Filename: "brand.png", ContentType: "image/png", Data: png, Inline: true, ContentID: "brand-logo"},
		{Filename: "photo.jpg", ContentType: "Image/JPEG", Data: png, Inline: true, ContentID: "banner"},
		{Filename: "logo.svg", ContentType: "image/svg+xml", Data: []byte("<svg/>"), Inline: true, ContentID: "svg"},
		{Filename: "big.png", ContentType: "image/png", Data: big, Inline: true, ContentID: "big"},
		{Filename: "file.png", ContentType: "image/png", Data: png},
	}
	for _, tc := range []struct {
		name     string
		settings app.SettingsReader
		want     []string // previews in order
	}{
		{"bytes kept", nil, []string{"data:image/png;base64," + base64.StdEncoding.EncodeToString(png), "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(png), "", "", ""}},
		{"log_body full", settingsMap{"log_body": "full"}, []string{"data:image/png;base64," + base64.StdEncoding.EncodeToString(png), "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(png), "", "", ""}},
		{"redacted without log_attachments", settingsMap{"log_body": "redacted", "log_attachments": false}, []string{"", "", "", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			logs := apptest.NewLogStore()
			l := &core.Log{Status: core.StatusQueued, Source: "my-plugin", Message: core.Message{From: core.Address{Email: "a@example.com"},
				To: []core.Address{{Email: "b@example.com"}}, Subject: "s", HTML: `<img src="cid:brand-logo">`, Attachments: atts}}
			if err := logs.EnqueueLog(ctx, l); err != nil {
				t.Fatal(err)
			}
			svc := &app.Logs{Store: logs}
			if tc.settings != nil {
				svc.Settings = tc.settings
			}
			d, err := svc.Get(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Attachments) != len(atts) {
				t.Fatalf("%d attachments, want %d", len(d.Attachments), len(atts))
			}
			for i, a := range d.Attachments {
				if a.Preview != tc.want[i] {
					t.Errorf("%s preview = %.60q, want %.60q", a.Filename, a.Preview, tc.want[i])
				}
				if a.Size != len(atts[i].Data) || a.Inline != atts[i].Inline || a.ContentID != atts[i].ContentID {
					t.Errorf("%s = size %d inline %v cid %q", a.Filename, a.Size, a.Inline, a.ContentID)
				}
			}
			if stored, _ := logs.FindLogByID(ctx, l.ID); len(stored.Message.Attachments[0].Data) != len(png) {
				t.Error("the view changed the stored message's attachments")
			}
		})
	}
}
