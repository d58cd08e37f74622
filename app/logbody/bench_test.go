package logbody_test

import (
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/core"
)

// BenchmarkKeep measures what the redacted mode adds to each delivered
// message on the delivery path: a 1 KB text body and a 4 KB HTML body
// with a few links, one of them a reset link.
func BenchmarkKeep(b *testing.B) {
	text := strings.Repeat("Your order has shipped, see https://shop.example.com/track?order=42&utm_source=mail. ", 12)
	html := "<p>" + strings.Repeat(`Hello, <a href="https://shop.example.com/p?id=7&amp;ref=mail">product</a> and more text. `, 40) +
		`<a href="` + strings.ReplaceAll(resetLink, "&", "&amp;") + `">reset</a></p>`
	m := &core.Message{Text: text, HTML: html}
	r := &logbody.Redactor{}
	b.SetBytes(int64(len(text) + len(html)))
	b.ReportAllocs()
	for b.Loop() {
		if k := (logbody.Policy{}).Keep(m, "wp_mail", r); k.Redacted != 1 {
			b.Fatalf("redacted %d", k.Redacted)
		}
	}
}

const resetLink = "http://example.test/wp-login.php?action=rp&key=AbCdEf1234567890XyZw&login=bob"
