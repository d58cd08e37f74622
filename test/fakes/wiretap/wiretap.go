// Package wiretap is a capture server on loopback: a TCP proxy that
// records every byte a client sends through it, then passes the
// connection on to a target (an SMTP sink, an HTTP fake), so a test can
// tell whether a secret went on the wire: in an SMTP AUTH exchange, an
// HTTP header or a token request's form body.
package wiretap

import (
	"bytes"
	"encoding/base64"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Tap is a running capture proxy. Its zero value is not usable; call
// Start.
type Tap struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	sent   bytes.Buffer
	conns  int
	open   map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a free loopback port and proxies every connection to
// target (host:port). The tap closes when the test ends.
func Start(t testing.TB, target string) *Tap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &Tap{ln: ln, target: target, open: map[net.Conn]bool{}}
	tp.wg.Add(1)
	go tp.serve()
	t.Cleanup(tp.Close)
	return tp
}

// Addr returns the tap's host:port.
func (tp *Tap) Addr() string { return tp.ln.Addr().String() }

// Host returns the tap's IP address.
func (tp *Tap) Host() string { return "127.0.0.1" }

// Port returns the tap's port.
func (tp *Tap) Port() int { return tp.ln.Addr().(*net.TCPAddr).Port }

// URL returns http://host:port, the tap as an HTTP base URL.
func (tp *Tap) URL() string { return "http://" + tp.Addr() }

// Close stops accepting, closes the open connections (a client's
// keep-alive ones included) and waits for them to end.
func (tp *Tap) Close() {
	_ = tp.ln.Close()
	tp.mu.Lock()
	tp.closed = true
	for c := range tp.open {
		_ = c.Close()
	}
	tp.mu.Unlock()
	tp.wg.Wait()
}

// Connections returns how many connections the tap accepted.
func (tp *Tap) Connections() int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.conns
}

// Sent returns a copy of every byte clients sent through the tap.
func (tp *Tap) Sent() []byte {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return bytes.Clone(tp.sent.Bytes())
}

// Carries reports whether secret went through the tap: as it is,
// URL-encoded (a form body, a query), or inside a base64 word (SMTP AUTH
// PLAIN and LOGIN, XOAUTH2, HTTP Basic authentication).
func (tp *Tap) Carries(secret string) bool {
	if secret == "" {
		return false
	}
	sent := tp.Sent()
	if bytes.Contains(sent, []byte(secret)) || bytes.Contains(sent, []byte(url.QueryEscape(secret))) {
		return true
	}
	for _, word := range strings.Fields(string(sent)) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if dec, err := enc.DecodeString(word); err == nil && bytes.Contains(dec, []byte(secret)) {
				return true
			}
		}
	}
	return false
}

func (tp *Tap) serve() {
	defer tp.wg.Done()
	for {
		c, err := tp.ln.Accept()
		if err != nil {
			return
		}
		tp.mu.Lock()
		if tp.closed {
			tp.mu.Unlock()
			_ = c.Close()
			return
		}
		tp.conns++
		tp.open[c] = true
		tp.wg.Add(1)
		tp.mu.Unlock()
		go tp.proxy(c)
	}
}

// proxy copies c to the target (recording it) and the target's answers
// back, until either side closes.
func (tp *Tap) proxy(c net.Conn) {
	defer tp.wg.Done()
	defer func() {
		_ = c.Close()
		tp.mu.Lock()
		delete(tp.open, c)
		tp.mu.Unlock()
	}()
	up, err := net.Dial("tcp", tp.target)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(c, up)
		_ = c.Close()
		close(done)
	}()
	buf := make([]byte, 32*1024)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			tp.mu.Lock()
			tp.sent.Write(buf[:n])
			tp.mu.Unlock()
			if _, werr := up.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = up.Close()
	<-done
}
