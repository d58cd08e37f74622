package scalebench

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// with returns a copy of m with k set to v.
func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for kk, vv := range m {
		out[kk] = vv
	}
	return out
}

// get returns the status of GET url.
func get(t testing.TB, url string) int {
	code, _ := getBody(t, url)
	return code
}

// getBody returns the status and body of GET url.
func getBody(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
