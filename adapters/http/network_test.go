package http_test

import (
	"context"
	"strings"

	api "github.com/mailsvc/mailsvc/adapters/http"
)

// stubSites is a network of sites at /, /site2/ and /site3/.
type stubSites struct{}

func (stubSites) SiteForRequest(_ context.Context, _, path string) (int64, string, error) {
	for id, p := range map[int64]string{2: "/site2/", 3: "/site3/"} {
		if strings.HasPrefix(path, p) {
			return id, p, nil
		}
	}
	return 1, "/", nil
}

func (stubSites) MainSiteID() int64 { return 1 }

// stubNetwork only makes the network service non-nil.
type stubNetwork struct{ api.NetworkService }
