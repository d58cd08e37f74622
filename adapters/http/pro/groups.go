package pro

import (
	"context"
	"net/http"
	"reflect"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro/routing"
)

// SenderGroupService is what the sender group routes need
// (app/pro/routing.Service).
type SenderGroupService interface {
	Groups(ctx context.Context) ([]routing.Group, error)
	SaveGroup(ctx context.Context, in routing.GroupInput) (*routing.Group, error)
}

// stringType is reported by the decoders of loosely typed fields.
var stringType = reflect.TypeOf("")

// groupBody is the body of PUT /pro/sender-groups.
type groupBody struct {
	Sender   string `json:"sender"`
	Strategy string `json:"strategy"`
	Members  []struct {
		ConnectionID int64  `json:"connection_id"`
		Weight       *int   `json:"weight"`
		DailyCap     *int64 `json:"daily_cap"`
	} `json:"members"`
}

// registerSenderGroupRoutes registers the spec's "Pro: sender groups"
// routes when the module has a SenderGroups service.
func (m *Module) registerSenderGroupRoutes(rt *api.Routes) {
	svc := m.SenderGroups
	if svc == nil {
		return
	}
	rt.Private("GET", "/pro/sender-groups", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, svc.Groups)
	})
	rt.Private("PUT", "/pro/sender-groups", func(w http.ResponseWriter, r *http.Request) error {
		return api.RespondBody(rt.DecodeJSON, w, r, func(ctx context.Context, b groupBody) (*routing.Group, error) {
			in := routing.GroupInput{Sender: b.Sender, Strategy: b.Strategy}
			for _, m := range b.Members {
				in.Members = append(in.Members, routing.MemberInput{ConnectionID: m.ConnectionID, Weight: m.Weight, DailyCap: m.DailyCap})
			}
			return svc.SaveGroup(ctx, in)
		})
	})
}
