package sesid

import (
	"context"
	"strings"
	"testing"

	appsesid "github.com/mailsvc/mailsvc/app/pro/sesid"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/sesfake"
)

const (
	region = "eu-west-1"
	keyID  = "AKIDSESIDTEST"
	secret = "sesid-secret-value-123"
)

func conn(fake *sesfake.Server, settings core.Settings) *core.Connection {
	s := core.Settings{"region": region, "access_key": keyID, "secret": secret, "custom_endpoint": fake.URL}
	for k, v := range settings {
		s[k] = v
	}
	return &core.Connection{ID: 7, Driver: "ses", IsActive: true, Settings: s}
}

func TestClientAgainstTheSESFake(t *testing.T) {
	fake := sesfake.New(region, keyID, secret)
	defer fake.Close()
	fake.AddIdentity("verified.example", "SUCCESS")
	c, err := New(conn(fake, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	dom, err := c.CreateIdentity(ctx, "new.example")
	if err != nil {
		t.Fatal(err)
	}
	if dom.Type != appsesid.TypeDomain || dom.DKIM == nil || len(dom.DKIM.Tokens) != 3 {
		t.Fatalf("created domain %+v", dom)
	}
	addr, err := c.CreateIdentity(ctx, "me@new.example")
	if err != nil || addr.Type != appsesid.TypeEmailAddress {
		t.Fatalf("created address %+v, %v", addr, err)
	}
	if _, err := c.CreateIdentity(ctx, "new.example"); core.ErrorCode(err) != core.ECONFLICT {
		t.Errorf("create twice: %v, want conflict", err)
	}
	list, err := c.ListIdentities(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("list %+v, %v", list, err)
	}
	got, err := c.GetIdentity(ctx, "new.example")
	if err != nil || got.VerificationStatus != appsesid.StatusPending || strings.Join(got.DKIM.Tokens, ",") != strings.Join(dom.DKIM.Tokens, ",") {
		t.Errorf("get %+v, %v", got, err)
	}
	if v, _ := c.GetIdentity(ctx, "verified.example"); v == nil || !v.VerifiedForSending || v.DKIM.Status != appsesid.StatusSuccess {
		t.Errorf("verified identity %+v", v)
	}
	if err := c.DeleteIdentity(ctx, "me@new.example"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteIdentity(ctx, "me@new.example"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("delete twice: %v, want not found", err)
	}
	a, err := c.Account(ctx)
	if err != nil || a.Max24HourSend != 200 || a.MaxSendRate != 1 || a.ProductionAccessEnabled {
		t.Errorf("account %+v, %v", a, err)
	}
}

func TestClientErrors(t *testing.T) {
	fake := sesfake.New(region, keyID, secret)
	defer fake.Close()
	ctx := context.Background()
	wrong, err := New(conn(fake, core.Settings{"secret": "not-the-" + secret}), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.ListIdentities(ctx)
	if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)["connection_id"] == "" {
		t.Errorf("wrong secret: %v, want a validation error on connection_id", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error shows the secret: %v", err)
	}
	fake.FailNext(1, 503, "ServiceUnavailable", "")
	good, _ := New(conn(fake, nil), nil)
	if _, err := good.Account(ctx); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Errorf("503: %v, want unavailable", err)
	}
	for name, s := range map[string]core.Settings{
		"no region": {"region": ""},
		"smtp only": {"access_key": "", "secret": "", "smtp_username": "u", "smtp_password": "p"},
	} {
		if _, err := New(conn(fake, s), nil); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("%s: %v, want a validation error", name, err)
		}
	}
}
