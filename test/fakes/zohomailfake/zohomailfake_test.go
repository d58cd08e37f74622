package zohomailfake

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

func do(t *testing.T, method, url, token, ctype string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Authorization", "Zoho-oauthtoken "+token)
	status, b, _ := fakeapi.Do(t, req)
	return status, b
}

func TestEndpoints(t *testing.T) {
	s := New(func(tok string) bool { return tok == "good" }, Account{ID: "42", Email: "me@example.com", Aliases: []string{"al@example.com"}})
	defer s.Close()
	base := s.URL + "/api/accounts"

	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormFile("attach", "a.txt")
	_, _ = fw.Write([]byte("AAA"))
	fw, _ = mw.CreateFormFile("attach", "b.png")
	_, _ = fw.Write([]byte{0, 1, 2})
	_ = mw.Close()

	tests := []struct {
		name, method, url, token, ctype, body string
		wantStatus                            int
		wantBody                              string
	}{
		{"accounts", "GET", base, "good", "", "", 200, `"primaryEmailAddress":"me@example.com"`},
		{"accounts bad token", "GET", base, "bad", "", "", 401, "INVALID_OAUTHTOKEN"},
		{"raw upload", "POST", base + "/42/messages/attachments?fileName=x.pdf", "good", "application/octet-stream", "%PDF", 200, `"attachmentName":"x.pdf"`},
		{"inline upload has a url", "POST", base + "/42/messages/attachments?fileName=i.png&isInline=true", "good", "application/octet-stream", "PNG", 200, `"url":`},
		{"multipart upload", "POST", base + "/42/messages/attachments?uploadType=multipart", "good", mw.FormDataContentType(), mp.String(), 200, `"data":[{`},
		{"upload without name", "POST", base + "/42/messages/attachments", "good", "application/octet-stream", "x", 400, "INVALID_DATA"},
		{"unknown account", "POST", base + "/7/messages", "good", "application/json", `{}`, 404, "INVALID_ACCOUNTID"},
		{"extra key", "POST", base + "/42/messages", "good", "application/json", `{"fromAddress":"me@example.com","toAddress":"a@x.org","replyTo":"r@x.org"}`, 400, "EXTRA_KEY_FOUND_IN_JSON"},
		{"foreign sender", "POST", base + "/42/messages", "good", "application/json", `{"fromAddress":"x@example.com","toAddress":"a@x.org"}`, 400, "INVALID_FROM_ADDRESS"},
		{"no recipient", "POST", base + "/42/messages", "good", "application/json", `{"fromAddress":"me@example.com"}`, 400, "toAddress"},
		{"send", "POST", base + "/42/messages", "good", "application/json", `{"fromAddress":"Al <al@example.com>","toAddress":"a@x.org,\"B, b\" <b@x.org>","subject":"s","content":"<b>x</b>"}`, 200, `"messageId":"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(t, tc.method, tc.url, tc.token, tc.ctype, []byte(tc.body))
			if status != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Fatalf("got %d %s, want %d containing %q", status, body, tc.wantStatus, tc.wantBody)
			}
			var env struct {
				Status struct{ Code int } `json:"status"`
			}
			if err := json.Unmarshal([]byte(body), &env); err != nil || env.Status.Code != tc.wantStatus {
				t.Errorf("envelope status %d (%v), want %d", env.Status.Code, err, tc.wantStatus)
			}
		})
	}
	if s.Uploads() != 4 || s.AccountRequests() != 1 {
		t.Errorf("uploads %d, account requests %d", s.Uploads(), s.AccountRequests())
	}
	msgs := s.Messages()
	if len(msgs) != 1 || msgs[0].HTML != "<b>x</b>" || msgs[0].MailFormat != "html" || len(msgs[0].To) != 2 || msgs[0].To[1].Name != "B, b" || msgs[0].From.Name != "Al" {
		t.Errorf("messages = %+v", msgs)
	}
}
