// Package sesid is the SES v2 identity API of an Amazon SES connection,
// through aws-sdk-go-v2: it implements app/pro/sesid.Client and its
// Dialer, with the connection's static keys or its EC2 instance role, and
// its custom endpoint when set (as the ses driver does).
package sesid

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	appsesid "github.com/mailsvc/mailsvc/app/pro/sesid"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/ses"
)

// maxPages bounds ListEmailIdentities paging (1000 identities a page).
const maxPages = 20

// Client is the SES v2 identity API of one connection. It is safe for
// concurrent use.
type Client struct {
	api     *sesv2.Client
	secrets []string
}

var _ appsesid.Client = (*Client)(nil)

// Dialer returns an appsesid.Dialer whose clients make their HTTP calls
// with hc (nil: http.DefaultClient).
func Dialer(hc *http.Client) appsesid.Dialer {
	return func(conn *core.Connection) (appsesid.Client, error) { return New(conn, hc) }
}

// New builds the client of an SES connection from its effective settings.
// The connection needs a region and either an access key and secret or
// the instance role; otherwise it is a validation error on connection_id.
func New(conn *core.Connection, hc *http.Client) (*Client, error) {
	s := conn.Settings
	if hc == nil {
		hc = http.DefaultClient
	}
	region := s.String(ses.KeyRegion)
	if region == "" {
		region = s.String(ses.KeySMTPRegion)
	}
	if region == "" {
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d has no region: set region to use the SES API.", conn.ID))
	}
	c := &Client{}
	var creds aws.CredentialsProvider
	if s.Bool(ses.KeyIMDSRoleSource, false) {
		client := imds.New(imds.Options{Endpoint: strings.TrimRight(s.String(ses.KeyIMDSEndpoint), "/"),
			HTTPClient: hc, EnableFallback: aws.FalseTernary})
		creds = aws.NewCredentialsCache(ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = client }))
	} else {
		key, secret := s.String(ses.KeyAccessKey), s.String(ses.KeySecret)
		if key == "" || secret == "" {
			return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d has no SES API credentials: identity management needs an access key and secret, or the instance role (SMTP credentials cannot call the API).", conn.ID))
		}
		c.secrets = []string{secret, key}
		creds = credentials.NewStaticCredentialsProvider(key, secret, "")
	}
	var base *string
	if e := strings.TrimRight(s.String(ses.KeyCustomEndpoint), "/"); e != "" {
		base = aws.String(e)
	}
	c.api = sesv2.New(sesv2.Options{Region: region, Credentials: creds, BaseEndpoint: base, HTTPClient: hc,
		Retryer: aws.NopRetryer{}})
	return c, nil
}

// ListIdentities implements appsesid.Client.
func (c *Client) ListIdentities(ctx context.Context) ([]appsesid.Identity, error) {
	var out []appsesid.Identity
	var token *string
	for page := 0; page < maxPages; page++ {
		res, err := c.api.ListEmailIdentities(ctx, &sesv2.ListEmailIdentitiesInput{NextToken: token, PageSize: aws.Int32(1000)})
		if err != nil {
			return nil, c.classify("list identities", "", err)
		}
		for _, it := range res.EmailIdentities {
			out = append(out, appsesid.Identity{
				Identity:           aws.ToString(it.IdentityName),
				Type:               identityType(it.IdentityType),
				VerificationStatus: strings.ToLower(string(it.VerificationStatus)),
				VerifiedForSending: it.SendingEnabled && it.VerificationStatus == types.VerificationStatusSuccess,
			})
		}
		if aws.ToString(res.NextToken) == "" {
			break
		}
		token = res.NextToken
	}
	return out, nil
}

// GetIdentity implements appsesid.Client.
func (c *Client) GetIdentity(ctx context.Context, identity string) (*appsesid.Identity, error) {
	res, err := c.api.GetEmailIdentity(ctx, &sesv2.GetEmailIdentityInput{EmailIdentity: aws.String(identity)})
	if err != nil {
		return nil, c.classify("get identity", identity, err)
	}
	return &appsesid.Identity{
		Identity:           identity,
		Type:               identityType(res.IdentityType),
		VerificationStatus: strings.ToLower(string(res.VerificationStatus)),
		VerifiedForSending: res.VerifiedForSendingStatus,
		DKIM:               dkim(res.DkimAttributes),
	}, nil
}

// CreateIdentity implements appsesid.Client.
func (c *Client) CreateIdentity(ctx context.Context, identity string) (*appsesid.Identity, error) {
	res, err := c.api.CreateEmailIdentity(ctx, &sesv2.CreateEmailIdentityInput{EmailIdentity: aws.String(identity)})
	if err != nil {
		return nil, c.classify("create identity", identity, err)
	}
	return &appsesid.Identity{
		Identity:           identity,
		Type:               identityType(res.IdentityType),
		VerificationStatus: appsesid.StatusPending,
		VerifiedForSending: res.VerifiedForSendingStatus,
		DKIM:               dkim(res.DkimAttributes),
	}, nil
}

// DeleteIdentity implements appsesid.Client.
func (c *Client) DeleteIdentity(ctx context.Context, identity string) error {
	if _, err := c.api.DeleteEmailIdentity(ctx, &sesv2.DeleteEmailIdentityInput{EmailIdentity: aws.String(identity)}); err != nil {
		return c.classify("delete identity", identity, err)
	}
	return nil
}

// Account implements appsesid.Client.
func (c *Client) Account(ctx context.Context) (*appsesid.Account, error) {
	res, err := c.api.GetAccount(ctx, &sesv2.GetAccountInput{})
	if err != nil {
		return nil, c.classify("get account", "", err)
	}
	a := &appsesid.Account{SendingEnabled: res.SendingEnabled, ProductionAccessEnabled: res.ProductionAccessEnabled,
		EnforcementStatus: aws.ToString(res.EnforcementStatus)}
	if q := res.SendQuota; q != nil {
		a.Max24HourSend, a.MaxSendRate, a.SentLast24Hours = q.Max24HourSend, q.MaxSendRate, q.SentLast24Hours
	}
	return a, nil
}

func identityType(t types.IdentityType) string {
	switch t {
	case types.IdentityTypeEmailAddress:
		return appsesid.TypeEmailAddress
	case types.IdentityTypeDomain:
		return appsesid.TypeDomain
	case types.IdentityTypeManagedDomain:
		return appsesid.TypeManagedDomain
	}
	return strings.ToLower(string(t))
}

func dkim(d *types.DkimAttributes) *appsesid.DKIM {
	if d == nil {
		return nil
	}
	return &appsesid.DKIM{SigningEnabled: d.SigningEnabled, Status: strings.ToLower(string(d.Status)),
		Tokens: append([]string{}, d.Tokens...)}
}

// classify turns an SDK error into a domain error with the secrets
// scrubbed: not found, already exists, a refused identity, refused
// credentials, or SES unreachable.
func (c *Client) classify(op, identity string, err error) error {
	var apiErr smithy.APIError
	var respErr *awshttp.ResponseError
	status := 0
	if errors.As(err, &respErr) {
		status = respErr.HTTPStatusCode()
	}
	code, msg := "", ""
	if errors.As(err, &apiErr) {
		code, msg = apiErr.ErrorCode(), apiErr.ErrorMessage()
	}
	msg = core.ScrubText(msg, c.secrets...)
	switch {
	case code == "NotFoundException":
		return core.Errorf(core.ENOTFOUND, "SES has no identity %s.", identity)
	case code == "AlreadyExistsException":
		return core.Errorf(core.ECONFLICT, "SES already has the identity %s.", identity)
	case code == "BadRequestException" && identity != "":
		return core.InvalidField("identity", fmt.Sprintf("SES refused %s: %s", identity, msg))
	case status == http.StatusForbidden || status == http.StatusUnauthorized || strings.Contains(code, "Signature") ||
		code == "UnrecognizedClientException" || code == "AccessDeniedException" || code == "InvalidClientTokenId":
		return core.InvalidField("connection_id", fmt.Sprintf("SES refused the connection's credentials (%s): %s", code, msg))
	case code != "" && status >= 400 && status < 500 && status != http.StatusTooManyRequests:
		field := "connection_id"
		if identity != "" {
			field = "identity"
		}
		return core.InvalidField(field, fmt.Sprintf("SES refused to %s: %s (%s).", op, msg, code))
	}
	text := core.ScrubText(err.Error(), c.secrets...)
	return core.Errorf(core.EUNAVAILABLE, "SES could not %s: %s", op, text)
}
