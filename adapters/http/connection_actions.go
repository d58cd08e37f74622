package http

import (
	"context"
	"net/http"

	"github.com/mailsvc/mailsvc/app"
)

// testEmailBody is the spec's test email request.
type testEmailBody struct {
	To           *string `json:"to"`
	ConnectionID *int64  `json:"connection_id"`
	Subject      *string `json:"subject"`
}

// connectionTestBody is the optional body of POST /connections/{id}/test.
type connectionTestBody struct {
	To string `json:"to"`
}

// sendTestEmail answers 200 with success true or false (a provider that
// refused the message or could not be reached); a bad address or a
// missing or inactive connection is a 422.
func (s *Server) sendTestEmail(w http.ResponseWriter, r *http.Request) error {
	return RespondBody(s.decodeJSON, w, r, func(ctx context.Context, body testEmailBody) (*app.TestEmailResult, error) {
		return s.Actions.SendTestEmail(ctx, app.TestEmailInput{To: body.To, ConnectionID: body.ConnectionID, Subject: body.Subject})
	})
}

func (s *Server) testConnection(w http.ResponseWriter, r *http.Request) error {
	return respondIDBody(s.decodeJSON, w, r, func(ctx context.Context, id int64, body connectionTestBody) (*app.TestEmailResult, error) {
		return s.Actions.TestConnection(ctx, id, body.To)
	})
}

func (s *Server) verifyCredentials(w http.ResponseWriter, r *http.Request) error {
	return respondID(w, r, s.Actions.VerifyCredentials)
}

func (s *Server) verifyAPICredentials(w http.ResponseWriter, r *http.Request) error {
	return respondID(w, r, s.Actions.VerifyAPICredentials)
}
