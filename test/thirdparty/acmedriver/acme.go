// Package acmedriver is a mail transport written outside mailsvc's
// drivers/ tree, as a third party would write one: it registers itself with
// core.Register from init, and a custom main adds it to the binary with a
// blank import. It posts each message as JSON to its endpoint.
package acmedriver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/mailsvc/mailsvc/core"
)

func init() {
	core.Register(core.Driver{
		Slug: "acme",
		Name: "Acme Mail",
		Fields: []core.Field{
			{Key: "endpoint", Label: "API endpoint", Type: core.FieldURL, Required: true},
			{Key: "api_key", Label: "API key", Type: core.FieldPassword, Required: true},
		},
		New: func(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
			client := env.HTTPClient
			if client == nil {
				client = http.DefaultClient
			}
			return &transport{endpoint: conn.Settings.String("endpoint"), key: conn.Settings.String("api_key"), client: client}, nil
		},
	})
}

type transport struct {
	endpoint, key string
	client        *http.Client
}

// Send implements core.Transport.
func (t *transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	body, err := json.Marshal(map[string]any{"from": msg.From.Email, "to": msg.Recipients(), "subject": msg.Subject, "text": msg.Text})
	if err != nil {
		return core.Receipt{}, core.Permanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(body))
	if err != nil {
		return core.Receipt{}, core.Permanent(err)
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	resp, err := t.client.Do(req)
	if err != nil {
		return core.Receipt{}, core.Temporary(fmt.Errorf("acme: %w", err))
	}
	defer resp.Body.Close()
	id, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode != http.StatusOK {
		return core.Receipt{}, core.HTTPStatusError(resp.StatusCode, string(id))
	}
	return core.Receipt{MessageID: string(id), Response: resp.Status}, nil
}
