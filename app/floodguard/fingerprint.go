package floodguard

import (
	"hash/maphash"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// maxFingerprints bounds the messages the one-message-to-many rule keeps
// in memory; past it the oldest are forgotten first.
const maxFingerprints = 20000

// fingerprintShards is how many locks share the fingerprints, so that
// workers deciding different messages at once seldom wait on each other.
const fingerprintShards = 64

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
// window of minutes, bounded to maxFingerprints messages, in shards.
type fingerprints struct {
	seed   maphash.Seed
	shards [fingerprintShards]fingerprintShard
}

// fingerprintShard is one lock's share of the fingerprints.
type fingerprintShard struct {
	mu    sync.Mutex
	max   int
	byKey map[fingerprintKey]*fingerprint
	// order is the keys in the order their windows started, with that
	// start: the oldest are forgotten first; an entry whose start
	// differs from its fingerprint's is stale.
	order []orderedKey
}

// orderedKey is a key of fingerprintShard.order.
type orderedKey struct {
	key   fingerprintKey
	since time.Time
}

// newFingerprints keeps up to bound messages.
func newFingerprints(bound int) *fingerprints {
	f := &fingerprints{seed: maphash.MakeSeed()}
	for i := range f.shards {
		f.shards[i].max = max(bound/fingerprintShards, 1)
		f.shards[i].byKey = map[fingerprintKey]*fingerprint{}
	}
	return f
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
// from now. It returns the message's count of different recipients (at
// most limit+1) and, when that count is past limit, whether this call
// started the message's episode.
func (f *fingerprints) add(k fingerprintKey, msg *core.Message, limit int, window time.Duration, now time.Time) (n int, started bool) {
	var hashes [8]uint64
	recipients := hashes[:0]
	for _, list := range [][]core.Address{msg.To, msg.Cc, msg.Bcc} {
		for _, a := range list {
			recipients = append(recipients, maphash.String(f.seed, strings.ToLower(strings.TrimSpace(a.Email))))
		}
	}
	// A new message's memory is made before the lock is taken: nothing
	// the common case does under the lock allocates (an allocation may
	// stop to help the garbage collector, and every worker deciding a
	// message of this shard would wait meanwhile).
	fresh := &fingerprint{since: now, recipients: make([]uint64, 0, max(len(recipients), 2))}
	sh := &f.shards[k.sum%fingerprintShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	fp := sh.byKey[k]
	if fp == nil || now.Sub(fp.since) > window {
		sh.forget(now, window)
		fp = fresh
		sh.byKey[k] = fp
		sh.order = append(sh.order, orderedKey{key: k, since: now})
	}
	for _, r := range recipients {
		if len(fp.recipients) > limit {
			break
		}
		known := false
		for _, e := range fp.recipients {
			if e == r {
				known = true
				break
			}
		}
		if !known {
			fp.recipients = append(fp.recipients, r)
		}
	}
	n = len(fp.recipients)
	if n > limit && !fp.flooding {
		fp.flooding, started = true, true
	}
	return n, started
}

// forget drops the fingerprints whose window ended, and the oldest ones
// while there are max or more. Called with sh.mu held.
func (sh *fingerprintShard) forget(now time.Time, window time.Duration) {
	drop := 0
	for drop < len(sh.order) {
		o := sh.order[drop]
		fp := sh.byKey[o.key]
		switch {
		case fp == nil || !fp.since.Equal(o.since):
			// stale: the key's window started again later
		case now.Sub(o.since) > window || len(sh.byKey) >= sh.max:
			delete(sh.byKey, o.key)
		default:
			sh.order = sh.order[drop:]
			return
		}
		drop++
	}
	sh.order = sh.order[:0]
}

// size returns how many messages are kept, and how many keys wait in
// the shards' orders.
func (f *fingerprints) size() (kept, ordered int) {
	for i := range f.shards {
		sh := &f.shards[i]
		sh.mu.Lock()
		kept += len(sh.byKey)
		ordered += len(sh.order)
		sh.mu.Unlock()
	}
	return kept, ordered
}
