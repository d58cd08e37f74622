package http

import (
	"net/http"

	"github.com/gorilla/mux"

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
	var body testEmailBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	res, err := s.Actions.SendTestEmail(r.Context(), app.TestEmailInput{To: body.To, ConnectionID: body.ConnectionID, Subject: body.Subject})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) testConnection(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	var body connectionTestBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	res, err := s.Actions.TestConnection(r.Context(), id, body.To)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) verifyCredentials(w http.ResponseWriter, r *http.Request) error {
	return respondID(w, r, s.Actions.VerifyCredentials)
}

func (s *Server) verifyAPICredentials(w http.ResponseWriter, r *http.Request) error {
	return respondID(w, r, s.Actions.VerifyAPICredentials)
}
