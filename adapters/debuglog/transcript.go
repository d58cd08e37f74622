package debuglog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Bounds of the transcript store.
const (
	DefaultMaxTranscripts      = 200
	DefaultMaxTranscriptBytes  = 256 << 10
	transcriptDir              = "smtp-sessions"
	transcriptExt              = ".log"
	transcriptTruncationMarker = "\n...[transcript truncated]\n"
)

// Transcripts stores SMTP session transcripts as files under
// <root>/smtp-sessions/, at most Max of them (the oldest are removed), each
// at most MaxBytes long, with AUTH credentials masked. It implements
// core.TranscriptSink and is safe for concurrent use.
type Transcripts struct {
	dir      string
	max      int
	maxBytes int
	red      Redactor
	logger   *slog.Logger

	mu    sync.Mutex
	names []string // stored file names, oldest first; nil until loaded
	seq   uint64
}

// NewTranscripts returns the transcript store of a log root. max and
// maxBytes of 0 take the defaults. red chooses how AUTH credentials are
// hidden: its Secret of a credential, except that the show visibility
// still masks them (transcripts are served over the REST API).
func NewTranscripts(root string, max, maxBytes int, red Redactor, logger *slog.Logger) *Transcripts {
	if max <= 0 {
		max = DefaultMaxTranscripts
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxTranscriptBytes
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Transcripts{dir: filepath.Join(root, transcriptDir), max: max, maxBytes: maxBytes, red: red, logger: logger}
}

// Dir returns the directory holding the transcripts.
func (t *Transcripts) Dir() string { return t.dir }

// fileName is <unix nanos>-<seq>-<connection id>.log: names sort by age.
var fileName = regexp.MustCompile(`^(\d{19})-(\d{6})-(\d+)\.log$`)

// SaveTranscript implements core.TranscriptSink. A write failure is logged,
// never returned: a transcript must not fail a delivery.
func (t *Transcripts) SaveTranscript(connectionID int64, transcript string) {
	if strings.TrimSpace(transcript) == "" {
		return
	}
	text := t.MaskAuth(transcript)
	if len(text) > t.maxBytes {
		text = text[:t.maxBytes] + transcriptTruncationMarker
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.load(); err != nil {
		t.logger.Warn("could not store SMTP transcript", "connection_id", connectionID, "err", err)
		return
	}
	t.seq = (t.seq + 1) % 1000000
	name := fmt.Sprintf("%019d-%06d-%d%s", time.Now().UnixNano(), t.seq, connectionID, transcriptExt)
	if err := os.WriteFile(filepath.Join(t.dir, name), []byte(text), 0o600); err != nil {
		t.logger.Warn("could not store SMTP transcript", "connection_id", connectionID, "err", err)
		return
	}
	t.names = append(t.names, name)
	for len(t.names) > t.max {
		_ = os.Remove(filepath.Join(t.dir, t.names[0]))
		t.names = t.names[1:]
	}
}

// load reads the directory once; the caller holds t.mu.
func (t *Transcripts) load() error {
	if t.names != nil {
		return nil
	}
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return fmt.Errorf("create transcript directory: %w", err)
	}
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return fmt.Errorf("read transcript directory: %w", err)
	}
	t.names = []string{}
	for _, e := range entries {
		if !e.IsDir() && fileName.MatchString(e.Name()) {
			t.names = append(t.names, e.Name())
		}
	}
	sort.Strings(t.names)
	return nil
}

// List returns transcripts newest first, from offset, at most limit (0 for
// all), and the total count.
func (t *Transcripts) List(_ context.Context, offset, limit int) ([]core.Transcript, int, error) {
	t.mu.Lock()
	if err := t.load(); err != nil {
		t.mu.Unlock()
		return nil, 0, err
	}
	names := make([]string, len(t.names))
	for i, n := range t.names {
		names[len(names)-1-i] = n
	}
	t.mu.Unlock()
	total := len(names)
	if offset >= total {
		return []core.Transcript{}, total, nil
	}
	names = names[offset:]
	if limit > 0 && limit < len(names) {
		names = names[:limit]
	}
	out := make([]core.Transcript, 0, len(names))
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(t.dir, n))
		if os.IsNotExist(err) {
			continue // pruned meanwhile
		} else if err != nil {
			return nil, 0, fmt.Errorf("read transcript %s: %w", n, err)
		}
		m := fileName.FindStringSubmatch(n)
		nanos, _ := strconv.ParseInt(m[1], 10, 64)
		conn, _ := strconv.ParseInt(m[3], 10, 64)
		out = append(out, core.Transcript{
			ID:           strings.TrimSuffix(n, transcriptExt),
			ConnectionID: conn,
			CreatedAt:    time.Unix(0, nanos).UTC(),
			Size:         len(b),
			Transcript:   string(b),
		})
	}
	return out, total, nil
}

// Clear removes every stored transcript and returns how many there were.
func (t *Transcripts) Clear(_ context.Context) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.load(); err != nil {
		return 0, err
	}
	n := 0
	for _, name := range t.names {
		if err := os.Remove(filepath.Join(t.dir, name)); err != nil && !os.IsNotExist(err) {
			return n, fmt.Errorf("remove transcript %s: %w", name, err)
		}
		n++
	}
	t.names = []string{}
	return n, nil
}

// DeleteNaming removes the stored transcripts that name email (ignoring
// case): a personal data erase reaches the debug log too. It returns how
// many it removed.
func (t *Transcripts) DeleteNaming(_ context.Context, email string) (int, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.load(); err != nil {
		return 0, err
	}
	n := 0
	kept := t.names[:0]
	for _, name := range t.names {
		path := filepath.Join(t.dir, name)
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			t.names = nil // read the directory again next time
			return n, fmt.Errorf("read transcript %s: %w", name, err)
		}
		if !strings.Contains(strings.ToLower(string(b)), email) {
			kept = append(kept, name)
			continue
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.names = nil // read the directory again next time
			return n, fmt.Errorf("remove transcript %s: %w", name, err)
		}
		n++
	}
	t.names = kept
	return n, nil
}

// authLine matches a client AUTH command: "C: AUTH <mechanism> [initial response]".
var authLine = regexp.MustCompile(`(?i)^(.*?C: AUTH\s+\S+)(\s+\S.*)?$`)

// MaskAuth hides the credentials of SMTP authentication in a transcript:
// the initial response of an AUTH command, and every client line that
// answers a server 334 challenge.
func (t *Transcripts) MaskAuth(transcript string) string {
	secret := func(string) string {
		if t.red.Visibility == core.VisibilityFull {
			return Redacted
		}
		return core.Mask
	}
	lines := strings.Split(transcript, "\n")
	challenged := false
	for i, line := range lines {
		switch {
		case strings.Contains(line, "C: ") && challenged:
			idx := strings.Index(line, "C: ")
			if strings.TrimSpace(line[idx+3:]) != "*" { // "*" cancels the exchange
				lines[i] = line[:idx+3] + secret(line[idx+3:])
			}
			challenged = false
		case authLine.MatchString(line):
			m := authLine.FindStringSubmatch(line)
			if m[2] != "" {
				lines[i] = m[1] + " " + secret(m[2])
			}
		}
		if strings.Contains(line, "S: 334") {
			challenged = true
		} else if strings.Contains(line, "S: ") {
			challenged = false
		}
	}
	return strings.Join(lines, "\n")
}
