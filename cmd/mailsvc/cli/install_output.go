package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/mailsvc/mailsvc/adapters/systemd"
)

// migrationMessage is the store's log line for each schema migration it
// applies.
const migrationMessage = "applied schema migration"

// migrationCounter is a log handler that counts the store's migration
// lines instead of writing them, and passes every other record on: `wp
// install` then says in one line what the migration did.
type migrationCounter struct {
	next  slog.Handler
	state *migrationCount
}

type migrationCount struct {
	mu    sync.Mutex
	steps int
}

func newMigrationCounter(next slog.Handler) *migrationCounter {
	return &migrationCounter{next: next, state: &migrationCount{}}
}

// Steps returns how many migrations were applied.
func (m *migrationCounter) Steps() int {
	m.state.mu.Lock()
	defer m.state.mu.Unlock()
	return m.state.steps
}

// Enabled implements slog.Handler.
func (m *migrationCounter) Enabled(ctx context.Context, l slog.Level) bool {
	return l == slog.LevelInfo || m.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (m *migrationCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == migrationMessage {
		m.state.mu.Lock()
		m.state.steps++
		m.state.mu.Unlock()
		return nil
	}
	if !m.next.Enabled(ctx, r.Level) {
		return nil
	}
	return m.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (m *migrationCounter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &migrationCounter{next: m.next.WithAttrs(attrs), state: m.state}
}

// WithGroup implements slog.Handler.
func (m *migrationCounter) WithGroup(name string) slog.Handler {
	return &migrationCounter{next: m.next.WithGroup(name), state: m.state}
}

// migratedLine is `wp install`'s one line about the schema.
func migratedLine(version, steps int) string {
	if steps == 0 {
		return fmt.Sprintf("Database: schema %d, up to date", version)
	}
	return fmt.Sprintf("Database: migrated to schema %d (%d steps)", version, steps)
}

// installedByPackage reports whether this binary is the package's (or
// `wp install --systemd`'s): it is systemd.Executable and a unit of the
// service exists.
func installedByPackage(exe string, units ...string) bool {
	if exe != systemd.Executable {
		return false
	}
	for _, u := range units {
		if _, err := os.Stat(u); err == nil {
			return true
		}
	}
	return false
}

// thisExecutable is the running binary's path with its links resolved,
// "" when unknown.
func thisExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		return real
	}
	return exe
}

// nextStep is `wp install`'s closing line: how to start delivering, the
// way the service was installed.
func nextStep(byPackage bool) string {
	if byPackage {
		return "WordPress now queues its mail in the shared database; start the service that delivers it with `sudo systemctl enable --now mailsvc`, then check everything with `sudo mailsvc doctor`."
	}
	return "WordPress now queues its mail in the shared database; run `mailsvc serve` with the same wp-config.php to deliver it, then check everything with `mailsvc doctor --wp-path DIR`."
}
