package core

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// envOf returns an env lookup over a fixed map.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestConstantsLookupPrecedence(t *testing.T) {
	tests := []struct {
		name      string
		wp, env   map[string]string
		lookup    string
		wantValue string
		wantSrc   ConstantSource
		wantOK    bool
	}{
		{"wp-config wins over environment", map[string]string{"MAILSVC_AWS_REGION": "eu-west-1"}, map[string]string{"MAILSVC_AWS_REGION": "us-east-1"}, "MAILSVC_AWS_REGION", "eu-west-1", SourceWPConfig, true},
		{"environment when wp-config lacks it", nil, map[string]string{"MAILSVC_AWS_REGION": "us-east-1"}, "MAILSVC_AWS_REGION", "us-east-1", SourceEnvironment, true},
		{"empty wp-config falls through to environment", map[string]string{"MAILSVC_AWS_REGION": ""}, map[string]string{"MAILSVC_AWS_REGION": "us-east-1"}, "MAILSVC_AWS_REGION", "us-east-1", SourceEnvironment, true},
		{"empty everywhere is undefined", map[string]string{"MAILSVC_AWS_REGION": ""}, map[string]string{"MAILSVC_AWS_REGION": ""}, "MAILSVC_AWS_REGION", "", SourceDefault, false},
		{"undefined gives the catalog default", nil, nil, "MAILSVC_ADDR", "127.0.0.1:8025", SourceDefault, false},
		{"daemon default table prefix", nil, nil, "MAILSVC_TABLE_PREFIX", "wp_", SourceDefault, false},
		{"unknown name from environment", nil, map[string]string{"MAILSVC_FOO_BAR": "x"}, "MAILSVC_FOO_BAR", "x", SourceEnvironment, true},
		{"canonical via legacy alias", map[string]string{"MAIL_SVC_USERNAME": "old"}, nil, "MAILSVC_SMTP_USERNAME", "old", SourceWPConfig, true},
		{"canonical wins over alias", map[string]string{"MAIL_SVC_USERNAME": "old"}, map[string]string{"MAILSVC_SMTP_USERNAME": "new"}, "MAILSVC_SMTP_USERNAME", "new", SourceEnvironment, true},
		{"ses alias", nil, map[string]string{"MAILSVC_AWS_ACCESS_KEY_ID": "AKIAALIAS"}, "MAILSVC_AWS_SES_ACCESS_KEY_ID", "AKIAALIAS", SourceEnvironment, true},
		{"invalid typed value is ignored", map[string]string{"MAILSVC_AWS_SES_SMTP_PORT": "70000"}, map[string]string{"MAILSVC_AWS_SES_SMTP_PORT": "587"}, "MAILSVC_AWS_SES_SMTP_PORT", "", SourceDefault, false},
		{"service-set constant is ignored", map[string]string{"MAIL_SVC_VERSION": "9"}, nil, "MAIL_SVC_VERSION", "", SourceDefault, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := NewConstants(tt.wp, envOf(tt.env))
			v, src, ok := c.Lookup(tt.lookup)
			if v != tt.wantValue || src != tt.wantSrc || ok != tt.wantOK {
				t.Errorf("Lookup(%s) = (%q, %q, %v), want (%q, %q, %v)", tt.lookup, v, src, ok, tt.wantValue, tt.wantSrc, tt.wantOK)
			}
		})
	}
}

func TestConstantsTypedAccessors(t *testing.T) {
	c, _ := NewConstants(map[string]string{
		"MAIL_SVC_DEBUG_HTTP":               "true",
		"MAIL_SVC_DEBUG_QUERIES":            "false",
		"MAIL_SVC_PRESERVE_DATA":            "1",
		"MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL":  "300",
		"MAILSVC_AWS_SES_SMTP_PORT":         "abc",
		"MAILSVC_USE_LOCAL_OAUTH_REDIRECTS": "maybe",
	}, envOf(map[string]string{"MAIL_SVC_DEBUG_MAILER": "ON", "MAIL_SVC_DEBUG_REQUEST": "0"}))
	bools := []struct {
		name string
		want bool
	}{
		{"MAIL_SVC_DEBUG_HTTP", true},
		{"MAIL_SVC_DEBUG_QUERIES", false},
		{"MAIL_SVC_PRESERVE_DATA", true},
		{"MAIL_SVC_DEBUG_MAILER", true},
		{"MAIL_SVC_DEBUG_REQUEST", false},
		{"MAIL_SVC_DEBUG_REDACT", false},
		{"MAILSVC_USE_LOCAL_OAUTH_REDIRECTS", false}, // invalid, ignored
	}
	for _, b := range bools {
		if got := c.Bool(b.name); got != b.want {
			t.Errorf("Bool(%s) = %v, want %v", b.name, got, b.want)
		}
	}
	ints := []struct {
		name     string
		def, out int64
	}{
		{"MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL", 21600, 300},
		{"MAILSVC_AWS_SES_SMTP_PORT", 587, 587}, // invalid, default
		{"MAILSVC_NOT_DEFINED", 7, 7},
	}
	for _, i := range ints {
		if got := c.Int(i.name, i.def); got != i.out {
			t.Errorf("Int(%s, %d) = %d, want %d", i.name, i.def, got, i.out)
		}
	}
	if got := c.String("MAILSVC_REST_CAPABILITY"); got != DefaultCapability {
		t.Errorf("String(MAILSVC_REST_CAPABILITY) = %q, want %q", got, DefaultCapability)
	}
}

func TestConstantsWarnings(t *testing.T) {
	tests := []struct {
		name    string
		wp, env map[string]string
		want    []string // substrings, one per expected warning, in order
	}{
		{"clean", map[string]string{"MAILSVC_AWS_REGION": "us-east-1", "DB_NAME": "wp"}, nil, nil},
		{"service-set in wp-config", map[string]string{"MAIL_SVC_WP_MAIL_TAKEOVER": "true", "MAIL_SVC_FILE": "/x"}, nil,
			[]string{"MAIL_SVC_WP_MAIL_TAKEOVER is set by the service itself and must not be defined in wp-config.php", "MAIL_SVC_FILE is set by the service"}},
		{"service-set in environment", nil, map[string]string{"MAIL_SVC_VITE_DEV_SERVER_URL": "http://x"},
			[]string{"MAIL_SVC_VITE_DEV_SERVER_URL is set by the service itself and must not be defined in the environment"}},
		{"bool not a boolean", map[string]string{"MAIL_SVC_DEBUG_HTTP": "yes please"}, nil, []string{`MAIL_SVC_DEBUG_HTTP (from wp-config) must be a boolean`}},
		{"int not a number", nil, map[string]string{"MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL": "1h"}, []string{`MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL (from environment) must be a whole number, got "1h"`}},
		{"port out of range", map[string]string{"MAILSVC_AWS_SES_SMTP_PORT": "0"}, nil, []string{"MAILSVC_AWS_SES_SMTP_PORT (from wp-config) must be between 1 and 65535, got 0"}},
		{"port in range", map[string]string{"MAILSVC_AWS_SES_SMTP_PORT": "65535"}, nil, nil},
		{"bad visibility", map[string]string{"MAIL_SVC_DEBUG_SECRET_VISIBILITY": "hide"}, nil, []string{"MAIL_SVC_DEBUG_SECRET_VISIBILITY (from wp-config) must be one of mask, show, full"}},
		{"empty values are not checked", map[string]string{"MAIL_SVC_DEBUG_HTTP": "", "MAILSVC_AWS_SES_SMTP_PORT": ""}, nil, nil},
		{"unknown MAILSVC constant in wp-config", map[string]string{"MAILSVC_SENDGRID_APIKEY": "x"}, nil, []string{"MAILSVC_SENDGRID_APIKEY is defined in wp-config.php but is not a known constant"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warnings := NewConstants(tt.wp, envOf(tt.env))
			if len(warnings) != len(tt.want) {
				t.Fatalf("got %d warnings %q, want %d", len(warnings), warnings, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], w)
				}
			}
		})
	}
}

func TestConstantsPins(t *testing.T) {
	tests := []struct {
		name    string
		wp, env map[string]string
		driver  string
		keys    []string
		want    map[string]Pin
	}{
		{"generic pattern", map[string]string{"MAILSVC_SENDGRID_API_KEY": "SG.x"}, nil, "sendgrid", []string{"api_key", "from_email"},
			map[string]Pin{"api_key": {Constant: "MAILSVC_SENDGRID_API_KEY", Value: "SG.x", Source: SourceWPConfig}}},
		{"smtp legacy aliases", map[string]string{"MAIL_SVC_USERNAME": "u", "MAIL_SVC_PASSWORD": "p"}, nil, "smtp", []string{"host", "username", "password"},
			map[string]Pin{"username": {Constant: "MAIL_SVC_USERNAME", Value: "u", Source: SourceWPConfig}, "password": {Constant: "MAIL_SVC_PASSWORD", Value: "p", Source: SourceWPConfig}}},
		{"canonical wins over alias even from a lower source", map[string]string{"MAIL_SVC_PASSWORD": "old"}, map[string]string{"MAILSVC_SMTP_PASSWORD": "new"}, "smtp", []string{"password"},
			map[string]Pin{"password": {Constant: "MAILSVC_SMTP_PASSWORD", Value: "new", Source: SourceEnvironment}}},
		{"empty canonical does not hide the alias", map[string]string{"MAILSVC_SMTP_PASSWORD": "", "MAIL_SVC_PASSWORD": "old"}, nil, "smtp", []string{"password"},
			map[string]Pin{"password": {Constant: "MAIL_SVC_PASSWORD", Value: "old", Source: SourceWPConfig}}},
		{"outlook microsoft token", map[string]string{"MAILSVC_MICROSOFT_TOKEN": "rt"}, nil, "outlook", []string{"refresh_token", "access_token", "client_id"},
			map[string]Pin{"refresh_token": {Constant: "MAILSVC_MICROSOFT_TOKEN", Value: "rt", Source: SourceWPConfig}}},
		{"outlook token over microsoft token", map[string]string{"MAILSVC_MICROSOFT_TOKEN": "old", "MAILSVC_OUTLOOK_TOKEN": "new"}, nil, "outlook", []string{"refresh_token", "access_token"},
			map[string]Pin{"refresh_token": {Constant: "MAILSVC_OUTLOOK_TOKEN", Value: "new", Source: SourceWPConfig}}},
		{"aliases are driver-specific", map[string]string{"MAIL_SVC_USERNAME": "u"}, nil, "mailgun", []string{"username"}, map[string]Pin{}},
		{"ses api constants", map[string]string{
			"MAILSVC_AWS_SES_ACCESS_KEY_ID": "AKIA1", "MAILSVC_AWS_SECRET_ACCESS_KEY": "s3",
			"MAILSVC_AWS_REGION": "eu-west-1", "MAILSVC_AWS_SES_CONFIGURATION_SET": "cs", "MAILSVC_AWS_SES_CUSTOM_ENDPOINT": "http://127.0.0.1:9",
			"MAILSVC_AWS_SES_ENABLE_V2_API": "true", "MAILSVC_AWS_SES_STATIC_TAGS": "a=b",
		}, map[string]string{"MAILSVC_AWS_ACCESS_KEY_ID": "AKIAENV"}, "ses",
			[]string{"region", "access_key", "secret", "configuration_set", "custom_endpoint", "enable_v2_api", "static_tags", "from_email"},
			map[string]Pin{
				"region":            {Constant: "MAILSVC_AWS_REGION", Value: "eu-west-1", Source: SourceWPConfig},
				"access_key":        {Constant: "MAILSVC_AWS_SES_ACCESS_KEY_ID", Value: "AKIA1", Source: SourceWPConfig},
				"secret":            {Constant: "MAILSVC_AWS_SECRET_ACCESS_KEY", Value: "s3", Source: SourceWPConfig},
				"configuration_set": {Constant: "MAILSVC_AWS_SES_CONFIGURATION_SET", Value: "cs", Source: SourceWPConfig},
				"custom_endpoint":   {Constant: "MAILSVC_AWS_SES_CUSTOM_ENDPOINT", Value: "http://127.0.0.1:9", Source: SourceWPConfig},
				"enable_v2_api":     {Constant: "MAILSVC_AWS_SES_ENABLE_V2_API", Value: "true", Source: SourceWPConfig},
				"static_tags":       {Constant: "MAILSVC_AWS_SES_STATIC_TAGS", Value: "a=b", Source: SourceWPConfig},
			}},
		{"ses smtp and imds constants", nil, map[string]string{
			"MAILSVC_AWS_SES_SMTP_USERNAME": "u", "MAILSVC_AWS_SES_SMTP_PASSWORD": "p", "MAILSVC_AWS_SES_SMTP_HOST": "email-smtp.eu-west-1.amazonaws.com",
			"MAILSVC_AWS_SES_SMTP_PORT": "587", "MAILSVC_AWS_SES_SMTP_ENCRYPTION": "tls", "MAILSVC_AWS_SES_SMTP_REGION": "eu-west-1",
			"MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE": "1", "MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL": "300",
		}, "ses", []string{"smtp_username", "smtp_password", "smtp_host", "smtp_port", "smtp_encryption", "smtp_region", "imds_role_source", "imds_token_ttl"},
			map[string]Pin{
				"smtp_username":    {Constant: "MAILSVC_AWS_SES_SMTP_USERNAME", Value: "u", Source: SourceEnvironment},
				"smtp_password":    {Constant: "MAILSVC_AWS_SES_SMTP_PASSWORD", Value: "p", Source: SourceEnvironment},
				"smtp_host":        {Constant: "MAILSVC_AWS_SES_SMTP_HOST", Value: "email-smtp.eu-west-1.amazonaws.com", Source: SourceEnvironment},
				"smtp_port":        {Constant: "MAILSVC_AWS_SES_SMTP_PORT", Value: "587", Source: SourceEnvironment},
				"smtp_encryption":  {Constant: "MAILSVC_AWS_SES_SMTP_ENCRYPTION", Value: "tls", Source: SourceEnvironment},
				"smtp_region":      {Constant: "MAILSVC_AWS_SES_SMTP_REGION", Value: "eu-west-1", Source: SourceEnvironment},
				"imds_role_source": {Constant: "MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE", Value: "1", Source: SourceEnvironment},
				"imds_token_ttl":   {Constant: "MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL", Value: "300", Source: SourceEnvironment},
			}},
		{"ses generic pattern wins over named constant", map[string]string{"MAILSVC_SES_REGION": "us-west-2", "MAILSVC_AWS_REGION": "eu-west-1"}, nil, "ses", []string{"region"},
			map[string]Pin{"region": {Constant: "MAILSVC_SES_REGION", Value: "us-west-2", Source: SourceWPConfig}}},
		{"invalid ses port is not pinned", map[string]string{"MAILSVC_AWS_SES_SMTP_PORT": "99999"}, nil, "ses", []string{"smtp_port"}, map[string]Pin{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := NewConstants(tt.wp, envOf(tt.env))
			got := c.Pins(tt.driver, tt.keys)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Pins(%s) =\n %#v\nwant\n %#v", tt.driver, got, tt.want)
			}
		})
	}
}

func TestConstantsSecretVisibility(t *testing.T) {
	tests := []struct {
		name        string
		wp          map[string]string
		global, req string
	}{
		{"default mask", nil, "mask", "mask"},
		{"show", map[string]string{"MAIL_SVC_DEBUG_SECRET_VISIBILITY": "show"}, "show", "show"},
		{"case-insensitive", map[string]string{"MAIL_SVC_DEBUG_SECRET_VISIBILITY": "FULL"}, "full", "full"},
		{"legacy redact", map[string]string{"MAIL_SVC_DEBUG_REDACT": "true"}, "full", "full"},
		{"legacy redact false", map[string]string{"MAIL_SVC_DEBUG_REDACT": "false"}, "mask", "mask"},
		{"visibility beats legacy redact", map[string]string{"MAIL_SVC_DEBUG_REDACT": "true", "MAIL_SVC_DEBUG_SECRET_VISIBILITY": "show"}, "show", "show"},
		{"empty visibility lets legacy redact act", map[string]string{"MAIL_SVC_DEBUG_REDACT": "true", "MAIL_SVC_DEBUG_SECRET_VISIBILITY": ""}, "full", "full"},
		{"invalid visibility masks", map[string]string{"MAIL_SVC_DEBUG_REDACT": "true", "MAIL_SVC_DEBUG_SECRET_VISIBILITY": "nope"}, "mask", "mask"},
		{"request own value", map[string]string{"MAIL_SVC_DEBUG_SECRET_VISIBILITY": "full", "MAIL_SVC_DEBUG_REQUEST_SECRET_VISIBILITY": "show"}, "full", "show"},
		{"request invalid masks", map[string]string{"MAIL_SVC_DEBUG_SECRET_VISIBILITY": "show", "MAIL_SVC_DEBUG_REQUEST_SECRET_VISIBILITY": "x"}, "show", "mask"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := NewConstants(tt.wp, nil)
			if got := c.SecretVisibility(); got != tt.global {
				t.Errorf("SecretVisibility() = %q, want %q", got, tt.global)
			}
			if got := c.RequestSecretVisibility(); got != tt.req {
				t.Errorf("RequestSecretVisibility() = %q, want %q", got, tt.req)
			}
		})
	}
}

func TestMaskDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"wp:s3cret@tcp(127.0.0.1:3306)/wordpress?parseTime=true", "wp:********@tcp(127.0.0.1:3306)/wordpress?parseTime=true"},
		{"wp:p@ss/w:rd@unix(/run/mysqld/mysqld.sock)/wp", "wp:********@unix(/run/mysqld/mysqld.sock)/wp"},
		{"root@tcp(localhost)/wp", "root@tcp(localhost)/wp"},
		{"mysql:wp:s3cret@tcp(127.0.0.1:3306)/wp", "mysql:wp:********@tcp(127.0.0.1:3306)/wp"},
		{"mysql:root@tcp(127.0.0.1:3306)/wp", "mysql:root@tcp(127.0.0.1:3306)/wp"},
		{"mysql://wp:s3cret@db:3306/wp", "mysql://wp:********@db:3306/wp"},
		{"mysql://root@db:3306/wp", "mysql://root@db:3306/wp"},
		{"mysql://db:3306/wp?x=a@b", "mysql://db:3306/wp?x=a@b"},
		{"sqlite:./data/mailsvc.db", "sqlite:./data/mailsvc.db"},
		{"/var/lib/mailsvc/db.sqlite", "/var/lib/mailsvc/db.sqlite"},
		// Not a DSN the driver takes (no '/'), still never echoed with its password.
		{"wp:s3cret@tcp(127.0.0.1:3306)", "wp:********@tcp(127.0.0.1:3306)"},
		{"mysql:wp:s3cret@tcp(db)", "mysql:wp:********@tcp(db)"},
	}
	for _, tt := range tests {
		if got := MaskDSN(tt.in); got != tt.want {
			t.Errorf("MaskDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestConstantsEntries(t *testing.T) {
	c, _ := NewConstants(map[string]string{
		"MAILSVC_SMTP_PASSWORD":       "hunter2",
		"MAIL_SVC_PASSWORD":           "legacy",
		"MAILSVC_DB":                  "wp:s3cret@tcp(db)/wp",
		"MAILSVC_AWS_REGION":          "eu-west-1",
		"MAIL_SVC_DEBUG_HTTP":         "true",
		"MAILSVC_AWS_SES_SMTP_PORT":   "0",
		"MAIL_SVC_ENCRYPTION_KEY":     "k",
		"MAILSVC_AWS_SES_STATIC_TAGS": "",
	}, envOf(map[string]string{"MAILSVC_ADDR": ":9000"}))
	byName := map[string]ConstantEntry{}
	var names []string
	for _, e := range c.Entries() {
		if _, dup := byName[e.Name]; dup {
			t.Errorf("duplicate entry %s", e.Name)
		}
		byName[e.Name] = e
		names = append(names, e.Name)
		if e.Description == "" || e.Type == "" || e.Group == "" {
			t.Errorf("entry %s lacks description, type or group: %+v", e.Name, e)
		}
	}
	if len(names) != len(ConstantCatalog) {
		t.Errorf("got %d entries, want %d", len(names), len(ConstantCatalog))
	}
	tests := []struct {
		name    string
		value   string
		src     ConstantSource
		defined bool
	}{
		{"MAILSVC_SMTP_PASSWORD", Mask, SourceWPConfig, true},
		{"MAIL_SVC_PASSWORD", Mask, SourceWPConfig, true},
		{"MAILSVC_SMTP_USERNAME", "", SourceDefault, false},
		{"MAILSVC_DB", "wp:" + Mask + "@tcp(db)/wp", SourceWPConfig, true},
		{"MAILSVC_AWS_REGION", "eu-west-1", SourceWPConfig, true},
		{"MAIL_SVC_DEBUG_HTTP", "true", SourceWPConfig, true},
		{"MAIL_SVC_DEBUG_MAILER", "false", SourceDefault, false},
		{"MAILSVC_AWS_SES_SMTP_PORT", "", SourceDefault, false},
		{"MAIL_SVC_ENCRYPTION_KEY", Mask, SourceWPConfig, true},
		{"MAILSVC_AWS_SES_STATIC_TAGS", "", SourceDefault, false},
		{"MAILSVC_ADDR", ":9000", SourceEnvironment, true},
		{"MAILSVC_DATA_DIR", "./data", SourceDefault, false},
	}
	for _, tt := range tests {
		e, ok := byName[tt.name]
		if !ok {
			t.Errorf("no entry for %s", tt.name)
			continue
		}
		if e.Value != tt.value || e.Source != tt.src || e.Defined != tt.defined {
			t.Errorf("%s = (%q, %q, %v), want (%q, %q, %v)", tt.name, e.Value, e.Source, e.Defined, tt.value, tt.src, tt.defined)
		}
	}
}

// TestConstantCatalogNamesSpec checks that every constant the spec names
// is in the catalog with the right type.
func TestConstantCatalogNamesSpec(t *testing.T) {
	spec := map[string]ConstantType{
		"MAILSVC_SENDGRID_API_KEY": ConstString, "MAILSVC_MAILGUN_API_KEY": ConstString, "MAILSVC_POSTMARK_API_KEY": ConstString,
		"MAILSVC_SMTP_USERNAME": ConstString, "MAILSVC_SMTP_PASSWORD": ConstString,
		"MAIL_SVC_USERNAME": ConstString, "MAIL_SVC_PASSWORD": ConstString, "MAILSVC_MICROSOFT_TOKEN": ConstString, "MAILSVC_OUTLOOK_TOKEN": ConstString,
		"MAILSVC_AWS_SES_ACCESS_KEY_ID": ConstString, "MAILSVC_AWS_ACCESS_KEY_ID": ConstString, "MAILSVC_AWS_SES_SECRET_KEY": ConstString,
		"MAILSVC_AWS_SECRET_ACCESS_KEY": ConstString, "MAILSVC_AWS_REGION": ConstString, "MAILSVC_AWS_SES_CONFIGURATION_SET": ConstString,
		"MAILSVC_AWS_SES_CUSTOM_ENDPOINT": ConstString, "MAILSVC_AWS_SES_ENABLE_V2_API": ConstBool, "MAILSVC_AWS_SES_STATIC_TAGS": ConstString,
		"MAILSVC_AWS_SES_SMTP_USERNAME": ConstString, "MAILSVC_AWS_SES_SMTP_PASSWORD": ConstString, "MAILSVC_AWS_SES_SMTP_HOST": ConstString,
		"MAILSVC_AWS_SES_SMTP_PORT": ConstInt, "MAILSVC_AWS_SES_SMTP_ENCRYPTION": ConstString, "MAILSVC_AWS_SES_SMTP_REGION": ConstString,
		"MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE": ConstBool, "MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL": ConstInt,
		"MAILSVC_USE_LOCAL_OAUTH_REDIRECTS": ConstBool, "MAILSVC_GOOGLE_OAUTH_REDIRECT_URI": ConstString,
		"MAILSVC_MICROSOFT_OAUTH_REDIRECT_URI": ConstString, "MAILSVC_ZOHO_OAUTH_REDIRECT_URI": ConstString,
		"MAIL_SVC_ENCRYPTION_KEY": ConstString, "MAIL_SVC_PRESERVE_DATA": ConstBool, "MAIL_SVC_WP_MAIL_TAKEOVER": ConstBool,
		"MAIL_SVC_DEBUG_HTTP": ConstBool, "MAIL_SVC_DEBUG_QUERIES": ConstBool, "MAIL_SVC_DEBUG_REQUEST": ConstBool,
		"MAIL_SVC_DEBUG_MAILER": ConstBool, "MAIL_SVC_DEBUG_SECRET_VISIBILITY": ConstString,
		"MAIL_SVC_DEBUG_REQUEST_SECRET_VISIBILITY": ConstString, "MAIL_SVC_DEBUG_REDACT": ConstBool,
		"MAIL_SVC_DEBUG_ATTACH_API_DEBUG": ConstBool, "MAIL_SVC_DEBUG_LOG_DIR": ConstString, "SAVEQUERIES": ConstBool,
		"MAIL_SVC_FILE": ConstString, "MAIL_SVC_PATH": ConstString, "MAIL_SVC_URL": ConstString, "MAIL_SVC_PLUGIN_FILE": ConstString,
		"MAIL_SVC_VERSION": ConstString, "MAIL_SVC_PRO_VERSION": ConstString, "MAIL_SVC_VITE_DEV_SERVER": ConstString,
		"MAIL_SVC_VITE_DEV_SERVER_URL": ConstString,
		"MAILSVC_DB":                   ConstString, "MAILSVC_WP_CONFIG": ConstString, "MAILSVC_TABLE_PREFIX": ConstString, "MAILSVC_DATA_DIR": ConstString,
		"MAILSVC_ADDR": ConstString, "MAILSVC_TRUSTED_PROXIES": ConstString, "MAILSVC_REST_CAPABILITY": ConstString,
		"MAILSVC_SENSITIVE_KEYS": ConstString, "MAILSVC_TLS_CERT": ConstString, "MAILSVC_TLS_KEY": ConstString, "WP_ENVIRONMENT_TYPE": ConstString,
	}
	var missing []string
	for name, typ := range spec {
		d, ok := LookupConstantDef(name)
		if !ok {
			missing = append(missing, name)
			continue
		}
		if d.Type != typ {
			t.Errorf("%s has type %s, want %s", name, d.Type, typ)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("catalog lacks %v", missing)
	}
	for _, d := range ConstantCatalog {
		if d.AliasOf != "" {
			if _, ok := LookupConstantDef(d.AliasOf); !ok {
				t.Errorf("%s is an alias of unknown %s", d.Name, d.AliasOf)
			}
		}
		if d.Sensitive != IsSensitiveKey(d.Name, nil) && !strings.HasPrefix(d.Name, "MAILSVC_DB") &&
			!strings.Contains(d.Name, "SECRET_VISIBILITY") && d.Name != "MAILSVC_SENSITIVE_KEYS" && d.Name != "MAILSVC_TLS_KEY" && d.Name != "MAILSVC_SMTP_TLS_KEY" && d.Name != "MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL" {
			t.Errorf("%s: Sensitive = %v, but its name says %v", d.Name, d.Sensitive, !d.Sensitive)
		}
	}
}

// TestConstantCatalogDocumented checks that docs/configuration.md lists
// every catalog constant in a table row of its own.
func TestConstantCatalogDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatalf("read the configuration doc: %v", err)
	}
	for _, d := range ConstantCatalog {
		if !strings.Contains(string(doc), "| `"+d.Name+"` | "+string(d.Type)+" |") {
			t.Errorf("docs/configuration.md has no row for %s (%s)", d.Name, d.Type)
		}
	}
}
