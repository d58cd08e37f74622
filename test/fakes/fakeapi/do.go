package fakeapi

import (
	"io"
	"net/http"
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
