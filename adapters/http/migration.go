package http

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app/migration"
	"github.com/mailsvc/mailsvc/core"
)

// MigrationService is what the migration tools routes need
// (*migration.Engine).
type MigrationService interface {
	Scan(ctx context.Context, counts bool) ([]migration.ScanEntry, error)
	Import(ctx context.Context, req migration.ImportRequest) (*migration.ImportResult, error)
}

// migrationRoutes registers the spec's Tools migration routes.
func (s *Server) migrationRoutes(api *mux.Router) {
	s.private(api, "GET", "/tools/migration/scan", s.scanMigration)
	s.private(api, "POST", "/tools/migration/import", s.importMigration)
}

func (s *Server) scanMigration(w http.ResponseWriter, r *http.Request) error {
	counts := true
	switch r.URL.Query().Get("counts") {
	case "", "true", "1":
	case "false", "0":
		counts = false
	default:
		return core.InvalidField("counts", "Must be true or false.")
	}
	list, err := s.Migration.Scan(r.Context(), counts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"sources": list})
	return nil
}

func (s *Server) importMigration(w http.ResponseWriter, r *http.Request) error {
	return RespondBody(s.decodeJSON, w, r, s.Migration.Import)
}
