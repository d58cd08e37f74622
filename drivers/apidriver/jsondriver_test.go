package apidriver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// acmeTransport is a driver's transport around the common one.
type acmeTransport struct {
	*apidriver.JSONTransport
	region string
}

func (acmeTransport) Send(context.Context, *core.Message) (core.Receipt, error) {
	return core.Receipt{}, nil
}

func acmeDriver() apidriver.JSONDriver {
	return apidriver.JSONDriver{
		Slug:            "acme",
		Name:            "Acme",
		APIKey:          apidriver.APIKeyField("API key", "An Acme key."),
		Account:         []core.Field{{Key: "account_id", Label: "Account", Type: core.FieldString}},
		FromHelp:        "Sender address.",
		Extra:           []core.Field{{Key: "region", Label: "Region", Type: core.FieldString}},
		DefaultBaseURL:  "https://api.acme.example",
		Hosts:           []string{"api.acme.example"},
		MaxMessageBytes: 1000,
		Auth:            apidriver.BearerAuth,
		DefaultBaseURLOf: func(s core.Settings) string {
			if s.String("region") == "eu" {
				return "https://eu.acme.example"
			}
			return "https://api.acme.example"
		},
		Open: func(t *apidriver.JSONTransport, s core.Settings) (core.Transport, error) {
			return acmeTransport{t, s.String("region")}, nil
		},
	}
}

// TestJSONDriverDescription: the common fields in their order around the
// provider's own, and the defaults of the rules, base_url help and
// concurrency.
func TestJSONDriverDescription(t *testing.T) {
	d := acmeDriver().Driver()
	var keys []string
	for _, f := range d.Fields {
		keys = append(keys, f.Key)
	}
	want := []string{"api_key", "account_id", "from_email", "from_name", "force_from", "region", "base_url"}
	if !slices.Equal(keys, want) {
		t.Errorf("fields %v, want %v", keys, want)
	}
	base := d.Fields[len(d.Fields)-1]
	if base.Help != "Leave empty for https://api.acme.example." || !base.Advanced || !base.Destination || !slices.Equal(base.Hosts, []string{"api.acme.example"}) {
		t.Errorf("base_url field %+v", base)
	}
	if d.DefaultConcurrency != apidriver.DefaultConcurrency || !slices.Equal(d.Rules, []string{apidriver.SenderRule, "base_url, when empty, is https://api.acme.example."}) {
		t.Errorf("concurrency %d, rules %q", d.DefaultConcurrency, d.Rules)
	}
}

// TestJSONDriverNew: the transport holds the common settings and what
// Open read; a missing api_key is a field error.
func TestJSONDriverNew(t *testing.T) {
	tests := []struct {
		settings  core.Settings
		wantBase  string
		wantError string
	}{
		{core.Settings{"api_key": "k", "region": "eu", "from_email": "a@b.example"}, "https://eu.acme.example", ""},
		{core.Settings{"api_key": "k", "base_url": "https://api.acme.example/x/"}, "https://api.acme.example/x", ""},
		{core.Settings{"region": "eu"}, "", "api_key"},
	}
	for _, tc := range tests {
		tr, err := acmeDriver().New(&core.Connection{Settings: tc.settings}, core.DriverEnv{})
		if tc.wantError != "" {
			if core.ErrorFields(err)[tc.wantError] == "" {
				t.Errorf("%v: error %v, want a %s field error", tc.settings, err, tc.wantError)
			}
			continue
		}
		a, ok := tr.(acmeTransport)
		if err != nil || !ok {
			t.Fatalf("%v: New = %T %v", tc.settings, tr, err)
		}
		if a.BaseURL() != tc.wantBase || a.region != tc.settings.String("region") || a.MaxMessageBytes != 1000 ||
			a.Sender.Email != tc.settings.String("from_email") || a.Client.Name != "acme" || a.Client.Auth == nil {
			t.Errorf("%v: transport %+v %+v", tc.settings, a, a.JSONTransport)
		}
	}
}

// TestJSONTransportVerify: Verify makes the driver's authenticated GET
// with the key; a rejected key is a permanent failure, and a driver that
// names no read fails without a call.
func TestJSONTransportVerify(t *testing.T) {
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path)
		if r.Header.Get("Authorization") != "Bearer good" {
			http.Error(w, `{"error":"bad key"}`, http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	tests := []struct {
		name          string
		read, key     string
		wantErr       bool
		wantPermanent bool
		wantCalls     []string
	}{
		{name: "accepted key", read: "/v1/account", key: "good", wantCalls: []string{"GET /v1/account"}},
		{name: "rejected key", read: "/v1/account", key: "bad", wantErr: true, wantPermanent: true, wantCalls: []string{"GET /v1/account"}},
		{name: "no read named", key: "good", wantErr: true, wantPermanent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			d := acmeDriver()
			d.VerifyRead = tc.read
			tr, err := d.New(&core.Connection{Settings: core.Settings{"api_key": tc.key, "base_url": srv.URL}}, core.DriverEnv{})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			err = tr.(core.Verifier).Verify(context.Background())
			if (err != nil) != tc.wantErr || (err != nil && core.IsTemporary(err) == tc.wantPermanent) {
				t.Errorf("Verify = %v, want error %v (permanent %v)", err, tc.wantErr, tc.wantPermanent)
			}
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("calls %q, want %q", calls, tc.wantCalls)
			}
		})
	}
}
