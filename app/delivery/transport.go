package delivery

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// transportCache keeps one transport per connection id, rebuilt when the
// connection's UpdatedAt changes, so SMTP sessions are reused.
type transportCache struct {
	env core.DriverEnv
	mu  sync.Mutex
	m   map[int64]cachedTransport
}

type cachedTransport struct {
	updated time.Time
	tr      core.Transport
}

func (c *transportCache) get(conn *core.Connection) (core.Transport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ct, ok := c.m[conn.ID]; ok && ct.updated.Equal(conn.UpdatedAt) {
		return ct.tr, nil
	}
	if conn.SettingsError != "" {
		return nil, core.Permanent(fmt.Errorf("connection %d: %s", conn.ID, conn.SettingsError))
	}
	d, ok := core.LookupDriver(conn.Driver)
	if !ok {
		return nil, core.Permanent(fmt.Errorf("connection %d: unknown driver %q", conn.ID, conn.Driver))
	}
	tr, err := d.New(conn, c.env)
	if err != nil {
		return nil, core.Permanent(fmt.Errorf("connection %d: build %s transport: %w", conn.ID, conn.Driver, err))
	}
	if c.m == nil {
		c.m = map[int64]cachedTransport{}
	}
	if old, ok := c.m[conn.ID]; ok {
		closeTransport(old.tr)
	}
	c.m[conn.ID] = cachedTransport{updated: conn.UpdatedAt, tr: tr}
	return tr, nil
}

func (c *transportCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ct := range c.m {
		closeTransport(ct.tr)
		delete(c.m, id)
	}
}

func closeTransport(tr core.Transport) {
	if cl, ok := tr.(io.Closer); ok {
		_ = cl.Close()
	}
}
