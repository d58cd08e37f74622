// Package sesid is the Pro add-on's identity management for Amazon SES
// connections: the identities of the connection's SES account with their
// verification and DKIM status, the senders it may use, verifying an
// address or a domain (with the DKIM CNAME records to publish) and deleting
// one, the account's sending quota, and where the connection's credentials
// come from. The SES API itself is behind the Client port; adapters/pro/sesid
// implements it with aws-sdk-go-v2.
package sesid

import (
	"context"
	"fmt"
	"net/mail"
	"sort"
	"strings"

	"github.com/mailsvc/mailsvc/app/pro/domaincheck"
	"github.com/mailsvc/mailsvc/core"
)

// Driver is the driver slug of the connections this package manages.
const Driver = "ses"

// Identity types.
const (
	TypeEmailAddress  = "email_address"
	TypeDomain        = "domain"
	TypeManagedDomain = "managed_domain"
)

// Verification and DKIM statuses, as SES names them, lower-cased.
const (
	StatusPending          = "pending"
	StatusSuccess          = "success"
	StatusFailed           = "failed"
	StatusTemporaryFailure = "temporary_failure"
	StatusNotStarted       = "not_started"
)

// DKIMHost is the zone Easy DKIM tokens point into.
const DKIMHost = "dkim.amazonses.com"

// Identity is one SES identity: an email address or a domain.
type Identity struct {
	Identity           string `json:"identity"`
	Type               string `json:"type"`
	VerificationStatus string `json:"verification_status"`
	// VerifiedForSending is true when mail may be sent as the identity.
	VerifiedForSending bool  `json:"verified_for_sending"`
	DKIM               *DKIM `json:"dkim,omitempty"`
}

// DKIM is the DKIM state of an identity.
type DKIM struct {
	SigningEnabled bool     `json:"signing_enabled"`
	Status         string   `json:"status"`
	Tokens         []string `json:"tokens"`
	// Records are the DNS records to publish for Easy DKIM (domains only).
	Records []DNSRecord `json:"records"`
}

// DNSRecord is one DNS record a site owner must publish.
type DNSRecord struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Account is an SES account's sending state in one region.
type Account struct {
	Max24HourSend           float64 `json:"max_24_hour_send"`
	MaxSendRate             float64 `json:"max_send_rate"`
	SentLast24Hours         float64 `json:"sent_last_24_hours"`
	SendingEnabled          bool    `json:"sending_enabled"`
	ProductionAccessEnabled bool    `json:"production_access_enabled"`
	EnforcementStatus       string  `json:"enforcement_status"`
}

// Client is the SES identity API of one account and region. Errors are
// domain errors where the caller can act on them: ENOTFOUND for an
// unknown identity, EINVALID (field "identity") for one SES refuses,
// EINVALID (field "connection_id") when SES refuses the credentials, and
// EUNAVAILABLE when SES cannot be reached; secrets never appear in them.
type Client interface {
	// ListIdentities returns every identity of the account (all pages),
	// without DKIM details.
	ListIdentities(ctx context.Context) ([]Identity, error)
	// GetIdentity returns one identity with its DKIM details.
	GetIdentity(ctx context.Context, identity string) (*Identity, error)
	// CreateIdentity starts the verification of an address (SES mails it a
	// link) or a domain (Easy DKIM tokens are returned). ECONFLICT when
	// the identity exists.
	CreateIdentity(ctx context.Context, identity string) (*Identity, error)
	// DeleteIdentity deletes an identity; ENOTFOUND when it does not exist.
	DeleteIdentity(ctx context.Context, identity string) error
	// Account returns the account's quota and sending state.
	Account(ctx context.Context) (*Account, error)
}

// Dialer builds the Client of an SES connection from its effective
// settings (secrets decrypted, constants applied). A connection whose
// settings cannot reach the API is an EINVALID error.
type Dialer func(conn *core.Connection) (Client, error)

// Connections gives the connections' effective settings (app.Connections).
type Connections interface {
	// Effective returns a connection with secrets decrypted and constants
	// applied; ENOTFOUND when it does not exist.
	Effective(ctx context.Context, id int64) (*core.Connection, error)
	// List returns a page of connections (limit 0: all), masked.
	List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error)
}

// StoredConnections reads connections as stored (core.ConnectionStore).
type StoredConnections interface {
	// FindConnectionByID returns one connection as stored (secrets
	// encrypted, no constants applied) or an ENOTFOUND error.
	FindConnectionByID(ctx context.Context, id int64) (*core.Connection, error)
}

// Service manages the identities of SES connections.
type Service struct {
	Connections Connections
	Stored      StoredConnections
	Dial        Dialer
	// Pins returns the settings keys of a driver pinned by constants
	// (core.Constants.Pins).
	Pins func(driver string, keys []string) map[string]core.Pin
	// LookupEnv reads the process environment (os.LookupEnv); nil for
	// none.
	LookupEnv func(string) (string, bool)
}

// connection returns the effective settings of an SES connection: 422 on
// connection_id when id is not positive or the connection is not SES, 404
// when it does not exist.
func (s *Service) connection(ctx context.Context, id int64) (*core.Connection, error) {
	if id <= 0 {
		return nil, core.InvalidField("connection_id", "This field is required: the id of an Amazon SES connection.")
	}
	c, err := s.Connections.Effective(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ses connection %d: %w", id, err)
	}
	if c.Driver != Driver {
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d uses the %s driver, not Amazon SES.", id, c.Driver))
	}
	return c, nil
}

// client dials the SES API of connection id.
func (s *Service) client(ctx context.Context, id int64) (Client, error) {
	c, err := s.connection(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.SettingsError != "" {
		// Undecryptable secrets or an endpoint off the provider's hosts
		// (core.Connection.SettingsError): nothing is sent to the API.
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d cannot be used: %s", id, c.SettingsError))
	}
	cl, err := s.Dial(c)
	if err != nil {
		return nil, fmt.Errorf("ses connection %d: %w", id, err)
	}
	return cl, nil
}

// Identities lists the identities of connection id with their
// verification and DKIM status, sorted by name.
func (s *Service) Identities(ctx context.Context, id int64) ([]Identity, error) {
	cl, err := s.client(ctx, id)
	if err != nil {
		return nil, err
	}
	list, err := cl.ListIdentities(ctx)
	if err != nil {
		return nil, fmt.Errorf("list ses identities: %w", err)
	}
	out := make([]Identity, 0, len(list))
	for _, it := range list {
		full, err := cl.GetIdentity(ctx, it.Identity)
		if core.ErrorCode(err) == core.ENOTFOUND { // deleted meanwhile
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get ses identity %s: %w", it.Identity, err)
		}
		out = append(out, *withRecords(full))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Identity < out[j].Identity })
	return out, nil
}

// Senders are the addresses and domains a connection may send as.
type Senders struct {
	Addresses []string `json:"addresses"`
	Domains   []string `json:"domains"`
	// Sandbox is true while the account has no production access: SES
	// then delivers only to verified recipients.
	Sandbox bool `json:"sandbox"`
}

// ValidSenders returns the verified identities of connection id that mail
// may be sent as: addresses, and domains (any address at them).
func (s *Service) ValidSenders(ctx context.Context, id int64) (*Senders, error) {
	cl, err := s.client(ctx, id)
	if err != nil {
		return nil, err
	}
	list, err := cl.ListIdentities(ctx)
	if err != nil {
		return nil, fmt.Errorf("list ses identities: %w", err)
	}
	out := &Senders{Addresses: []string{}, Domains: []string{}}
	for _, it := range list {
		if it.VerificationStatus != StatusSuccess || !it.VerifiedForSending {
			continue
		}
		if it.Type == TypeEmailAddress {
			out.Addresses = append(out.Addresses, it.Identity)
		} else {
			out.Domains = append(out.Domains, it.Identity)
		}
	}
	sort.Strings(out.Addresses)
	sort.Strings(out.Domains)
	acct, err := cl.Account(ctx)
	if err != nil {
		return nil, fmt.Errorf("get ses account: %w", err)
	}
	out.Sandbox = !acct.ProductionAccessEnabled
	return out, nil
}

// Actions of Act.
const (
	ActionVerify = "verify"
	ActionDelete = "delete"
)

// ActionResult is the outcome of Act.
type ActionResult struct {
	Action   string    `json:"action"`
	Identity *Identity `json:"identity"`
	// Records are the DNS records to publish (verifying a domain).
	Records []DNSRecord `json:"records"`
	Message string      `json:"message"`
}

// Act verifies or deletes an identity of connection id. Verifying an
// address makes SES mail it a link; verifying a domain returns the three
// DKIM CNAME records to publish. Verifying an identity that exists
// returns it as it stands.
func (s *Service) Act(ctx context.Context, id int64, action, identity string) (*ActionResult, error) {
	fields := map[string]string{}
	action = strings.ToLower(strings.TrimSpace(action))
	if action != ActionVerify && action != ActionDelete {
		fields["action"] = "Must be one of: verify, delete."
	}
	name, kind, msg := ParseIdentity(identity)
	if msg != "" {
		fields["identity"] = msg
	}
	if id <= 0 {
		fields["connection_id"] = "This field is required: the id of an Amazon SES connection."
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	cl, err := s.client(ctx, id)
	if err != nil {
		return nil, err
	}
	if action == ActionDelete {
		if err := cl.DeleteIdentity(ctx, name); err != nil {
			return nil, fmt.Errorf("delete ses identity %s: %w", name, err)
		}
		return &ActionResult{Action: action, Identity: &Identity{Identity: name, Type: kind},
			Records: []DNSRecord{}, Message: fmt.Sprintf("The identity %s was deleted from SES.", name)}, nil
	}
	created, err := cl.CreateIdentity(ctx, name)
	existed := core.ErrorCode(err) == core.ECONFLICT
	if existed {
		created, err = cl.GetIdentity(ctx, name)
	}
	if err != nil {
		return nil, fmt.Errorf("verify ses identity %s: %w", name, err)
	}
	if created.Identity == "" {
		created.Identity = name
	}
	if created.Type == "" {
		created.Type = kind
	}
	created = withRecords(created)
	res := &ActionResult{Action: action, Identity: created, Records: []DNSRecord{}}
	if created.DKIM != nil {
		res.Records = created.DKIM.Records
	}
	switch {
	case existed:
		res.Message = fmt.Sprintf("The identity %s already exists in SES (verification: %s).", name, created.VerificationStatus)
	case kind == TypeDomain:
		res.Message = fmt.Sprintf("Publish the %d CNAME records in the DNS of %s; SES verifies the domain when it finds them (up to 72 hours).", len(res.Records), name)
	default:
		res.Message = fmt.Sprintf("SES sent a verification link to %s; the address is verified once it is opened.", name)
	}
	return res, nil
}

// Stats returns the sending quota and state of connection id's account.
func (s *Service) Stats(ctx context.Context, id int64) (*Stats, error) {
	cl, err := s.client(ctx, id)
	if err != nil {
		return nil, err
	}
	a, err := cl.Account(ctx)
	if err != nil {
		return nil, fmt.Errorf("get ses account: %w", err)
	}
	remaining := a.Max24HourSend - a.SentLast24Hours
	if remaining < 0 || a.Max24HourSend < 0 { // -1 is SES's "unlimited"
		remaining = 0
	}
	return &Stats{Account: *a, Remaining24Hours: remaining, Sandbox: !a.ProductionAccessEnabled}, nil
}

// Stats is an account's quota with what is left of it.
type Stats struct {
	Account
	Remaining24Hours float64 `json:"remaining_24_hours"`
	Sandbox          bool    `json:"sandbox"`
}

// DomainTokens returns the Easy DKIM tokens SES holds for domain, looked
// up through every active SES connection; ok is false when no connection
// knows the domain (or none could be asked).
func (s *Service) DomainTokens(ctx context.Context, domain string) (tokens []string, ok bool) {
	conns, _, err := s.Connections.List(ctx, 0, 0)
	if err != nil {
		return nil, false
	}
	for _, c := range conns {
		if c.Driver != Driver || !c.IsActive {
			continue
		}
		cl, err := s.client(ctx, c.ID)
		if err != nil {
			continue
		}
		it, err := cl.GetIdentity(ctx, domain)
		if err != nil || it.DKIM == nil || len(it.DKIM.Tokens) == 0 {
			continue
		}
		return it.DKIM.Tokens, true
	}
	return nil, false
}

// ParseIdentity checks an identity given by a user: an email address or a
// domain. It returns the identity normalised (a domain lower-cased), its
// type, or a message saying what is wrong.
func ParseIdentity(s string) (name, kind, problem string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", "This field is required: an email address or a domain."
	}
	if strings.Contains(s, "@") {
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || a.Name != "" {
			return "", "", "Must be an email address (name@example.com) or a domain (example.com)."
		}
		local, domain, _ := strings.Cut(a.Address, "@")
		d, ok := domaincheck.NormalizeDomain(domain)
		if !ok {
			return "", "", "The address's domain is not a valid domain name."
		}
		return local + "@" + d, TypeEmailAddress, ""
	}
	d, ok := domaincheck.NormalizeDomain(s)
	if !ok {
		return "", "", "Must be an email address (name@example.com) or a domain (example.com)."
	}
	return d, TypeDomain, ""
}

// DKIMRecords returns the Easy DKIM CNAME records of a domain's tokens:
// <token>._domainkey.<domain> → <token>.dkim.amazonses.com.
func DKIMRecords(domain string, tokens []string) []DNSRecord {
	out := make([]DNSRecord, 0, len(tokens))
	for _, t := range tokens {
		out = append(out, DNSRecord{Type: "CNAME", Name: t + "._domainkey." + domain, Value: t + "." + DKIMHost})
	}
	return out
}

// withRecords fills the DKIM records of a domain identity.
func withRecords(it *Identity) *Identity {
	if it.DKIM == nil {
		return it
	}
	if it.DKIM.Tokens == nil {
		it.DKIM.Tokens = []string{}
	}
	it.DKIM.Records = []DNSRecord{}
	if it.Type != TypeEmailAddress {
		it.DKIM.Records = DKIMRecords(it.Identity, it.DKIM.Tokens)
	}
	return it
}
