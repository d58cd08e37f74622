// Package apptest provides in-memory implementations of core's ports for
// unit tests of app and of the HTTP edge. They follow the ports' contracts
// (ENOTFOUND for missing rows, totals before paging) so tests exercise the
// same behaviour the real stores give.
package apptest

import (
	"context"
	"encoding/base64"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// ConnectionStore is an in-memory core.ConnectionStore.
type ConnectionStore struct {
	rowTable[core.Connection]
}

// NewConnectionStore returns an empty store.
func NewConnectionStore() *ConnectionStore {
	return &ConnectionStore{rowTable[core.Connection]{rows: map[int64]*core.Connection{}, clone: clone, notFound: "Connection %d does not exist."}}
}

func clone(c *core.Connection) *core.Connection {
	out := *c
	out.Settings = c.Settings.Clone()
	return &out
}

// FindConnections implements core.ConnectionStore.
func (s *ConnectionStore) FindConnections(_ context.Context, f core.ConnectionFilter) ([]*core.Connection, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*core.Connection
	for _, c := range s.rows {
		if f.Driver == "" || c.Driver == f.Driver {
			all = append(all, clone(c))
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	total := len(all)
	if f.Offset >= len(all) {
		return nil, total, nil
	}
	all = all[f.Offset:]
	if f.Limit > 0 && f.Limit < len(all) {
		all = all[:f.Limit]
	}
	return all, total, nil
}

// FindConnectionByID implements core.ConnectionStore.
func (s *ConnectionStore) FindConnectionByID(_ context.Context, id int64) (*core.Connection, error) {
	return s.byID(id)
}

// CreateConnection implements core.ConnectionStore.
func (s *ConnectionStore) CreateConnection(_ context.Context, c *core.Connection) error {
	s.insert(c, func(id int64, now time.Time) { c.ID, c.CreatedAt, c.UpdatedAt = id, now, now })
	return nil
}

// UpdateConnection implements core.ConnectionStore.
func (s *ConnectionStore) UpdateConnection(_ context.Context, c *core.Connection) error {
	return s.update(c.ID, func(*core.Connection) *core.Connection {
		c.UpdatedAt = time.Now().UTC()
		return clone(c)
	})
}

// DeleteConnections implements core.ConnectionStore.
func (s *ConnectionStore) DeleteConnections(_ context.Context, ids []int64) (int, error) {
	return s.deleteIDs(ids), nil
}

// Raw returns the stored row as the store holds it (secrets encrypted), for
// asserting what reaches the database.
func (s *ConnectionStore) Raw(id int64) *core.Connection { return s.raw(id) }

// SettingsStore is an in-memory core.SettingsStore.
type SettingsStore struct {
	mu     sync.Mutex
	scopes map[string]map[string]any
}

// NewSettingsStore returns an empty store.
func NewSettingsStore() *SettingsStore {
	return &SettingsStore{scopes: map[string]map[string]any{}}
}

// LoadSettings implements core.SettingsStore.
func (s *SettingsStore) LoadSettings(_ context.Context, scope string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{}
	for k, v := range s.scopes[scope] {
		out[k] = v
	}
	return out, nil
}

// SaveSettings implements core.SettingsStore.
func (s *SettingsStore) SaveSettings(_ context.Context, scope string, values map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scopes[scope] == nil {
		s.scopes[scope] = map[string]any{}
	}
	for k, v := range values {
		s.scopes[scope][k] = v
	}
	return nil
}

// Cipher is a reversible test core.Cipher: it tags values with its key so
// a Cipher with another key fails to decrypt them, as a real one would.
type Cipher struct{ Key string }

const cipherPrefix = "test-enc:"

// Encrypt implements core.Cipher.
func (c Cipher) Encrypt(plain string) (string, error) {
	return cipherPrefix + base64.StdEncoding.EncodeToString([]byte(c.Key+"|"+plain)), nil
}

// Decrypt implements core.Cipher.
func (c Cipher) Decrypt(enc string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(enc, cipherPrefix))
	if err != nil {
		return "", errors.New("corrupt ciphertext")
	}
	key, plain, ok := strings.Cut(string(raw), "|")
	if !ok || key != c.Key {
		return "", errors.New("the encryption key changed")
	}
	return plain, nil
}

// IsEncrypted implements core.Cipher.
func (c Cipher) IsEncrypted(s string) bool { return strings.HasPrefix(s, cipherPrefix) }
