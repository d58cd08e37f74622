package graphfake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/graphfake"
)

const token = "good"

func do(t *testing.T, method, url, bearer, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	if resp.Header.Get("request-id") == "" {
		t.Errorf("%s %s: no request-id header", method, url)
	}
	return resp.StatusCode, out
}

func errCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestFakeRefusesWhatGraphRefuses(t *testing.T) {
	fake := graphfake.New(func(tok string) bool { return tok == token })
	defer fake.Close()
	base := fake.BaseURL()
	msg := `{"message":{"subject":"s","body":{"contentType":"text","content":"b"},"toRecipients":[{"emailAddress":{"address":"a@example.org"}}]%s}}`
	tests := []struct {
		name, method, path, bearer, body string
		wantStatus                       int
		wantCode                         string
	}{
		{"no token", "POST", "/me/sendMail", "", `{}`, 401, "InvalidAuthenticationToken"},
		{"unknown token", "POST", "/me/sendMail", "bad", `{}`, 401, "InvalidAuthenticationToken"},
		{"no recipients", "POST", "/me/sendMail", token, `{"message":{"subject":"s"}}`, 400, "ErrorInvalidRecipients"},
		{"non X- header", "POST", "/me/sendMail", token, strings.Replace(msg, "%s", `,"internetMessageHeaders":[{"name":"List-Id","value":"x"}]`, 1), 400, "InvalidInternetMessageHeader"},
		{"over 4 MB", "POST", "/me/sendMail", token, strings.Replace(msg, "%s", `,"x":"`+strings.Repeat("a", graphfake.MaxRequestBytes)+`"`, 1), 413, "ErrorRequestEntityTooLarge"},
		{"small upload session", "POST", "/me/messages/x/attachments/createUploadSession", token, `{"AttachmentItem":{"attachmentType":"file","name":"a","size":10}}`, 400, "ErrorAttachmentSizeShouldNotBeLessThanMinimumSize"},
		{"capitalised contentType", "POST", "/me/sendMail", token, strings.Replace(strings.Replace(msg, "%s", "", 1), `"text"`, `"Text"`, 1), 400, "RequestBodyRead"},
		{"over 500 recipients", "POST", "/me/sendMail", token, strings.Replace(msg, "%s", `,"bccRecipients":[`+strings.Repeat(`{"emailAddress":{"address":"b@example.org"}},`, graphfake.MaxRecipients)+`{"emailAddress":{"address":"c@example.org"}}]`, 1), 400, "ErrorTooManyRecipients"},
		{"accepted", "POST", "/users/u1/sendMail", token, strings.Replace(msg, "%s", "", 1), 202, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out := do(t, tc.method, base+tc.path, tc.bearer, tc.body, nil)
			if status != tc.wantStatus || errCode(out) != tc.wantCode {
				t.Fatalf("%d %q, want %d %q", status, errCode(out), tc.wantStatus, tc.wantCode)
			}
		})
	}
	if got := fake.Messages(); len(got) != 1 || got[0].Mailbox != "u1" || got[0].Text != "b" {
		t.Fatalf("recorded %+v", got)
	}
}

func TestFakeUploadSession(t *testing.T) {
	fake := graphfake.New(func(tok string) bool { return tok == token })
	defer fake.Close()
	base := fake.BaseURL()
	status, draft := do(t, "POST", base+"/me/messages", token, `{"subject":"big","toRecipients":[{"emailAddress":{"address":"a@example.org"}}]}`, nil)
	id, _ := draft["id"].(string)
	if status != 201 || id == "" {
		t.Fatalf("create draft: %d %v", status, draft)
	}
	size := graphfake.MinUploadSessionBytes + 5
	status, out := do(t, "POST", base+"/me/messages/"+id+"/attachments/createUploadSession", token,
		`{"AttachmentItem":{"attachmentType":"file","name":"big.bin","size":`+itoa(size)+`}}`, nil)
	uploadURL, _ := out["uploadUrl"].(string)
	if status != 201 || uploadURL == "" {
		t.Fatalf("createUploadSession: %d %v", status, out)
	}
	data := bytes.Repeat([]byte{0, 1, 2, 0xff}, size/4+1)[:size]
	half := size / 2
	put := func(first, last int, bearer string) int {
		st, _ := do(t, "PUT", uploadURL, bearer, string(data[first:last+1]),
			map[string]string{"Content-Range": "bytes " + itoa(first) + "-" + itoa(last) + "/" + itoa(size)})
		return st
	}
	if st := put(0, half-1, token); st != 401 {
		t.Fatalf("chunk with a bearer token: %d, want 401", st)
	}
	if st := put(1, half-1, ""); st != 400 {
		t.Fatalf("chunk not at the expected offset: %d, want 400", st)
	}
	if st := put(0, half-1, ""); st != 200 {
		t.Fatalf("first chunk: %d", st)
	}
	if st, _ := do(t, "POST", base+"/me/messages/"+id+"/send", token, "", nil); st != 400 {
		t.Fatalf("send with an unfinished upload: %d, want 400", st)
	}
	if st := put(half, size-1, ""); st != 201 {
		t.Fatalf("last chunk: %d", st)
	}
	if st, _ := do(t, "POST", base+"/me/messages/"+id+"/send", token, "", nil); st != 202 {
		t.Fatalf("send: %d", st)
	}
	got := fake.Messages()
	if len(got) != 1 || !got[0].Draft || len(got[0].Attachments) != 1 || !bytes.Equal(got[0].Attachments[0].Data, data) || !got[0].Attachments[0].Uploaded {
		t.Fatalf("recorded %d messages; attachment intact: %v", len(got), len(got) == 1 && len(got[0].Attachments) == 1 && bytes.Equal(got[0].Attachments[0].Data, data))
	}
	if fake.Chunks() != 2 || fake.Drafts() != 0 {
		t.Fatalf("chunks %d drafts %d", fake.Chunks(), fake.Drafts())
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
