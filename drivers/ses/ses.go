// Package ses is the mail transport for Amazon Simple Email Service. It
// registers itself as the driver "ses" when imported.
//
// In API mode (the default) every message is rendered to raw RFC 5322 by
// drivers/mime and handed to SES through aws-sdk-go-v2: the v1 Query API
// SendRawEmail, or the v2 SendEmail with Content.Raw when enable_v2_api is
// set. Credentials are the connection's static access key and secret, or
// the EC2 instance role read through IMDSv2 when imds_role_source is set.
// In SMTP mode the connection is delivered through the SES SMTP interface
// (email-smtp.<region>.amazonaws.com) with SES SMTP credentials.
package ses

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	sesv1 "github.com/aws/aws-sdk-go-v2/service/ses"
	sesv1types "github.com/aws/aws-sdk-go-v2/service/ses/types"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sesv2types "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/drivers/mime"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
)

// Slug is the driver name of Amazon SES connections.
const Slug = "ses"

// Delivery modes of an SES connection.
const (
	ModeAPI  = "api"
	ModeSMTP = "smtp"
)

// SMTP encryptions of an SES connection in SMTP mode.
const (
	EncryptionTLS  = "tls"  // STARTTLS
	EncryptionSSL  = "ssl"  // implicit TLS
	EncryptionNone = "none" // plain text; SES itself refuses it
)

// Defaults of an SES connection.
const (
	DefaultSMTPPort     = 587
	DefaultIMDSTokenTTL = 21600 // seconds; the IMDSv2 maximum
)

// Settings keys of an SES connection. The API and SMTP keys are the ones
// the spec's Amazon SES constants pin (core.PinConstants).
const (
	KeyDeliveryMode     = "delivery_mode"
	KeyRegion           = "region"
	KeyAccessKey        = "access_key"
	KeySecret           = "secret"
	KeyConfigurationSet = "configuration_set"
	KeyCustomEndpoint   = "custom_endpoint"
	KeyEnableV2API      = "enable_v2_api"
	KeyStaticTags       = "static_tags"
	KeyIMDSRoleSource   = "imds_role_source"
	KeyIMDSTokenTTL     = "imds_token_ttl"
	KeyIMDSEndpoint     = "imds_endpoint"
	KeySMTPUsername     = "smtp_username"
	KeySMTPPassword     = "smtp_password"
	KeySMTPHost         = "smtp_host"
	KeySMTPPort         = "smtp_port"
	KeySMTPEncryption   = "smtp_encryption"
	KeySMTPRegion       = "smtp_region"
	KeyFromEmail        = apidriver.KeyFromEmail
	KeyFromName         = apidriver.KeyFromName
)

// EndpointHosts are the hosts the custom_endpoint field takes (see
// core.Field.Hosts): the regional SES API, its FIPS variant, and SES
// interface VPC endpoints (vpce-....email.<region>.vpce.amazonaws.com).
var EndpointHosts = []string{"email.*.amazonaws.com", "email-fips.*.amazonaws.com", "*.email.*.vpce.amazonaws.com"}

// IMDSHosts are the addresses the imds_endpoint field takes: the EC2
// instance metadata service over IPv4 and IPv6, which speaks plain HTTP.
var IMDSHosts = []string{"http://169.254.169.254", "http://[fd00:ec2::254]"}

// Region is an AWS region where SES is offered.
type Region struct {
	Code string // e.g. us-east-1
	Name string // e.g. US East (N. Virginia)
}

// Regions offered as presets: the SES regions most sites use.
var Regions = []Region{
	{"us-east-1", "US East (N. Virginia)"},
	{"us-east-2", "US East (Ohio)"},
	{"us-west-1", "US West (N. California)"},
	{"us-west-2", "US West (Oregon)"},
	{"ca-central-1", "Canada (Central)"},
	{"eu-west-1", "Europe (Ireland)"},
	{"eu-west-2", "Europe (London)"},
	{"eu-west-3", "Europe (Paris)"},
	{"eu-central-1", "Europe (Frankfurt)"},
	{"eu-north-1", "Europe (Stockholm)"},
	{"eu-south-1", "Europe (Milan)"},
	{"ap-south-1", "Asia Pacific (Mumbai)"},
	{"ap-southeast-1", "Asia Pacific (Singapore)"},
	{"ap-southeast-2", "Asia Pacific (Sydney)"},
	{"ap-northeast-1", "Asia Pacific (Tokyo)"},
	{"ap-northeast-2", "Asia Pacific (Seoul)"},
	{"sa-east-1", "South America (São Paulo)"},
}

func init() {
	core.Register(Driver())
}

// Driver returns the Amazon SES driver description: schema, presets, rules
// and constructor.
func Driver() core.Driver {
	api := map[string]string{KeyDeliveryMode: ModeAPI}
	smtp := map[string]string{KeyDeliveryMode: ModeSMTP}
	return core.Driver{
		Slug: Slug,
		// API mode; SMTP mode is bounded by the same setting.
		DefaultConcurrency: apidriver.DefaultConcurrency,
		// At most 50 recipients (to, cc and bcc) per message.
		RecipientCaps: core.RecipientCaps{PerMessage: 50},
		Name:          "Amazon SES",
		Description:   "Send through Amazon Simple Email Service, with the SES API (v1 SendRawEmail or v2 SendEmail) or the SES SMTP interface.",
		SetupHelp:     "In the AWS console, IAM → Users → Security credentials → Create access key gives the access key ID and secret (the user needs ses:SendRawEmail); for SMTP mode, Amazon SES → SMTP settings → Create SMTP credentials. Verify the From address or its domain under SES → Identities.",
		Fields: []core.Field{
			{Key: KeyDeliveryMode, Label: "Delivery mode", Type: core.FieldSelect, Default: ModeAPI,
				Options: []string{ModeAPI, ModeSMTP}, Help: "api: the SES API with AWS credentials; smtp: the SES SMTP interface with SES SMTP credentials."},
			{Key: KeyRegion, Label: "Region", Type: core.FieldString, RequiredWhen: api,
				Help: "AWS region of the SES account, e.g. us-east-1."},
			{Key: KeyIMDSRoleSource, Label: "Use the EC2 instance role", Type: core.FieldBoolean, Advanced: true, Default: false,
				ConstantOnly: true,
				Help:         "Take temporary credentials from the IAM role of the EC2 instance (IMDSv2) instead of an access key. Set only by the constant MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE."},
			{Key: KeyAccessKey, Label: "Access key ID", Type: core.FieldPassword,
				RequiredWhen: map[string]string{KeyDeliveryMode: ModeAPI, KeyIMDSRoleSource: "false"},
				Help:         "AWS access key id of an IAM user allowed ses:SendRawEmail (v1) or ses:SendEmail (v2)."},
			{Key: KeySecret, Label: "Secret access key", Type: core.FieldPassword,
				RequiredWhen: map[string]string{KeyDeliveryMode: ModeAPI, KeyIMDSRoleSource: "false"},
				Help:         "The AWS secret access key of that access key id."},
			{Key: KeyConfigurationSet, Label: "Configuration set", Type: core.FieldString, Advanced: true,
				Help: "SES configuration set attached to every message (event publishing, IP pools)."},
			{Key: KeyCustomEndpoint, Label: "Custom endpoint", Type: core.FieldURL, Advanced: true, Destination: true,
				Hosts: EndpointHosts,
				Help:  "API endpoint URL in place of https://email.<region>.amazonaws.com (VPC endpoints, FIPS, tests)."},
			{Key: KeyEnableV2API, Label: "Use the SES v2 API", Type: core.FieldBoolean, Advanced: true, Default: false,
				Help: "Send with SESv2 SendEmail (raw content) instead of the v1 SendRawEmail."},
			{Key: KeyStaticTags, Label: "Static message tags", Type: core.FieldString, Advanced: true,
				Help: "Tags added to every message: name=value,name2=value2 (letters, digits, '_' and '-')."},
			{Key: KeyIMDSTokenTTL, Label: "IMDSv2 token TTL", Type: core.FieldInteger, Advanced: true, Default: int64(DefaultIMDSTokenTTL),
				Min: core.Int64(1), Max: core.Int64(21600), Help: "Lifetime in seconds of the IMDSv2 session token, 1 to 21600."},
			{Key: KeyIMDSEndpoint, Label: "IMDS endpoint", Type: core.FieldURL, Advanced: true,
				Hosts: IMDSHosts,
				Help:  "Instance metadata endpoint in place of http://169.254.169.254 (tests, IPv6-only instances)."},
			{Key: KeySMTPUsername, Label: "SMTP username", Type: core.FieldString, RequiredWhen: smtp,
				Help: "SES SMTP username (not the access key id of the IAM user)."},
			{Key: KeySMTPPassword, Label: "SMTP password", Type: core.FieldPassword, RequiredWhen: smtp,
				Help: "SES SMTP password derived for the SMTP region."},
			{Key: KeySMTPHost, Label: "SMTP host", Type: core.FieldString, Advanced: true, Destination: true,
				Help: "Empty: email-smtp.<smtp_region or region>.amazonaws.com."},
			{Key: KeySMTPPort, Label: "SMTP port", Type: core.FieldInteger, Advanced: true, Default: int64(DefaultSMTPPort), Destination: true,
				Min: core.Int64(1), Max: core.Int64(65535), Help: "587 or 25/2587 with tls, 465 or 2465 with ssl."},
			{Key: KeySMTPEncryption, Label: "SMTP encryption", Type: core.FieldSelect, Advanced: true, Default: EncryptionTLS, Destination: true,
				Options: []string{EncryptionTLS, EncryptionSSL, EncryptionNone}, Help: "tls: STARTTLS; ssl: implicit TLS; none: plain text."},
			{Key: KeySMTPRegion, Label: "SMTP region", Type: core.FieldString, Advanced: true,
				Help: "Region of the SMTP endpoint when it differs from region."},
			apidriver.FromEmailField("Sender address; must be a verified SES identity."),
			apidriver.FromNameField(),
			{Key: "webhook_topic_arns", Label: "Trusted SNS topics", Type: core.FieldString, Advanced: true,
				Help: "Pro webhook receiver: comma-separated ARNs of the SNS topics whose SES notifications are accepted."},
		},
		Presets: presets(),
		Rules: []string{
			"In api mode, region is required, and access_key and secret are required unless imds_role_source is true.",
			"In smtp mode, smtp_username and smtp_password are required, and smtp_host, smtp_region or region must be set.",
			"static_tags is a comma-separated list of name=value pairs; names and values are 1 to 256 ASCII letters, digits, '_' or '-', names unique.",
			apidriver.SenderRule,
		},
		Validate: validate,
		New:      New,
	}
}

func presets() []core.Preset {
	out := make([]core.Preset, 0, 2*len(Regions))
	for _, r := range Regions {
		out = append(out, core.Preset{Slug: "api-" + r.Code, Name: "SES API, " + r.Name,
			Settings: core.Settings{KeyDeliveryMode: ModeAPI, KeyRegion: r.Code}})
	}
	for _, r := range Regions {
		out = append(out, core.Preset{Slug: "smtp-" + r.Code, Name: "SES SMTP, " + r.Name,
			Settings: core.Settings{KeyDeliveryMode: ModeSMTP, KeySMTPRegion: r.Code, KeySMTPHost: SMTPHost(r.Code),
				KeySMTPPort: int64(DefaultSMTPPort), KeySMTPEncryption: EncryptionTLS}})
	}
	return out
}

// SMTPHost returns the SES SMTP endpoint of a region.
func SMTPHost(region string) string { return "email-smtp." + region + ".amazonaws.com" }

// validate checks the rules that span several fields.
func validate(s core.Settings) map[string]string {
	fields := map[string]string{}
	switch mode(s) {
	case ModeAPI:
		if s.String(KeyRegion) == "" {
			fields[KeyRegion] = "This field is required."
		} else if !validRegion(s.String(KeyRegion)) {
			fields[KeyRegion] = "Must be an AWS region name such as us-east-1."
		}
		if !s.Bool(KeyIMDSRoleSource, false) {
			for _, k := range []string{KeyAccessKey, KeySecret} {
				if s.String(k) == "" {
					fields[k] = "This field is required unless imds_role_source is true."
				}
			}
		}
	case ModeSMTP:
		for _, k := range []string{KeySMTPUsername, KeySMTPPassword} {
			if s.String(k) == "" {
				fields[k] = "This field is required."
			}
		}
		if smtpHost(s) == "" {
			fields[KeySMTPHost] = "Set smtp_host, smtp_region or region."
		}
	}
	if r := s.String(KeySMTPRegion); r != "" && !validRegion(r) {
		fields[KeySMTPRegion] = "Must be an AWS region name such as us-east-1."
	}
	if _, err := ParseStaticTags(s.String(KeyStaticTags)); err != nil {
		fields[KeyStaticTags] = core.ErrorFields(err)[KeyStaticTags]
	}
	return fields
}

var regionPattern = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)

func validRegion(r string) bool { return regionPattern.MatchString(r) }

func mode(s core.Settings) string {
	if m := s.String(KeyDeliveryMode); m != "" {
		return m
	}
	return ModeAPI
}

// smtpHost returns the SMTP host of settings: smtp_host, else the endpoint
// of smtp_region, else of region; "" when none is set.
func smtpHost(s core.Settings) string {
	if h := s.String(KeySMTPHost); h != "" {
		return h
	}
	if r := s.String(KeySMTPRegion); r != "" {
		return SMTPHost(r)
	}
	if r := s.String(KeyRegion); r != "" {
		return SMTPHost(r)
	}
	return ""
}

// Tag is one SES message tag.
type Tag struct {
	Name  string
	Value string
}

// tagPart is a tag's name or value: 1 to 256 ASCII letters, digits, '_'
// or '-' (the length checked apart: a counted repetition compiles into a
// program of one step per character, 100 KB kept for the process's life).
var tagPart = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// validTagPart reports whether s is a tag's name or value SES takes.
func validTagPart(s string) bool { return len(s) <= 256 && tagPart.MatchString(s) }

// ParseStaticTags parses the static_tags setting, "name=value,name2=value2"
// (spaces around items are ignored, an empty string is no tags). Names and
// values must satisfy SES: 1 to 256 ASCII letters, digits, '_' or '-'; a
// name may appear once. A malformed list is a validation error of the
// static_tags field.
func ParseStaticTags(s string) ([]Tag, error) {
	var out []Tag
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || !validTagPart(name) || !validTagPart(value) {
			return nil, core.InvalidField(KeyStaticTags, fmt.Sprintf("Invalid tag %q: use name=value pairs separated by commas; names and values are 1 to 256 letters, digits, '_' or '-'.", item))
		}
		if seen[name] {
			return nil, core.InvalidField(KeyStaticTags, fmt.Sprintf("Tag %q is given twice.", name))
		}
		seen[name] = true
		out = append(out, Tag{Name: name, Value: value})
	}
	return out, nil
}

// SMTPSettings maps the SMTP-mode settings of an SES connection to the
// settings of the smtp driver: host (smtp_host, else the endpoint of
// smtp_region or region), port, encryption, and SMTP AUTH with
// smtp_username and smtp_password. The sender override (from_email,
// from_name) is applied by SMTPTransport itself.
func SMTPSettings(s core.Settings) core.Settings {
	enc := s.String(KeySMTPEncryption)
	if enc == "" {
		enc = EncryptionTLS
	}
	return core.Settings{
		smtpdrv.KeyHost:       smtpHost(s),
		smtpdrv.KeyPort:       s.Int(KeySMTPPort, DefaultSMTPPort),
		smtpdrv.KeyEncryption: enc,
		smtpdrv.KeyAuth:       true,
		smtpdrv.KeyUsername:   s.String(KeySMTPUsername),
		smtpdrv.KeyPassword:   s.String(KeySMTPPassword),
	}
}

// SMTPTransport sends through the SES SMTP interface with the smtp
// driver's pooled transport. It is safe for concurrent use.
type SMTPTransport struct {
	inner  *smtpdrv.Transport
	sender apidriver.Sender
}

var (
	_ core.Transport = (*SMTPTransport)(nil)
	_ core.Verifier  = (*SMTPTransport)(nil)
	_ io.Closer      = (*SMTPTransport)(nil)
)

// NewSMTP builds the SMTP-mode transport of an SES connection with
// explicit pool and TLS options of the smtp driver (tests pass the root
// CAs of a local server).
func NewSMTP(conn *core.Connection, env core.DriverEnv, opts smtpdrv.Options) (*SMTPTransport, error) {
	if fields := validate(conn.Settings); len(fields) > 0 {
		return nil, core.Invalid(fields)
	}
	sc := &core.Connection{ID: conn.ID, Name: conn.Name, Driver: smtpdrv.Slug, IsActive: conn.IsActive,
		Settings: SMTPSettings(conn.Settings)}
	inner, err := smtpdrv.NewTransport(sc, env, opts)
	if err != nil {
		return nil, fmt.Errorf("ses: smtp mode: %w", err)
	}
	return &SMTPTransport{inner: inner, sender: apidriver.SenderOf(conn.Settings)}, nil
}

// Send implements core.Transport over SMTP; from_email and from_name,
// when set, replace the message's sender.
func (t *SMTPTransport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	m := *msg
	m.From = t.sender.Apply(m.From)
	rcpt, err := t.inner.Send(ctx, &m)
	if err != nil {
		return rcpt, fmt.Errorf("ses smtp: %w", err)
	}
	return rcpt, nil
}

// Verify implements core.Verifier: it connects, negotiates TLS and
// authenticates with the SES SMTP credentials, without sending.
func (t *SMTPTransport) Verify(ctx context.Context) error {
	if err := t.inner.Verify(ctx); err != nil {
		return fmt.Errorf("ses smtp: %w", err)
	}
	return nil
}

// Close implements io.Closer: it closes the pooled SMTP sessions.
func (t *SMTPTransport) Close() error { return t.inner.Close() }

// Transport sends through one SES connection in API mode. It is safe for
// concurrent use.
type Transport struct {
	region    string
	endpoint  string
	useV2     bool
	configSet string
	tags      []Tag
	sender    apidriver.Sender
	secrets   []string
	v1        *sesv1.Client
	v2        *sesv2.Client
}

// New builds the transport of an SES connection from its effective
// settings: a *Transport in API mode, an *SMTPTransport in SMTP mode.
func New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	s := conn.Settings
	if mode(s) == ModeSMTP {
		tr, err := NewSMTP(conn, env, smtpdrv.Options{})
		if err != nil {
			return nil, err
		}
		return tr, nil
	}
	if m := mode(s); m != ModeAPI {
		return nil, core.InvalidField(KeyDeliveryMode, "Must be one of: api, smtp.")
	}
	fields := validate(s)
	if len(fields) > 0 {
		return nil, core.Invalid(fields)
	}
	tags, _ := ParseStaticTags(s.String(KeyStaticTags))
	hc := apidriver.HTTPClient(env)
	t := &Transport{
		region:    s.String(KeyRegion),
		endpoint:  strings.TrimRight(s.String(KeyCustomEndpoint), "/"),
		useV2:     s.Bool(KeyEnableV2API, false),
		configSet: s.String(KeyConfigurationSet),
		tags:      tags,
		sender:    apidriver.SenderOf(s),
	}
	var creds aws.CredentialsProvider
	if s.Bool(KeyIMDSRoleSource, false) {
		ttl := s.Int(KeyIMDSTokenTTL, DefaultIMDSTokenTTL)
		if ttl < 1 || ttl > 21600 {
			return nil, core.InvalidField(KeyIMDSTokenTTL, "Must be between 1 and 21600.")
		}
		client := imds.New(imds.Options{
			Endpoint:       strings.TrimRight(s.String(KeyIMDSEndpoint), "/"),
			HTTPClient:     hc,
			EnableFallback: aws.FalseTernary, // IMDSv2 only
			APIOptions:     []func(*middleware.Stack) error{tokenTTL(ttl)},
		})
		creds = aws.NewCredentialsCache(ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = client }))
	} else {
		key, secret := s.String(KeyAccessKey), s.String(KeySecret)
		// The access key id is a sensitive setting too: mask both.
		t.secrets = []string{secret, key}
		creds = credentials.NewStaticCredentialsProvider(key, secret, "")
	}
	var base *string
	if t.endpoint != "" {
		base = aws.String(t.endpoint)
	}
	// The delivery queue owns retries and backoff, so the SDK makes a
	// single attempt and reports every failure at once.
	retryer := aws.NopRetryer{}
	if t.useV2 {
		t.v2 = sesv2.New(sesv2.Options{Region: t.region, Credentials: creds, BaseEndpoint: base, HTTPClient: hc, Retryer: retryer})
	} else {
		t.v1 = sesv1.New(sesv1.Options{Region: t.region, Credentials: creds, BaseEndpoint: base, HTTPClient: hc, Retryer: retryer})
	}
	return t, nil
}

// tokenTTL sets the TTL the IMDS client asks for its session token (the
// SDK's own choice is fixed at five minutes).
func tokenTTL(seconds int64) func(*middleware.Stack) error {
	const header = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
	value := fmt.Sprint(seconds)
	return func(stack *middleware.Stack) error {
		return stack.Build.Add(middleware.BuildMiddlewareFunc("mailsvcIMDSTokenTTL",
			func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok && req.Header.Get(header) != "" {
					req.Header.Set(header, value)
				}
				return next.HandleBuild(ctx, in)
			}), middleware.After)
	}
}

// BaseURL returns the API endpoint the transport talks to.
func (t *Transport) BaseURL() string {
	if t.endpoint != "" {
		return t.endpoint
	}
	return "https://email." + t.region + ".amazonaws.com"
}

// UsesV2 reports whether the transport sends with the SES v2 API.
func (t *Transport) UsesV2() bool { return t.useV2 }

// Send implements core.Transport: the message is rendered to raw MIME and
// sent with SendRawEmail (v1) or SendEmail with Content.Raw (v2). Bcc
// recipients are destinations of the request and never headers of the
// message. The receipt carries the SES MessageId.
func (t *Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	m := *msg
	m.From = t.sender.Apply(m.From)
	// Amazon SES takes no SMTPUTF8: addresses go with A-label domains,
	// and one with a non-ASCII local part cannot be sent.
	ascii, err := mime.ASCIIEnvelope(&m)
	if err != nil {
		return core.Receipt{}, core.Permanent(fmt.Errorf("ses: Amazon SES does not take SMTPUTF8 (RFC 6531): %w", err))
	}
	m = *ascii
	raw, _, err := mime.BuildASCII(&m)
	if err != nil {
		return core.Receipt{}, core.Permanent(fmt.Errorf("ses: build message: %w", err))
	}
	if t.useV2 {
		return t.sendV2(ctx, &m, raw)
	}
	return t.sendV1(ctx, &m, raw)
}

func (t *Transport) sendV1(ctx context.Context, m *core.Message, raw []byte) (core.Receipt, error) {
	in := &sesv1.SendRawEmailInput{
		RawMessage: &sesv1types.RawMessage{Data: raw},
		Source:     aws.String(m.From.Email),
	}
	for _, a := range m.EnvelopeRecipients() {
		in.Destinations = append(in.Destinations, a.Email)
	}
	if t.configSet != "" {
		in.ConfigurationSetName = aws.String(t.configSet)
	}
	for _, tag := range t.tags {
		in.Tags = append(in.Tags, sesv1types.MessageTag{Name: aws.String(tag.Name), Value: aws.String(tag.Value)})
	}
	out, err := t.v1.SendRawEmail(ctx, in)
	if err != nil {
		return core.Receipt{}, t.classify("send", err)
	}
	id := aws.ToString(out.MessageId)
	return core.Receipt{MessageID: id, Response: "SendRawEmail accepted: " + id}, nil
}

func (t *Transport) sendV2(ctx context.Context, m *core.Message, raw []byte) (core.Receipt, error) {
	// The raw message keeps the headers as written; the destination is
	// the envelope (a part of a split message: its own recipients).
	dest := m.ForEnvelope()
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(m.From.Email),
		Destination: &sesv2types.Destination{
			ToAddresses:  emails(dest.To),
			CcAddresses:  emails(dest.Cc),
			BccAddresses: emails(dest.Bcc),
		},
		Content: &sesv2types.EmailContent{Raw: &sesv2types.RawMessage{Data: raw}},
	}
	if t.configSet != "" {
		in.ConfigurationSetName = aws.String(t.configSet)
	}
	for _, tag := range t.tags {
		in.EmailTags = append(in.EmailTags, sesv2types.MessageTag{Name: aws.String(tag.Name), Value: aws.String(tag.Value)})
	}
	out, err := t.v2.SendEmail(ctx, in)
	if err != nil {
		return core.Receipt{}, t.classify("send", err)
	}
	id := aws.ToString(out.MessageId)
	return core.Receipt{MessageID: id, Response: "SendEmail accepted: " + id}, nil
}

// Verify implements core.Verifier with an authenticated read that sends
// nothing: GetSendQuota (v1) or GetAccount (v2).
func (t *Transport) Verify(ctx context.Context) error {
	var err error
	if t.useV2 {
		_, err = t.v2.GetAccount(ctx, &sesv2.GetAccountInput{})
	} else {
		_, err = t.v1.GetSendQuota(ctx, &sesv1.GetSendQuotaInput{})
	}
	if err != nil {
		return t.classify("verify", err)
	}
	return nil
}

func emails(in []core.Address) []string {
	out := make([]string, 0, len(in))
	for _, a := range in {
		out = append(out, a.Email)
	}
	return out
}

// temporaryCodes are the AWS error codes of conditions that pass: request
// rate and quota throttling, and service-side failures.
var temporaryCodes = map[string]bool{
	"Throttling":                  true,
	"ThrottlingException":         true,
	"TooManyRequestsException":    true,
	"LimitExceededException":      true,
	"RequestTimeout":              true,
	"RequestTimeoutException":     true,
	"ServiceUnavailable":          true,
	"ServiceUnavailableException": true,
	"InternalFailure":             true,
	"InternalServerError":         true,
}

// rateLimitCodes are the AWS error codes of a send rate exceeded.
var rateLimitCodes = map[string]bool{
	"Throttling":               true,
	"ThrottlingException":      true,
	"TooManyRequestsException": true,
}

// SendLimits implements core.SendLimitReader: the account's MaxSendRate,
// Max24HourSend and SentLast24Hours (GetAccount with the v2 API,
// GetSendQuota with v1). The delivery engine uses MaxSendRate as the
// connection's rate limit when max_per_second is 0, and stops sending
// before Max24HourSend is reached.
func (t *Transport) SendLimits(ctx context.Context) (core.SendLimits, error) {
	if t.useV2 {
		out, err := t.v2.GetAccount(ctx, &sesv2.GetAccountInput{})
		if err != nil {
			return core.SendLimits{}, t.classify("get account", err)
		}
		if out.SendQuota == nil {
			return core.SendLimits{}, nil
		}
		q := out.SendQuota
		return core.SendLimits{MaxPerSecond: q.MaxSendRate, Max24Hour: int64(q.Max24HourSend), SentLast24Hours: int64(q.SentLast24Hours)}, nil
	}
	out, err := t.v1.GetSendQuota(ctx, &sesv1.GetSendQuotaInput{})
	if err != nil {
		return core.SendLimits{}, t.classify("get send quota", err)
	}
	return core.SendLimits{MaxPerSecond: out.MaxSendRate, Max24Hour: int64(out.Max24HourSend), SentLast24Hours: int64(out.SentLast24Hours)}, nil
}

// classify wraps an SDK error as temporary (throttling, 429, 5xx, network
// errors, timeouts) or permanent (any other HTTP 4xx), with the secret
// scrubbed from its text.
func (t *Transport) classify(op string, err error) error {
	wrapped := fmt.Errorf("ses: %s: %w", op, err)
	var apiErr smithy.APIError
	var respErr *awshttp.ResponseError
	status := 0
	if errors.As(err, &respErr) {
		status = respErr.HTTPStatusCode()
	}
	code := ""
	if errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	switch {
	case rateLimitCodes[code] || status == http.StatusTooManyRequests:
		// Sending faster than the account's MaxSendRate: pause the
		// connection rather than burn the message's retries.
		retryAfter := time.Duration(0)
		if respErr != nil && respErr.Response != nil {
			retryAfter = core.ParseRetryAfter(respErr.Response.Header.Get("Retry-After"), time.Now())
		}
		wrapped = core.RateLimited(wrapped, retryAfter)
	case temporaryCodes[code]:
		wrapped = core.Temporary(wrapped)
	case status >= 500:
		wrapped = core.Temporary(wrapped)
	case status >= 400:
		wrapped = core.Permanent(wrapped)
	default: // no HTTP response: network error, timeout, cancellation, credentials unreachable
		wrapped = core.Temporary(wrapped)
	}
	return t.scrub(wrapped)
}

// scrub returns err with the connection's secrets masked in its text.
func (t *Transport) scrub(err error) error { return apidriver.Scrub(err, t.secrets...) }
