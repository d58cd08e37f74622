// Package dnsfake is a local authoritative DNS server for tests, built on
// github.com/miekg/dns: it serves the records a test gives (in zone-file
// syntax) over UDP and TCP on 127.0.0.1, follows CNAMEs inside its data,
// answers NXDOMAIN for names it has nothing for, and SERVFAIL for names
// told to fail.
package dnsfake

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	mdns "github.com/miekg/dns"
)

// Server is a running fake DNS server.
type Server struct {
	// Addr is the host:port to query (UDP and TCP).
	Addr string

	mu      sync.Mutex
	records map[string][]mdns.RR // by lower-case FQDN
	failing map[string]bool
	queries []string

	udp, tcp *mdns.Server
}

// Start serves records (zone-file lines, e.g. `example.com. 300 IN TXT
// "v=spf1 -all"`) until the test ends.
func Start(t testing.TB, records ...string) *Server {
	t.Helper()
	s := &Server{records: map[string][]mdns.RR{}, failing: map[string]bool{}}
	if err := s.Add(records...); err != nil {
		t.Fatal(err)
	}
	pc, l, err := listenPair()
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = pc.LocalAddr().String()
	h := mdns.HandlerFunc(s.serve)
	s.udp = &mdns.Server{PacketConn: pc, Handler: h}
	s.tcp = &mdns.Server{Listener: l, Handler: h}
	started := make(chan struct{}, 2)
	s.udp.NotifyStartedFunc = func() { started <- struct{}{} }
	s.tcp.NotifyStartedFunc = func() { started <- struct{}{} }
	go func() { _ = s.udp.ActivateAndServe() }()
	go func() { _ = s.tcp.ActivateAndServe() }()
	<-started
	<-started
	t.Cleanup(func() {
		_ = s.udp.Shutdown()
		_ = s.tcp.Shutdown()
	})
	return s
}

// listenPair listens on UDP and TCP on one loopback port. The UDP port
// is the system's choice, and the same TCP port may be taken (by another
// test's connection, say): then it tries another.
func listenPair() (net.PacketConn, net.Listener, error) {
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l, nil
		}
		pc.Close()
		lastErr = err
	}
	return nil, nil, fmt.Errorf("dnsfake: no loopback port free for both UDP and TCP: %w", lastErr)
}

// Add adds records in zone-file syntax.
func (s *Server) Add(records ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range records {
		rr, err := mdns.NewRR(line)
		if err != nil {
			return fmt.Errorf("dnsfake: record %q: %w", line, err)
		}
		if rr == nil {
			continue
		}
		name := strings.ToLower(rr.Header().Name)
		s.records[name] = append(s.records[name], rr)
	}
	return nil
}

// Fail makes queries for name answer SERVFAIL.
func (s *Server) Fail(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing[strings.ToLower(mdns.Fqdn(name))] = true
}

// Queries returns the questions asked so far, as "TYPE name".
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

func (s *Server) serve(w mdns.ResponseWriter, req *mdns.Msg) {
	m := new(mdns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = mdns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	s.mu.Lock()
	s.queries = append(s.queries, mdns.TypeToString[q.Qtype]+" "+strings.TrimSuffix(name, "."))
	if s.failing[name] {
		s.mu.Unlock()
		m.Rcode = mdns.RcodeServerFailure
		_ = w.WriteMsg(m)
		return
	}
	if _, ok := s.records[name]; !ok {
		m.Rcode = mdns.RcodeNameError
	}
	for hops := 0; hops < 8; hops++ {
		var cname *mdns.CNAME
		for _, rr := range s.records[name] {
			switch {
			case rr.Header().Rrtype == q.Qtype:
				m.Answer = append(m.Answer, rr)
			case rr.Header().Rrtype == mdns.TypeCNAME:
				cname = rr.(*mdns.CNAME)
			}
		}
		if len(m.Answer) > 0 && m.Answer[len(m.Answer)-1].Header().Rrtype == q.Qtype || cname == nil || q.Qtype == mdns.TypeCNAME {
			break
		}
		m.Answer = append(m.Answer, cname)
		name = strings.ToLower(cname.Target)
	}
	s.mu.Unlock()
	_ = w.WriteMsg(m)
}
