package mime_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/mime"
)

// emptyFirstLine matches a field whose value starts on a folded line.
var emptyFirstLine = regexp.MustCompile(`(?m)^[!-9;-~]+:[ \t]*\r\n[ \t]`)

// fieldText returns the field named name (exact case) of block with its
// folds, or "".
func fieldText(block, name string) string {
	for _, f := range mime.RawFields(block) {
		if f.Name == name {
			return strings.TrimSuffix(f.Text, "\r\n")
		}
	}
	return ""
}

// Fields built from a message fold after their first word, at 76
// characters with encoded words and at 78 for address lists; a value
// that fits one line of 998 characters stays whole, name in its case.
func TestRenderHeadFolding(t *testing.T) {
	unsubscribe := "<https://example.org/unsubscribe?u=" + strings.Repeat("x1y2", 40) + ">, <mailto:unsub@example.org>"
	long := strings.Repeat("word ", 196) + "end!" // "X-Long: " makes 992
	longer := strings.Repeat("word ", 260)
	many := make([]core.Address, 30)
	for i := range many {
		many[i] = core.Address{Name: "Reader", Email: "reader" + strings.Repeat("x", i%5) + "@example.org"}
	}
	tests := []struct {
		name  string
		edit  func(m *core.Message)
		check func(t *testing.T, block string)
	}{
		{"long non-ASCII subject", func(m *core.Message) {
			m.Subject = "Ваш заказ №42 подтверждён — спасибо за покупку в нашем магазине, ждём вас снова"
		}, func(t *testing.T, block string) {
			f := fieldText(block, "Subject")
			if !strings.HasPrefix(f, "Subject: =?UTF-8?q?") {
				t.Errorf("Subject does not start on its first line: %q", f)
			}
			for _, line := range strings.Split(f, "\r\n") {
				if len(line) > 76 {
					t.Errorf("a Subject line has %d characters: %q", len(line), line)
				}
			}
		}},
		{"a long custom header that fits stays whole", func(m *core.Message) {
			m.Headers = []core.Header{{Name: "List-Unsubscribe", Value: unsubscribe}, {Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"}, {Name: "Feedback-ID", Value: "1:2:3"}, {Name: "X-Long", Value: long}}
		}, func(t *testing.T, block string) {
			for _, want := range []string{"List-Unsubscribe: " + unsubscribe, "List-Unsubscribe-Post: List-Unsubscribe=One-Click", "Feedback-ID: 1:2:3", "X-Long: " + long} {
				if !strings.Contains(block, "\r\n"+want+"\r\n") && !strings.HasPrefix(block, want+"\r\n") {
					t.Errorf("%.40q… is not a line of the header:\n%s", want, block)
				}
			}
		}},
		{"a custom header beyond 998 characters folds at 78", func(m *core.Message) {
			m.Headers = []core.Header{{Name: "X-Longer", Value: longer}}
		}, func(t *testing.T, block string) {
			f := fieldText(block, "X-Longer")
			if !strings.HasPrefix(f, "X-Longer: word word") {
				t.Errorf("X-Longer does not start on its first line: %.60q", f)
			}
			for _, line := range strings.Split(f, "\r\n") {
				if len(line) > 78 || strings.TrimSpace(line) == "" {
					t.Errorf("X-Longer line %q", line)
				}
			}
		}},
		{"many recipients fold at 78", func(m *core.Message) { m.To = many }, func(t *testing.T, block string) {
			f := fieldText(block, "To")
			if !strings.HasPrefix(f, `To: "Reader" <`) {
				t.Errorf("To does not start on its first line: %.60q", f)
			}
			for _, line := range strings.Split(f, "\r\n") {
				if len(line) > 78 {
					t.Errorf("a To line has %d characters", len(line))
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := baseMessage()
			tc.edit(msg)
			head, err := mime.RenderHead(msg, time.Now(), false)
			if err != nil {
				t.Fatal(err)
			}
			block := string(head.Block)
			if m := emptyFirstLine.FindString(block); m != "" {
				t.Errorf("a field starts on a folded line: %q", m)
			}
			tc.check(t, block)
		})
	}
}

// A message received whole keeps its fields as they came, but for the
// MIME structure, Bcc and Return-Path; a changed sender or subject is
// written anew, a missing Date or Message-ID added; in ASCII, UTF-8
// fields become encoded words and A-labels, and a non-ASCII local part
// cannot be written.
func TestRenderHeadRaw(t *testing.T) {
	raw := "Received: from a.example by b.example; Thu, 26 Nov 2026 10:00:00 +0000\r\n" +
		"Return-Path: <bounce@example.org>\r\n" +
		"From: App <app@example.org>\r\n" +
		"To: Newsletter <list@example.net>\r\n" +
		"Bcc: secret@example.net\r\n" +
		"Subject: Hello\r\n" +
		"Feedback-ID: 1:2:3\r\n" +
		"X-Folded: one\r\n\ttwo\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: text/plain\r\n"
	base := func() *core.Message {
		return &core.Message{From: core.Address{Name: "App", Email: "app@example.org"}, Bcc: []core.Address{{Email: "ann@example.com"}},
			Subject: "Hello", Text: "x", RawHeader: raw, Headers: []core.Header{{Name: "Feedback-Id", Value: "1:2:3"}}}
	}

	t.Run("kept as it came", func(t *testing.T) {
		head, err := mime.RenderHead(base(), time.Now(), false)
		if err != nil {
			t.Fatal(err)
		}
		block := string(head.Block)
		wantStart := "Received: from a.example by b.example; Thu, 26 Nov 2026 10:00:00 +0000\r\nFrom: App <app@example.org>\r\nTo: Newsletter <list@example.net>\r\nSubject: Hello\r\nFeedback-ID: 1:2:3\r\nX-Folded: one\r\n\ttwo\r\nMessage-ID: <"
		if !strings.HasPrefix(block, wantStart) {
			t.Errorf("block\n%s\nwant it to start\n%s", block, wantStart)
		}
		for _, gone := range []string{"Return-Path", "Bcc", "secret@", "MIME-Version", "Content-Type", "Feedback-Id"} {
			if strings.Contains(block, gone) {
				t.Errorf("%s went out:\n%s", gone, block)
			}
		}
		if !strings.Contains(block, "\r\nDate: ") || fieldText(block, "Message-ID") != "Message-ID: "+head.MessageID {
			t.Errorf("no Date or Message-ID added:\n%s", block)
		}
	})

	t.Run("a forced sender and a changed subject are written anew", func(t *testing.T) {
		msg := base()
		msg.From = core.Address{Name: "Shop", Email: "shop@example.com"}
		msg.Subject = "Changed"
		head, err := mime.RenderHead(msg, time.Now(), false)
		if err != nil {
			t.Fatal(err)
		}
		block := string(head.Block)
		if !strings.Contains(block, "\r\nFrom: \"Shop\" <shop@example.com>\r\n") || !strings.Contains(block, "\r\nSubject: Changed\r\n") {
			t.Errorf("block\n%s", block)
		}
	})

	utf8 := "From: Jürgen <jürgen@bücher.example>\r\nTo: ann@example.com\r\nSubject: Grüße\r\nMessage-ID: <a@b>\r\nDate: Thu, 26 Nov 2026 10:00:00 +0000\r\n"
	t.Run("UTF-8 fields as they came, or in ASCII", func(t *testing.T) {
		msg := &core.Message{From: core.Address{Name: "Jürgen", Email: "info@bücher.example"}, To: []core.Address{{Email: "ann@example.com"}}, Subject: "Grüße", Text: "x",
			RawHeader: strings.ReplaceAll(utf8, "jürgen@", "info@")}
		head, err := mime.RenderHead(msg, time.Now(), false)
		if err != nil || !head.UTF8 || string(head.Block) != msg.RawHeader {
			t.Errorf("UTF-8 head %q (UTF8 %v, %v), want it as it came", head.Block, head.UTF8, err)
		}
		head, err = mime.RenderHead(msg, time.Now(), true)
		if err != nil {
			t.Fatal(err)
		}
		want := "From: =?utf-8?q?J=C3=BCrgen?= <info@xn--bcher-kva.example>\r\nTo: ann@example.com\r\nSubject: =?UTF-8?q?Gr=C3=BC=C3=9Fe?=\r\nMessage-ID: <a@b>\r\nDate: Thu, 26 Nov 2026 10:00:00 +0000\r\n"
		if head.UTF8 || string(head.Block) != want {
			t.Errorf("ASCII head\n%q\nwant\n%q", head.Block, want)
		}
	})

	t.Run("a non-ASCII local part has no ASCII form", func(t *testing.T) {
		msg := &core.Message{From: core.Address{Name: "Jürgen", Email: "jürgen@bücher.example"}, To: []core.Address{{Email: "ann@example.com"}}, Subject: "Grüße", Text: "x", RawHeader: utf8}
		if _, err := mime.RenderHead(msg, time.Now(), true); !errors.Is(err, mime.ErrNeedsSMTPUTF8) {
			t.Errorf("error %v, want ErrNeedsSMTPUTF8", err)
		}
		msg.RawHeader = ""
		if _, err := mime.RenderHead(msg, time.Now(), true); !errors.Is(err, mime.ErrNeedsSMTPUTF8) {
			t.Errorf("built: error %v, want ErrNeedsSMTPUTF8", err)
		}
	})

	t.Run("header recipients outside the envelope", func(t *testing.T) {
		if !mime.HeaderNamesOthers(base()) {
			t.Error("To: list@example.net is not in the envelope")
		}
		msg := base()
		msg.Bcc = append(msg.Bcc, core.Address{Email: "LIST@example.net"})
		if mime.HeaderNamesOthers(msg) {
			t.Error("every header recipient is in the envelope")
		}
	})
}
