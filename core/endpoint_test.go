package core

import (
	"strings"
	"testing"
)

func TestCheckEndpoint(t *testing.T) {
	sendgrid := []string{"api.sendgrid.com", "api.eu.sendgrid.com"}
	ses := []string{"email.*.amazonaws.com", "email-fips.*.amazonaws.com", "*.email.*.vpce.amazonaws.com"}
	imds := []string{"http://169.254.169.254", "http://[fd00:ec2::254]"}
	tests := []struct {
		url   string
		hosts []string
		ok    bool
	}{
		{"https://api.sendgrid.com", sendgrid, true},
		{"https://api.sendgrid.com/", sendgrid, true},
		{"https://api.eu.sendgrid.com/v3", sendgrid, true},
		{"https://API.SendGrid.com./", sendgrid, true},
		{"https://api.sendgrid.com:443", sendgrid, true},
		{"http://api.sendgrid.com", sendgrid, false},
		{"https://api.sendgrid.com:8443", sendgrid, false},
		{"https://api.sendgrid.com.evil.example", sendgrid, false},
		{"https://evil.example/api.sendgrid.com", sendgrid, false},
		{"https://api.sendgrid.com@127.0.0.1/", sendgrid, false},
		{"https://127.0.0.1:8443/", sendgrid, false},
		{"https://169.254.169.254/", sendgrid, false},
		{"https://[::1]/", sendgrid, false},
		{"https://localhost/", sendgrid, false},
		{"ftp://api.sendgrid.com", sendgrid, false},
		{"api.sendgrid.com", sendgrid, false},
		{"https://%zz", sendgrid, false},
		{"https://email.us-east-1.amazonaws.com", ses, true},
		{"https://email-fips.us-gov-west-1.amazonaws.com/", ses, true},
		{"https://vpce-0abc123-xyz.email.eu-west-1.vpce.amazonaws.com", ses, true},
		{"https://email.a.b.amazonaws.com", ses, false},
		{"https://email..amazonaws.com", ses, false},
		{"https://ec2-1-2-3-4.compute-1.amazonaws.com", ses, false},
		{"https://email.us-east-1.amazonaws.com.evil.example", ses, false},
		{"http://email.us-east-1.amazonaws.com", ses, false},
		{"http://169.254.169.254", imds, true},
		{"http://169.254.169.254:80/", imds, true},
		{"http://[fd00:ec2::254]", imds, true},
		{"http://[fd00:ec2:0:0::254]/", imds, true},
		{"https://169.254.169.254", imds, false},
		{"http://169.254.169.254:8080", imds, false},
		{"http://127.0.0.1:1234", imds, false},
		{"http://[::ffff:169.254.169.254]/", imds, false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			msg := CheckEndpoint(tt.url, tt.hosts)
			if (msg == "") != tt.ok {
				t.Fatalf("CheckEndpoint = %q, want allowed %v", msg, tt.ok)
			}
			if tt.ok {
				return
			}
			if !strings.Contains(msg, AllowCustomEndpointsConstant) || !strings.Contains(msg, tt.hosts[0]) {
				t.Errorf("message %q names neither the constant nor the hosts", msg)
			}
			if strings.Contains(msg, "evil") || strings.Contains(msg, "127.0.0.1") {
				t.Errorf("message %q repeats the URL", msg)
			}
		})
	}
}

func TestDriverCheckEndpoints(t *testing.T) {
	d := &Driver{Slug: "x", Fields: []Field{
		{Key: "base_url", Type: FieldURL, Hosts: []string{"api.example.com"}},
		{Key: "oauth_base_url", Type: FieldURL, Hosts: []string{"login.example.com"}},
		{Key: "webhook", Type: FieldURL},
	}}
	s := Settings{"base_url": "http://127.0.0.1:9/", "oauth_base_url": "https://login.example.com", "webhook": "http://10.0.0.1/"}
	got := d.CheckEndpoints(s, nil)
	if len(got) != 1 || got["base_url"] == "" {
		t.Errorf("CheckEndpoints = %v, want base_url only (a field without hosts is not an endpoint)", got)
	}
	if got := d.CheckEndpoints(s, func(k string) bool { return k == "base_url" }); len(got) != 0 {
		t.Errorf("exempt base_url: %v", got)
	}
	if got := d.CheckEndpoints(Settings{"base_url": ""}, nil); len(got) != 0 {
		t.Errorf("empty base_url (the default endpoint): %v", got)
	}
	if p := EndpointProblem(map[string]string{"oauth_base_url": "x", "base_url": "y"}); !strings.Contains(p, "base_url, oauth_base_url") || !strings.Contains(p, AllowCustomEndpointsConstant) {
		t.Errorf("EndpointProblem = %q", p)
	}
	if p := EndpointProblem(nil); p != "" {
		t.Errorf("EndpointProblem(nil) = %q", p)
	}
}
