package twilio

import (
	"strings"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
)

// SMS segment sizes: one GSM-7 message holds 160 characters and each part
// of a concatenated one 153; with any character outside GSM-7 the whole
// message is UCS-2, 70 and 67.
const (
	gsmSegment    = 153
	ucs2Segment   = 67
	maxSegments   = 2
	gsmBodyLimit  = gsmSegment * maxSegments
	ucs2BodyLimit = ucs2Segment * maxSegments
	gsmExtended   = "^{}\\[~]|€"
)

// gsmBasic holds the characters of the GSM 03.38 basic set (one septet
// each); gsmExtended those of its extension table (two septets).
const gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

// septets returns how many GSM-7 septets s takes, and false when s holds a
// character GSM-7 cannot carry (the SMS is then UCS-2).
func septets(s string) (int, bool) {
	n := 0
	for _, r := range s {
		switch {
		case strings.ContainsRune(gsmBasic, r):
			n++
		case strings.ContainsRune(gsmExtended, r):
			n += 2
		default:
			return 0, false
		}
	}
	return n, true
}

// Segments returns how many SMS segments body takes (1 for up to 160
// GSM-7 or 70 UCS-2 characters).
func Segments(body string) int {
	n, gsm := septets(body)
	single, part := 160, gsmSegment
	if !gsm {
		n, single, part = len(utf16Units(body)), 70, ucs2Segment
	}
	if n <= single {
		return 1
	}
	return (n + part - 1) / part
}

// utf16Units returns s as UTF-16 code units (what UCS-2 SMS count).
func utf16Units(s string) []uint16 {
	out := make([]uint16, 0, len(s))
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
			continue
		}
		out = append(out, uint16(r))
	}
	return out
}

// Body returns a as a short SMS: the title, the connection, the message and
// the site, each on a line, within two segments. The message is cut first
// (with "..."), then the rest.
func Body(a core.Alert) string {
	head := notify.Title(a)
	if a.ConnectionName != "" {
		head += " - " + a.ConnectionName
	}
	tail := ""
	if a.Site != "" {
		tail = "\n" + a.Site
	}
	msg := strings.Join(strings.Fields(a.Message), " ")
	full := head + "\n" + msg + tail
	if msg == "" {
		full = head + tail
	}
	limit := gsmBodyLimit
	if _, gsm := septets(full); !gsm {
		limit = ucs2BodyLimit
	}
	if fits(full, limit) {
		return full
	}
	// Cut the message to what is left after the head and the tail.
	r := []rune(msg)
	if len(r) > limit {
		r = r[:limit]
	}
	for len(r) > 0 {
		r = r[:len(r)-1]
		body := head + "\n" + strings.TrimSpace(string(r)) + "..." + tail
		if fits(body, limit) {
			return body
		}
	}
	return cut(head+tail, limit)
}

// fits reports whether s is within limit units: septets for GSM-7 text,
// UTF-16 units otherwise.
func fits(s string, limit int) bool {
	if n, gsm := septets(s); gsm {
		return n <= limit
	}
	return len(utf16Units(s)) <= limit
}

// cut shortens s rune by rune until it fits limit.
func cut(s string, limit int) string {
	r := []rune(s)
	for len(r) > 0 && !fits(string(r), limit) {
		r = r[:len(r)-1]
	}
	return string(r)
}
