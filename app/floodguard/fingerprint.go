package floodguard

import (
	"hash/maphash"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// maxFingerprints bounds the messages the one-message-to-many rule keeps
// in memory; past it the oldest are forgotten first.
const maxFingerprints = 20000

// fingerprintKey is one message of one source of one site: the hash of
// its subject and body.
type fingerprintKey struct {
	site   int64
	source string
	sum    uint64
}

// fingerprint is what the rule knows of one message within its window:
// since when, its different recipients (their hashes, up to one past
// the threshold), and whether it is flooding (its episode).
type fingerprint struct {
	since      time.Time
	recipients []uint64
	flooding   bool
}

// fingerprints counts the different recipients of each message over a
// window of minutes, bounded to maxFingerprints messages.
type fingerprints struct {
	seed  maphash.Seed
	max   int
	byKey map[fingerprintKey]*fingerprint
	// order is the keys in the order their windows started, with that
	// start: the oldest are forgotten first; an entry whose start
	// differs from its fingerprint's is stale.
	order []orderedKey
}

// orderedKey is a key of fingerprints.order.
type orderedKey struct {
	key   fingerprintKey
	since time.Time
}

func newFingerprints() *fingerprints {
	return &fingerprints{seed: maphash.MakeSeed(), max: maxFingerprints, byKey: map[fingerprintKey]*fingerprint{}}
}

// key returns the key of msg from source of site.
func (f *fingerprints) key(site int64, source string, msg *core.Message) fingerprintKey {
	var h maphash.Hash
	h.SetSeed(f.seed)
	_, _ = h.WriteString(msg.Subject)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(msg.Text)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(msg.HTML)
	return fingerprintKey{site: site, source: source, sum: h.Sum64()}
}

// add counts msg's recipients for its key within a window of window
// from now, and returns the message's count of different recipients
// (at most limit+1) and its fingerprint.
func (f *fingerprints) add(k fingerprintKey, msg *core.Message, limit int, window time.Duration, now time.Time) (int, *fingerprint) {
	fp := f.byKey[k]
	if fp == nil || now.Sub(fp.since) > window {
		f.forget(now, window)
		fp = &fingerprint{since: now}
		f.byKey[k] = fp
		f.order = append(f.order, orderedKey{key: k, since: now})
	}
	if len(fp.recipients) > limit {
		return len(fp.recipients), fp
	}
	for _, list := range [][]core.Address{msg.To, msg.Cc, msg.Bcc} {
		for _, a := range list {
			r := maphash.String(f.seed, strings.ToLower(strings.TrimSpace(a.Email)))
			known := false
			for _, e := range fp.recipients {
				if e == r {
					known = true
					break
				}
			}
			if !known {
				fp.recipients = append(fp.recipients, r)
				if len(fp.recipients) > limit {
					return len(fp.recipients), fp
				}
			}
		}
	}
	return len(fp.recipients), fp
}

// forget drops the fingerprints whose window ended, and the oldest ones
// while there are max or more.
func (f *fingerprints) forget(now time.Time, window time.Duration) {
	drop := 0
	for drop < len(f.order) {
		o := f.order[drop]
		fp := f.byKey[o.key]
		switch {
		case fp == nil || !fp.since.Equal(o.since):
			// stale: the key's window started again later
		case now.Sub(o.since) > window || len(f.byKey) >= f.max:
			delete(f.byKey, o.key)
		default:
			f.order = f.order[drop:]
			return
		}
		drop++
	}
	f.order = f.order[:0]
}

// size returns how many messages are kept.
func (f *fingerprints) size() int { return len(f.byKey) }
