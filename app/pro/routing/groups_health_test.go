package routing_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	adaptersesid "github.com/mailsvc/mailsvc/adapters/pro/sesid"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/app/pro/sesid"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/sesfake"
)

// marker records the connections marked down.
type marker struct {
	mu   sync.Mutex
	down []string // "id:previous status"
}

func (m *marker) MarkDown(_ context.Context, c *core.Connection, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = append(m.down, string(rune('0'+c.ID))+":"+c.HealthStatus)
	return nil
}

// TestConnectionFailedSkipsTheMemberAtOnce: a connection-level failure
// reported by the engine takes the member out of the failover order at
// once, even while the snapshot is cached, and is stored once.
func TestConnectionFailedSkipsTheMemberAtOnce(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(conn(1, "shop@example.com", true, core.HealthHealthy), conn(2, "shop@example.com", true, core.HealthHealthy),
		conn(3, "other@example.com", true, core.HealthHealthy))
	svc.CacheTTL = time.Hour
	m := &marker{}
	svc.Health = m
	if _, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "shop@example.com", Strategy: "failover",
		Members: []routing.MemberInput{{ConnectionID: 1}, {ConnectionID: 2}}}); err != nil {
		t.Fatal(err)
	}
	if c, _ := svc.Choose(ctx, sample()); !slices.Equal(c.ConnectionIDs, []int64{1, 2}) {
		t.Fatalf("before: %v", c.ConnectionIDs)
	}
	svc.ConnectionFailed(ctx, 1, "smtp: connect 127.0.0.1:9: connection refused")
	svc.ConnectionFailed(ctx, 1, "smtp: connect 127.0.0.1:9: connection refused")
	svc.ConnectionFailed(ctx, 99, "no such connection")
	if c, _ := svc.Choose(ctx, sample()); !slices.Equal(c.ConnectionIDs, []int64{2}) {
		t.Fatalf("after the failure: %v, want [2]", c.ConnectionIDs)
	}
	if !slices.Equal(m.down, []string{"1:" + core.HealthHealthy}) {
		t.Fatalf("marked down %v, want connection 1 once", m.down)
	}
	// Both members down: every active member is tried (nothing better).
	svc.ConnectionFailed(ctx, 2, "HTTP 401")
	if c, _ := svc.Choose(ctx, sample()); !slices.Equal(c.ConnectionIDs, []int64{1, 2}) {
		t.Fatalf("all down: %v, want [1 2]", c.ConnectionIDs)
	}
}

const (
	sesRegion = "eu-west-1"
	sesKey    = "AKIDROUTINGTEST"
	sesSecret = "routing-ses-secret-42"
)

// sesConns serves connections for both sesid (Effective) and routing
// (List).
type sesConns []*core.Connection

func (c sesConns) List(context.Context, int, int) ([]*core.Connection, int, error) {
	return c, len(c), nil
}

func (c sesConns) Effective(_ context.Context, id int64) (*core.Connection, error) {
	for _, x := range c {
		if x.ID == id {
			return x, nil
		}
	}
	return nil, core.Errorf(core.ENOTFOUND, "no connection %d", id)
}

// TestSESVerifiedIdentitiesSendAs: an SES connection without from_email
// sends as its verified addresses and any address at (a subdomain of) its
// verified domains, as the SES fake reports them; the answer is cached and
// asked again when a PUT names an address it does not cover yet.
func TestSESVerifiedIdentitiesSendAs(t *testing.T) {
	fake := sesfake.New(sesRegion, sesKey, sesSecret)
	defer fake.Close()
	fake.AddIdentity("verified.example", "SUCCESS")
	fake.AddIdentity("ops@other.example", "SUCCESS")
	fake.AddIdentity("pending.example", "PENDING")
	sesConn := func(id int64, from string) *core.Connection {
		s := core.Settings{"region": sesRegion, "custom_endpoint": fake.URL, "access_key": sesKey, "secret": sesSecret}
		if from != "" {
			s["from_email"] = from
		}
		return &core.Connection{ID: id, Name: "ses" + string(rune('0'+id)), Driver: "ses", IsActive: true, Settings: s}
	}
	conns := sesConns{conn(1, "shop@verified.example", true, ""), sesConn(2, ""), conn(3, "ops@other.example", true, ""),
		sesConn(4, "fixed@elsewhere.example"), conn(5, "a@pending.example", true, "")}
	ids := &sesid.Service{Connections: conns, Dial: adaptersesid.Dialer(nil)}
	var lookups int
	var mu sync.Mutex
	st := newMemStore()
	svc := &routing.Service{Store: st, Connections: conns, CacheTTL: time.Nanosecond,
		Identities: func(ctx context.Context, id int64) ([]string, []string, error) {
			mu.Lock()
			lookups++
			mu.Unlock()
			v, err := ids.ValidSenders(ctx, id)
			if err != nil {
				return nil, nil, err
			}
			return v.Addresses, v.Domains, nil
		}}
	ctx := context.Background()

	groups, err := svc.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range groups {
		var ms []string
		for _, m := range g.Members {
			ms = append(ms, m.Name)
		}
		got = append(got, g.Sender+"="+strings.Join(ms, ","))
	}
	// ses4's from_email replaces every From: its identities do not count;
	// pending.example is not verified.
	if want := "ops@other.example=ses2,c3|shop@verified.example=c1,ses2"; strings.Join(got, "|") != want {
		t.Fatalf("groups %s, want %s", strings.Join(got, "|"), want)
	}

	tests := []struct {
		name    string
		sender  string
		members []int64
		ok      bool
	}{
		{"a verified domain", "shop@verified.example", []int64{2, 1}, true},
		{"a subdomain of a verified domain", "news@mail.verified.example", []int64{2}, true},
		{"a verified address", "ops@other.example", []int64{3, 2}, true},
		{"another address at the verified address's domain", "sales@other.example", []int64{2}, false},
		{"a pending domain", "a@pending.example", []int64{5, 2}, false},
		{"an SES connection with its own from_email", "shop@verified.example", []int64{1, 4}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := routing.GroupInput{Sender: tt.sender, Strategy: "failover"}
			for _, id := range tt.members {
				in.Members = append(in.Members, routing.MemberInput{ConnectionID: id})
			}
			_, err := svc.SaveGroup(ctx, in)
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok && core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("accepted (%v), want 422", err)
			}
		})
	}

	// Delivery uses the identities: shop@verified.example goes to ses2 first.
	l := sample()
	l.Message.From.Email = "shop@verified.example"
	if c, err := svc.Choose(ctx, l); err != nil || !slices.Equal(c.ConnectionIDs, []int64{2, 1}) {
		t.Fatalf("choose: %v %v, want [2 1]", c.ConnectionIDs, err)
	}

	// Cached: listing and choosing again asks SES nothing new, except the
	// PUTs above that named an address not covered (asked again, once each).
	mu.Lock()
	before := lookups
	mu.Unlock()
	for range 5 {
		if _, err := svc.Groups(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Choose(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	after := lookups
	mu.Unlock()
	if after != before {
		t.Fatalf("%d lookups while cached", after-before)
	}

	// An identity verified since: the PUT asks again and accepts it.
	fake.AddIdentity("new.example", "SUCCESS")
	if _, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "hello@new.example", Strategy: "failover",
		Members: []routing.MemberInput{{ConnectionID: 2}}}); err != nil {
		t.Fatalf("newly verified domain: %v", err)
	}
}

// TestIdentityLookupFailureKeepsTheLastAnswer: SES unreachable, the
// groups are listed with the identities last read (none at first), and
// the routes do not fail.
func TestIdentityLookupFailureKeepsTheLastAnswer(t *testing.T) {
	fail := false
	conns := sesConns{conn(1, "shop@example.com", true, ""),
		{ID: 2, Name: "ses", Driver: "ses", IsActive: true, Settings: core.Settings{}}}
	svc := &routing.Service{Store: newMemStore(), Connections: conns, CacheTTL: time.Nanosecond, IdentityTTL: time.Nanosecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Identities: func(context.Context, int64) ([]string, []string, error) {
			if fail {
				return nil, nil, core.Errorf(core.EUNAVAILABLE, "SES cannot be reached")
			}
			return nil, []string{"example.com"}, nil
		}}
	ctx := context.Background()
	count := func() int {
		t.Helper()
		groups, err := svc.Groups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) == 0 {
			return 0
		}
		return len(groups[0].Members)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d members, want 2", n)
	}
	fail = true
	if n := count(); n != 2 {
		t.Fatalf("SES down: %d members, want the last answer's 2", n)
	}
}
