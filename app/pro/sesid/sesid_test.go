package sesid

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

func TestParseIdentity(t *testing.T) {
	tests := []struct {
		in, name, kind string
		ok             bool
	}{
		{"Shop.Example.com", "shop.example.com", TypeDomain, true},
		{" me@Shop.Example.com ", "me@shop.example.com", TypeEmailAddress, true},
		{"", "", "", false},
		{"Me <me@example.com>", "", "", false},
		{"me@localhost", "", "", false},
		{"not a domain", "", "", false},
		{"example", "", "", false},
	}
	for _, tt := range tests {
		name, kind, problem := ParseIdentity(tt.in)
		if (problem == "") != tt.ok || name != tt.name || kind != tt.kind {
			t.Errorf("ParseIdentity(%q) = %q, %q, %q; want %q, %q, ok %v", tt.in, name, kind, problem, tt.name, tt.kind, tt.ok)
		}
	}
}

func TestDKIMRecords(t *testing.T) {
	got := DKIMRecords("example.com", []string{"t1", "t2", "t3"})
	want := []DNSRecord{
		{"CNAME", "t1._domainkey.example.com", "t1.dkim.amazonses.com"},
		{"CNAME", "t2._domainkey.example.com", "t2.dkim.amazonses.com"},
		{"CNAME", "t3._domainkey.example.com", "t3.dkim.amazonses.com"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v", got)
	}
}

// memConns serves connections by id; effective and stored settings are
// given separately.
type memConns struct {
	effective, stored map[int64]*core.Connection
}

func (m memConns) Effective(_ context.Context, id int64) (*core.Connection, error) {
	if c, ok := m.effective[id]; ok {
		return c, nil
	}
	return nil, core.Errorf(core.ENOTFOUND, "no connection %d", id)
}

func (m memConns) List(context.Context, int, int) ([]*core.Connection, int, error) {
	var out []*core.Connection
	for _, c := range m.effective {
		out = append(out, c)
	}
	return out, len(out), nil
}

func (m memConns) FindConnectionByID(_ context.Context, id int64) (*core.Connection, error) {
	if c, ok := m.stored[id]; ok {
		return c, nil
	}
	return nil, core.Errorf(core.ENOTFOUND, "no connection %d", id)
}

func TestCredentialSources(t *testing.T) {
	ses := func(s core.Settings) *core.Connection { return &core.Connection{ID: 1, Driver: Driver, Settings: s} }
	tests := []struct {
		name      string
		effective core.Settings
		stored    core.Settings
		pins      map[string]core.Pin
		env       map[string]string
		inUse     string
		available map[string]bool
	}{
		{"database", core.Settings{"access_key": "A", "secret": "S"}, core.Settings{"access_key": "enc", "secret": "enc"}, nil, nil,
			SourceDatabase, map[string]bool{SourceDatabase: true}},
		{"wp-config over a stored key", core.Settings{"access_key": "W", "secret": "W"}, core.Settings{"access_key": "enc", "secret": "enc"},
			map[string]core.Pin{"access_key": {Constant: "MAILSVC_AWS_SES_ACCESS_KEY_ID", Source: core.SourceWPConfig},
				"secret": {Constant: "MAILSVC_AWS_SES_SECRET_KEY", Source: core.SourceWPConfig}},
			map[string]string{"MAILSVC_AWS_ACCESS_KEY_ID": "E", "MAILSVC_AWS_SECRET_ACCESS_KEY": "E"},
			SourceWPConfig, map[string]bool{SourceDatabase: true, SourceWPConfig: true, SourceEnvironment: true}},
		{"environment, half", core.Settings{"access_key": "E", "secret": "S"}, core.Settings{"secret": "enc"},
			map[string]core.Pin{"access_key": {Constant: "MAILSVC_AWS_SES_ACCESS_KEY_ID", Source: core.SourceEnvironment}},
			map[string]string{"MAILSVC_AWS_SES_ACCESS_KEY_ID": "E"},
			SourceEnvironment, map[string]bool{}},
		{"instance role", core.Settings{"imds_role_source": true}, core.Settings{"imds_role_source": true}, nil, nil,
			SourceInstanceRole, map[string]bool{SourceInstanceRole: true}},
		{"none", core.Settings{"region": "us-east-1"}, core.Settings{}, nil, nil, "", map[string]bool{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conns := memConns{effective: map[int64]*core.Connection{1: ses(tt.effective)}, stored: map[int64]*core.Connection{1: ses(tt.stored)}}
			s := &Service{Connections: conns, Stored: conns,
				Pins:      func(string, []string) map[string]core.Pin { return tt.pins },
				LookupEnv: func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }}
			out, err := s.CredentialSources(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if out.InUse != tt.inUse {
				t.Errorf("in use %q, want %q", out.InUse, tt.inUse)
			}
			if len(out.Sources) != 4 {
				t.Fatalf("%d sources", len(out.Sources))
			}
			for _, src := range out.Sources {
				if src.Available != tt.available[src.Source] {
					t.Errorf("%s available %v, want %v (%+v)", src.Source, src.Available, tt.available[src.Source], src)
				}
				if src.InUse != (src.Source == tt.inUse) {
					t.Errorf("%s in_use %v", src.Source, src.InUse)
				}
			}
		})
	}
	conns := memConns{effective: map[int64]*core.Connection{2: {ID: 2, Driver: "smtp"}}}
	s := &Service{Connections: conns, Stored: conns}
	for id, code := range map[int64]string{0: core.EINVALID, 2: core.EINVALID, 9: core.ENOTFOUND} {
		if _, err := s.CredentialSources(context.Background(), id); core.ErrorCode(err) != code {
			t.Errorf("connection %d: %v, want %s", id, err, code)
		}
	}
}

// memClient is an in-memory SES account.
type memClient struct {
	ids     map[string]*Identity
	created []string
}

func (m *memClient) ListIdentities(context.Context) ([]Identity, error) {
	var out []Identity
	for _, it := range m.ids {
		out = append(out, Identity{Identity: it.Identity, Type: it.Type, VerificationStatus: it.VerificationStatus, VerifiedForSending: it.VerifiedForSending})
	}
	return out, nil
}

func (m *memClient) GetIdentity(_ context.Context, name string) (*Identity, error) {
	if it, ok := m.ids[name]; ok {
		c := *it
		return &c, nil
	}
	return nil, core.Errorf(core.ENOTFOUND, "none")
}

func (m *memClient) CreateIdentity(_ context.Context, name string) (*Identity, error) {
	if _, ok := m.ids[name]; ok {
		return nil, core.Errorf(core.ECONFLICT, "exists")
	}
	m.created = append(m.created, name)
	it := &Identity{Identity: name, Type: TypeDomain, VerificationStatus: StatusPending, DKIM: &DKIM{Tokens: []string{"a", "b", "c"}}}
	m.ids[name] = it
	return it, nil
}

func (m *memClient) DeleteIdentity(_ context.Context, name string) error {
	if _, ok := m.ids[name]; !ok {
		return core.Errorf(core.ENOTFOUND, "none")
	}
	delete(m.ids, name)
	return nil
}

func (m *memClient) Account(context.Context) (*Account, error) {
	return &Account{Max24HourSend: -1, SentLast24Hours: 5, ProductionAccessEnabled: true}, nil
}

func TestActAndSenders(t *testing.T) {
	cl := &memClient{ids: map[string]*Identity{
		"b.example":   {Identity: "b.example", Type: TypeDomain, VerificationStatus: StatusSuccess, VerifiedForSending: true, DKIM: &DKIM{Tokens: []string{"x"}}},
		"a@c.example": {Identity: "a@c.example", Type: TypeEmailAddress, VerificationStatus: StatusSuccess, VerifiedForSending: true, DKIM: &DKIM{}},
		"p@c.example": {Identity: "p@c.example", Type: TypeEmailAddress, VerificationStatus: StatusPending, DKIM: &DKIM{}},
	}}
	conns := memConns{effective: map[int64]*core.Connection{1: {ID: 1, Driver: Driver, IsActive: true}}}
	s := &Service{Connections: conns, Stored: conns, Dial: func(*core.Connection) (Client, error) { return cl, nil }}
	ctx := context.Background()

	list, err := s.Identities(ctx, 1)
	if err != nil || len(list) != 3 || list[0].Identity != "a@c.example" || len(list[1].DKIM.Records) != 1 || len(list[0].DKIM.Records) != 0 {
		t.Errorf("identities %+v, %v", list, err)
	}
	snd, err := s.ValidSenders(ctx, 1)
	if err != nil || !reflect.DeepEqual(snd.Addresses, []string{"a@c.example"}) || !reflect.DeepEqual(snd.Domains, []string{"b.example"}) || snd.Sandbox {
		t.Errorf("senders %+v, %v", snd, err)
	}
	res, err := s.Act(ctx, 1, "VERIFY", "New.Example")
	if err != nil || len(res.Records) != 3 || res.Records[0].Name != "a._domainkey.new.example" || !reflect.DeepEqual(cl.created, []string{"new.example"}) {
		t.Errorf("verify %+v, %v (created %q)", res, err, cl.created)
	}
	if res, err := s.Act(ctx, 1, "verify", "b.example"); err != nil || res.Identity.VerificationStatus != StatusSuccess || len(res.Records) != 1 {
		t.Errorf("verify an existing identity %+v, %v", res, err)
	}
	if _, err := s.Act(ctx, 1, "delete", "gone.example"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("delete unknown: %v", err)
	}
	if _, err := s.Act(ctx, 0, "frob", ""); len(core.ErrorFields(err)) != 3 {
		t.Errorf("bad input: %v, want errors on action, identity and connection_id", err)
	}
	st, err := s.Stats(ctx, 1)
	if err != nil || st.Remaining24Hours != 0 || st.Sandbox {
		t.Errorf("stats with an unlimited quota %+v, %v", st, err)
	}
	if tokens, ok := s.DomainTokens(ctx, "b.example"); !ok || !reflect.DeepEqual(tokens, []string{"x"}) {
		t.Errorf("domain tokens %q %v", tokens, ok)
	}
	if _, ok := s.DomainTokens(ctx, "unknown.example"); ok {
		t.Error("tokens of an unknown domain")
	}
}

// TestUnusableConnectionNotDialled: a connection whose settings cannot be
// used (an endpoint off the provider's hosts, undecryptable secrets) is
// never dialled; its credential sources can still be read.
func TestUnusableConnectionNotDialled(t *testing.T) {
	bad := &core.Connection{ID: 1, Driver: Driver, SettingsError: "The endpoint setting custom_endpoint is off the provider's own hosts.",
		Settings: core.Settings{"region": "us-east-1", "custom_endpoint": "http://10.0.0.5/"}}
	conns := memConns{effective: map[int64]*core.Connection{1: bad}, stored: map[int64]*core.Connection{1: bad}}
	dialled := 0
	s := &Service{Connections: conns, Stored: conns, Dial: func(*core.Connection) (Client, error) { dialled++; return &memClient{}, nil }}
	_, err := s.Identities(context.Background(), 1)
	if !strings.Contains(core.ErrorFields(err)["connection_id"], "custom_endpoint") {
		t.Errorf("Identities = %v, want a validation error naming custom_endpoint", err)
	}
	if dialled != 0 {
		t.Errorf("dialled %d times", dialled)
	}
	if _, err := s.CredentialSources(context.Background(), 1); err != nil {
		t.Errorf("CredentialSources = %v", err)
	}
}
