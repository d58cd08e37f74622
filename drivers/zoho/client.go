package zoho

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// client makes Zoho Mail API calls against one base URL.
type client struct {
	base string
	http *http.Client
}

// envelope is every Zoho Mail answer:
// {"status":{"code":200,"description":"success"},"data":...}.
type envelope struct {
	Status struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	} `json:"status"`
	Data json.RawMessage `json:"data"`
}

// apiError is a Zoho Mail error answer; errorCode and moreInfo come from
// its data.
type apiError struct {
	status      int
	description string
	errorCode   string
	moreInfo    string
	body        string
}

func (e *apiError) Error() string {
	if e.errorCode == "" && e.description == "" {
		return fmt.Sprintf("Zoho answered HTTP %d: %s", e.status, e.body)
	}
	msg := fmt.Sprintf("Zoho answered %d %s", e.status, e.description)
	if e.errorCode != "" {
		msg += " (" + e.errorCode + ")"
	}
	if e.moreInfo != "" {
		msg += ": " + e.moreInfo
	}
	return msg
}

// call makes one request with the access token and returns the data of a
// successful answer, or a classified error: network errors and 429/5xx
// temporary, a refused token (401, INVALID_OAUTHTOKEN) unauthorized so
// that WithToken refreshes, any other failure permanent. Zoho may put an
// error in the status of an HTTP 200 answer; that status then counts.
func (c *client) call(ctx context.Context, token, method, path, ctype string, body []byte) (json.RawMessage, error) {
	httpStatus, answer, err := oauthdriver.Request{Method: method, URL: c.base + path, Scheme: "Zoho-oauthtoken", Token: token,
		ContentType: ctype, Body: body, Limit: 4 << 20}.Do(ctx, c.http)
	if err != nil {
		return nil, err
	}
	var env envelope
	parsed := json.Unmarshal(answer, &env) == nil
	status := httpStatus
	if status >= 200 && status <= 299 && parsed && env.Status.Code != 0 {
		status = env.Status.Code
	}
	if status >= 200 && status <= 299 {
		if !parsed {
			return nil, core.Permanent(fmt.Errorf("HTTP %d with an answer that is not Zoho's JSON: %s", httpStatus, apidriver.Summary(answer)))
		}
		return env.Data, nil
	}
	e := &apiError{status: status, description: env.Status.Description, body: apidriver.Summary(answer)}
	var data struct {
		ErrorCode string `json:"errorCode"`
		MoreInfo  string `json:"moreInfo"`
	}
	if parsed && json.Unmarshal(env.Data, &data) == nil {
		e.errorCode, e.moreInfo = data.ErrorCode, data.MoreInfo
	}
	return nil, apidriver.Scrub(classify(e), token)
}

func classify(e *apiError) error {
	switch {
	case e.status == http.StatusUnauthorized || strings.EqualFold(e.errorCode, "INVALID_OAUTHTOKEN"):
		return oauthdriver.Unauthorized(core.Permanent(e))
	case e.status == http.StatusTooManyRequests || e.status >= 500:
		return core.Temporary(e)
	}
	return core.Permanent(e)
}

// account is one entry of GET /api/accounts.
type account struct {
	AccountID           json.Number `json:"accountId"`
	PrimaryEmailAddress string      `json:"primaryEmailAddress"`
	MailboxAddress      string      `json:"mailboxAddress"`
	Type                string      `json:"type"`
	EmailAddress        []struct {
		MailID string `json:"mailId"`
	} `json:"emailAddress"`
	SendMailDetails []struct {
		FromAddress string `json:"fromAddress"`
	} `json:"sendMailDetails"`
}

// has reports whether the account sends as addr.
func (a *account) has(addr string) bool {
	match := func(s string) bool { return s != "" && strings.EqualFold(strings.TrimSpace(s), addr) }
	if match(a.PrimaryEmailAddress) || match(a.MailboxAddress) {
		return true
	}
	for _, e := range a.EmailAddress {
		if match(e.MailID) {
			return true
		}
	}
	for _, s := range a.SendMailDetails {
		if match(s.FromAddress) {
			return true
		}
	}
	return false
}

// lookupAccount returns the id of the account that sends as fromEmail,
// else of the first account Zoho lists (the user's own mailbox).
func (c *client) lookupAccount(ctx context.Context, token, fromEmail string) (string, error) {
	data, err := c.call(ctx, token, http.MethodGet, "/api/accounts", "", nil)
	if err != nil {
		return "", err
	}
	var accounts []account
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&accounts); err != nil {
		return "", core.Permanent(fmt.Errorf("decode the account list: %w", err))
	}
	for i := range accounts {
		if accounts[i].has(fromEmail) && accounts[i].AccountID != "" {
			return accounts[i].AccountID.String(), nil
		}
	}
	for i := range accounts {
		if accounts[i].AccountID != "" {
			return accounts[i].AccountID.String(), nil
		}
	}
	return "", core.Permanent(fmt.Errorf("the token's user has no Zoho Mail account"))
}
