package fakeapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Do sends req with http.DefaultClient, for a fake's own tests, and
// returns the answer's status, body and header; it fails t when the
// request cannot be made.
func Do(t testing.TB, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// Expect sends req like Do and fails t unless the answer has wantStatus
// and a body containing wantBody; it returns the body and the header.
func Expect(t testing.TB, req *http.Request, wantStatus int, wantBody string) (string, http.Header) {
	t.Helper()
	status, body, header := Do(t, req)
	if status != wantStatus || !strings.Contains(body, wantBody) {
		t.Fatalf("got %d %q, want %d containing %q", status, body, wantStatus, wantBody)
	}
	return body, header
}
