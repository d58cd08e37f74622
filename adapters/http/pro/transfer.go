package pro

import (
	"context"
	"encoding/json"
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro/transfer"
)

// TransferService is what the export and import routes need
// (app/pro/transfer.Service).
type TransferService interface {
	Export(ctx context.Context) (*transfer.Snapshot, error)
	Preview(ctx context.Context, data []byte) (*transfer.Preview, error)
	Import(ctx context.Context, data []byte, resolutions map[string]string) (*transfer.Result, error)
}

// importBody is the body of the import routes.
type importBody struct {
	Data        json.RawMessage   `json:"data"`
	Resolutions map[string]string `json:"resolutions"`
}

// registerTransferRoutes registers the spec's export and import routes
// under "Pro: tools" (no feature gate); without m.Transfer it registers
// none.
func (m *Module) registerTransferRoutes(rt *api.Routes) {
	if m.Transfer == nil {
		return
	}
	rt.Private("POST", "/pro/tools/export", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, m.Transfer.Export)
	})
	rt.Private("POST", "/pro/tools/import/preview", func(w http.ResponseWriter, r *http.Request) error {
		return api.RespondBody(rt.DecodeJSON, w, r, func(ctx context.Context, body importBody) (*transfer.Preview, error) {
			return m.Transfer.Preview(ctx, body.Data)
		})
	})
	rt.Private("POST", "/pro/tools/import", func(w http.ResponseWriter, r *http.Request) error {
		return api.RespondBody(rt.DecodeJSON, w, r, func(ctx context.Context, body importBody) (*transfer.Result, error) {
			return m.Transfer.Import(ctx, body.Data, body.Resolutions)
		})
	})
}
