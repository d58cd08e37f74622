package scalebench

import (
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// Selectors of the PromQL in docs/operations.md: a metric name and its
// optional {label matchers}.
var (
	docSelectorRE = regexp.MustCompile(`\b((?:mailsvc|process)_[a-z0-9_]*[a-z0-9])\b(\{([^}]*)\})?`)
	docMatcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"((?:[^"\\]|\\.)*)"`)
	docCodeRE     = regexp.MustCompile("`([^`]+)`")
)

// TestDocumentedQueries reads the metric names and label matchers of
// every query in the metrics section of docs/operations.md and finds
// each in a scrape of the built binary restarted with a connection and
// no message sent: every name exists, every `label="value"` and each
// alternative of a `label=~"a|b"` is a series (the job label is
// Prometheus's own).
func TestDocumentedQueries(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	start := strings.Index(section, "The series (every name starts")
	end := strings.Index(section, "### Figures")
	if start < 0 || end < start {
		t.Fatal("no metrics section in docs/operations.md")
	}
	section = section[start:end]

	dsn := testdb.MySQL(t)
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	first := startIn(t, dir, dsn)
	admin := adminAuth(t, first)
	connID := createConnection(t, first, admin, "sink", "smtp", map[string]any{
		"host": sink.Host(), "port": sink.Port(), "encryption": "none", "auth": false,
	}, nil)
	first.Stop(t)
	svc := startIn(t, dir, dsn)
	_, fams := scrape(t, svc, "")

	checked := 0
	for _, code := range docCodeRE.FindAllStringSubmatch(section, -1) {
		query := strings.ReplaceAll(code[1], `\|`, "|") // a pipe escaped in a Markdown table
		for _, sel := range docSelectorRE.FindAllStringSubmatch(query, -1) {
			name, matchers := sel[1], sel[3]
			fam := docFamily(fams, name)
			if fam == nil {
				t.Errorf("%s (in %q) is not in the scrape", name, query)
				continue
			}
			checked++
			for _, m := range docMatcherRE.FindAllStringSubmatch(matchers, -1) {
				label, op, value := m[1], m[2], m[3]
				if label == "job" || op == "!=" || op == "!~" {
					continue
				}
				for _, want := range strings.Split(value, "|") {
					if !docHasLabel(fam, label, want) {
						t.Errorf("%s has no series with %s=%q (in %q)", name, label, want, query)
					}
				}
			}
		}
	}
	if checked < 15 {
		t.Fatalf("only %d selectors found in the documentation", checked)
	}
	if !docHasLabel(fams["mailsvc_retries_total"], "connection", itoa(connID)) {
		t.Errorf("no mailsvc_retries_total series at 0 for connection %d", connID)
	}
}

// docFamily returns the family of a metric name, histogram and summary
// suffixes taken off, or nil.
func docFamily(fams map[string]*dto.MetricFamily, name string) *dto.MetricFamily {
	if f, ok := fams[name]; ok {
		return f
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := fams[strings.TrimSuffix(name, suffix)]; ok && strings.HasSuffix(name, suffix) {
			return f
		}
	}
	return nil
}

// docHasLabel reports whether a series of fam has label=value.
func docHasLabel(fam *dto.MetricFamily, label, value string) bool {
	if fam == nil {
		return false
	}
	for _, m := range fam.Metric {
		for _, l := range m.Label {
			if l.GetName() == label && l.GetValue() == value {
				return true
			}
		}
	}
	return false
}
