package netguard

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url          string
		allowPrivate bool
		wantErr      string // "" when allowed
		wantRefused  bool
	}{
		{"https://hooks.slack.com/services/T0/B0/xyz", false, "", false},
		{"http://93.184.216.34:8080/hook", false, "", false},
		{"http://[2606:4700::1111]/hook", false, "", false},
		{"http://127.0.0.1/hook", false, "loopback", true},
		{"http://127.9.9.9/hook", false, "loopback", true},
		{"http://10.1.2.3/hook", false, "private", true},
		{"http://172.16.0.1/hook", false, "private", true},
		{"http://192.168.1.1/hook", false, "private", true},
		{"http://169.254.169.254/latest/meta-data/", false, "link-local", true},
		{"http://[::1]:8080/hook", false, "loopback", true},
		{"http://[fd00:ec2::254]/", false, "private", true},
		{"http://[fe80::1]/", false, "link-local", true},
		{"http://[::ffff:127.0.0.1]/", false, "IPv4-mapped", true},
		{"http://[64:ff9b::a9fe:a9fe]/", false, "NAT64", true},
		{"http://0.0.0.0/", false, "unspecified", true},
		{"http://100.64.0.1/", false, "CGNAT", true},
		{"http://239.1.2.3/", false, "multicast", true},
		{"http://localhost:8080/hook", false, "loopback", true},
		{"http://api.LOCALHOST./hook", false, "loopback", true},
		{"ftp://example.com/hook", false, "http or https", true},
		{"file:///etc/passwd", true, "http or https", true},
		{"javascript:alert(1)", true, "http or https", true},
		{"https:///nohost", true, "host", false},
		{"http://%zz", true, "valid URL", false},
		{"http://127.0.0.1/hook", true, "", false},
		{"http://10.1.2.3/hook", true, "", false},
		{"http://169.254.169.254/", true, "", false},
		{"http://[::1]:8080/hook", true, "", false},
		{"http://localhost:8080/hook", true, "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.url, tt.allowPrivate), func(t *testing.T) {
			err := CheckURL(tt.url, tt.allowPrivate)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckURL = %v, want allowed", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckURL = %v, want an error saying %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrRefused) != tt.wantRefused {
				t.Errorf("errors.Is(ErrRefused) = %v, want %v", !tt.wantRefused, tt.wantRefused)
			}
			if strings.Contains(err.Error(), "/hook") {
				t.Errorf("error %q repeats the URL", err)
			}
		})
	}
}

func TestClientRefusesPrivateAddressesAtConnectTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("reached"))
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	tests := []struct {
		name string
		url  string
		// reachable: with allowPrivate the request reaches srv.
		reachable bool
	}{
		{"loopback literal", srv.URL + "/hook", true},
		{"localhost resolves to loopback", "http://localhost:" + port + "/hook", true},
		{"private 10/8", "http://10.255.255.1:" + port + "/", false},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", false},
		{"ipv6 loopback", "http://[::1]:" + port + "/", false},
	}
	guarded := NewClient(false, 5*time.Second)
	open := NewClient(true, 5*time.Second)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := guarded.Get(tt.url)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("guarded client reached %s", tt.url)
			}
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("guarded client error = %v, want ErrRefused", err)
			}
			if !tt.reachable {
				return
			}
			resp, err = open.Get(tt.url)
			if err != nil {
				t.Fatalf("allowPrivate client: %v", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("allowPrivate client status %d", resp.StatusCode)
			}
		})
	}
}

func TestClientRefusesOtherSchemes(t *testing.T) {
	for _, allow := range []bool{false, true} {
		_, err := NewClient(allow, time.Second).Get("ftp://example.com/x")
		if !errors.Is(err, ErrRefused) {
			t.Errorf("allowPrivate=%v: ftp error = %v, want ErrRefused", allow, err)
		}
	}
}

// TestClientRefusesRedirectToLoopback starts on an address the test
// policy allows (127.0.0.1) and is redirected to one it refuses
// (127.0.0.2, loopback as the real policy says), so only the redirect can
// be what stops the client.
func TestClientRefusesRedirectToLoopback(t *testing.T) {
	var hops atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer srv.Close()
	allowOnlyServer := func(ip netip.Addr) (bool, string) {
		if ip == netip.MustParseAddr("127.0.0.1") {
			return false, ""
		}
		return Refused(ip)
	}
	tests := []struct {
		to string
	}{
		{"http://127.0.0.2:1/internal"},
		{"http://localhost:1/internal"},
		{"http://169.254.169.254/latest/meta-data/"},
		{"ftp://example.com/"},
	}
	for _, tt := range tests {
		t.Run(tt.to, func(t *testing.T) {
			hops.Store(0)
			c := newClient(false, 5*time.Second, allowOnlyServer)
			_, err := c.Get(srv.URL + "/?to=" + tt.to)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("error = %v, want ErrRefused", err)
			}
			if hops.Load() != 1 {
				t.Errorf("server saw %d requests, want 1", hops.Load())
			}
		})
	}
	// The real client's redirect policy on its own.
	c := NewClient(false, time.Second)
	for _, to := range []string{"http://127.0.0.1/", "http://[::1]/", "http://10.0.0.1/"} {
		req, _ := http.NewRequest(http.MethodGet, to, nil)
		if err := c.CheckRedirect(req, []*http.Request{{}}); !errors.Is(err, ErrRefused) {
			t.Errorf("CheckRedirect(%s) = %v, want ErrRefused", to, err)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "https://example.com/next", nil)
	if err := c.CheckRedirect(req, []*http.Request{{}}); err != nil {
		t.Errorf("CheckRedirect(public) = %v", err)
	}
	if err := NewClient(true, time.Second).CheckRedirect(httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil), []*http.Request{{}}); err != nil {
		t.Errorf("allowPrivate CheckRedirect(loopback) = %v", err)
	}
}
