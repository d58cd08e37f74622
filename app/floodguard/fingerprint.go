package floodguard

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
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
// the site, the source, and the message's subject and body.
type fingerprintKey uint64

// fingerprint is what the rule knows of one message within its window:
// since when (Unix nanoseconds), its first recipient's hash and how many
// different recipients it has (up to one past the threshold; the hashes
// past the first are in the shard's more), and whether it is flooding
// (its episode). It holds no pointer, so the collector does not scan the
// thousands kept.
type fingerprint struct {
	since      int64
	first      uint64
	recipients int32
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
	byKey map[fingerprintKey]fingerprint
	// more holds the recipients' hashes past the first of the messages
	// that have more than one (few do).
	more map[fingerprintKey][]uint64
	// order is the keys in the order their windows started, with that
	// start: the oldest are forgotten first; an entry whose start
	// differs from its fingerprint's is stale.
	order []orderedKey
}

// orderedKey is a key of fingerprintShard.order.
type orderedKey struct {
	key   fingerprintKey
	since int64
}

// newFingerprints keeps up to bound messages.
func newFingerprints(bound int) *fingerprints {
	f := &fingerprints{seed: maphash.MakeSeed()}
	for i := range f.shards {
		f.shards[i].max = max(bound/fingerprintShards, 1)
		f.shards[i].byKey = map[fingerprintKey]fingerprint{}
		f.shards[i].more = map[fingerprintKey][]uint64{}
	}
	return f
}

// key returns the key of msg from source of site.
func (f *fingerprints) key(site int64, source string, msg *core.Message) fingerprintKey {
	var h maphash.Hash
	h.SetSeed(f.seed)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(site))
	_, _ = h.Write(b[:])
	_, _ = h.WriteString(source)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(msg.Subject)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(msg.Text)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(msg.HTML)
	return fingerprintKey(h.Sum64())
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
			recipients = append(recipients, f.recipient(a.Email))
		}
	}
	at := now.UnixNano()
	sh := &f.shards[uint64(k)%fingerprintShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	fp, ok := sh.byKey[k]
	if !ok || at-fp.since > int64(window) {
		sh.forget(at, window)
		delete(sh.more, k)
		fp = fingerprint{since: at}
		sh.order = append(sh.order, orderedKey{key: k, since: at})
	}
	for _, r := range recipients {
		if int(fp.recipients) > limit {
			break
		}
		switch {
		case fp.recipients == 0:
			fp.first, fp.recipients = r, 1
		case r == fp.first || slices.Contains(sh.more[k], r):
		default:
			sh.more[k] = append(sh.more[k], r)
			fp.recipients++
		}
	}
	n = int(fp.recipients)
	if n > limit && !fp.flooding {
		fp.flooding, started = true, true
	}
	sh.byKey[k] = fp
	return n, started
}

// recipient returns the hash of an address as the rule compares them:
// case and surrounding space aside.
func (f *fingerprints) recipient(email string) uint64 {
	email = strings.TrimSpace(email)
	for i := 0; i < len(email); i++ {
		if c := email[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return maphash.String(f.seed, strings.ToLower(email))
		}
	}
	return maphash.String(f.seed, email)
}

// forget drops the fingerprints whose window ended, and the oldest ones
// while there are max or more. Called with sh.mu held.
func (sh *fingerprintShard) forget(now int64, window time.Duration) {
	drop := 0
	for drop < len(sh.order) {
		o := sh.order[drop]
		fp, ok := sh.byKey[o.key]
		switch {
		case !ok || fp.since != o.since:
			// stale: the key's window started again later
		case now-o.since > int64(window) || len(sh.byKey) >= sh.max:
			delete(sh.byKey, o.key)
			delete(sh.more, o.key)
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
