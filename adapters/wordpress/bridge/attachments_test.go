package bridge_test

import (
	"archive/zip"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// writeZip writes a zip archive (no compression: PHP's phar wrapper reads
// it as it is) holding one file.
func writeZip(t *testing.T, path, name string, data []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = z.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// countConnections listens on loopback and counts the connections made
// to it, closing each at once; it stops when the test ends.
func countConnections(t *testing.T) (addr string, count *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	count = &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			count.Add(1)
			c.Close()
		}
	}()
	return l.Addr().String(), count
}

// deref returns *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestBridgeRefusesStreamWrappers calls the bridge's wp_mail() in a real
// WordPress site with attachment paths a visitor's input could carry: a
// stream wrapper (phar://, ftp://, file://, php://, compress.zlib://)
// fails the whole message with wp_mail_failed naming the path, opens
// nothing, reaches no host and queues nothing; a file on the server still
// attaches, and a missing one is still left out.
func TestBridgeRefusesStreamWrappers(t *testing.T) {
	site, db := bridgedSite(t, "wpw_")
	ctx := context.Background()
	local := filepath.Join(site.Dir, "report.txt")
	if err := os.WriteFile(local, []byte("local report"), 0o600); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(site.Dir, "upload.zip")
	writeZip(t, archive, "inner.txt", []byte("inside the archive"))
	ftpAddr, ftpConnections := countConnections(t)

	phar := "phar://" + archive + "/inner.txt"
	ftp := "ftp://" + ftpAddr + "/inner.txt"
	cases := []struct {
		name        string
		attachments string // PHP expression
		refused     string // the path wp_mail_failed names; "" when the message is queued
		want        []core.Attachment
	}{
		{"phar", `array( ` + wpsite.PHPString(phar) + ` )`, phar, nil},
		{"phar in capitals", `array( ` + wpsite.PHPString("PHAR://"+archive+"/inner.txt") + ` )`, "PHAR://" + archive + "/inner.txt", nil},
		{"ftp, as a newline-separated string", wpsite.PHPString(local + "\r\n" + ftp), ftp, nil},
		{"file://", `array( ` + wpsite.PHPString("file://"+local) + ` )`, "file://" + local, nil},
		{"php://filter", `array( ` + wpsite.PHPString("php://filter/resource="+local) + ` )`, "php://filter/resource=" + local, nil},
		{"compress.zlib://", `array( ` + wpsite.PHPString("compress.zlib://"+local) + ` )`, "compress.zlib://" + local, nil},
		{"named, beside a local file", `array( ` + wpsite.PHPString(local) + `, 'invoice.txt' => ` + wpsite.PHPString(phar) + ` )`, phar, nil},
		{"a local file", `array( 'named.txt' => ` + wpsite.PHPString(local) + ` )`, "",
			[]core.Attachment{{Filename: "named.txt", ContentType: "text/plain", Data: []byte("local report")}}},
		{"a local file and a missing one", `array( ` + wpsite.PHPString(local) + `, '/nonexistent/phar:/x.txt' )`, "",
			[]core.Attachment{{Filename: "report.txt", ContentType: "text/plain", Data: []byte("local report")}}},
	}

	var php strings.Builder
	php.WriteString("$out = array();\nadd_action( 'wp_mail_failed', function ( $e ) use ( &$failed ) { $failed = $e->get_error_code() . ': ' . $e->get_error_message(); } );\n")
	for i, c := range cases {
		php.WriteString("$failed = null;\n")
		php.WriteString("$r = wp_mail( 'to@example.com', 'case " + string(rune('a'+i)) + "', 'body', '', " + c.attachments + " );\n")
		php.WriteString("$out[] = array( 'result' => $r, 'failed' => $failed );\n")
	}
	php.WriteString("echo wp_json_encode( $out );\n")
	raw := site.PHP(t, php.String())
	var calls []struct {
		Result bool    `json:"result"`
		Failed *string `json:"failed"`
	}
	if err := json.Unmarshal([]byte(raw), &calls); err != nil || len(calls) != len(cases) {
		t.Fatalf("PHP output %q: %v", raw, err)
	}
	logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string]*core.Log{}
	for _, l := range logs {
		bySubject[l.Message.Subject] = l
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call, subject := calls[i], "case "+string(rune('a'+i))
			queued := bySubject[subject]
			if c.refused != "" {
				if call.Result || call.Failed == nil {
					t.Fatalf("wp_mail() = %v, wp_mail_failed %q; want false and wp_mail_failed", call.Result, deref(call.Failed))
				}
				if !strings.HasPrefix(*call.Failed, "wp_mail_failed: Could not access file: "+c.refused+" ") {
					t.Errorf("wp_mail_failed says %q, want it to name %s", *call.Failed, c.refused)
				}
				if queued != nil {
					t.Errorf("queued with %d attachments", len(queued.Message.Attachments))
				}
				return
			}
			if !call.Result || call.Failed != nil {
				t.Fatalf("wp_mail() = %v, wp_mail_failed %q; want true and no failure", call.Result, deref(call.Failed))
			}
			if queued == nil {
				t.Fatal("not queued")
			}
			got := queued.Message.Attachments
			if len(got) != len(c.want) {
				t.Fatalf("attachments %+v, want %+v", got, c.want)
			}
			for j := range got {
				if got[j].Filename != c.want[j].Filename || got[j].ContentType != c.want[j].ContentType || string(got[j].Data) != string(c.want[j].Data) {
					t.Errorf("attachment %d = %s %s %q, want %s %s %q", j, got[j].Filename, got[j].ContentType, got[j].Data,
						c.want[j].Filename, c.want[j].ContentType, c.want[j].Data)
				}
			}
		})
	}
	if n := ftpConnections.Load(); n != 0 {
		t.Errorf("the ftp:// attachment connected to %s %d times", ftpAddr, n)
	}
}
