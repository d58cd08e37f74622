package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

var _ core.ConnectionStore = (*ConnectionService)(nil)

// connectionRow is a row of {prefix}mailsvc_connections.
type connectionRow struct {
	ID            int64          `gorm:"column:id;primaryKey;autoIncrement"`
	Name          string         `gorm:"column:name"`
	Driver        string         `gorm:"column:driver"`
	IsActive      bool           `gorm:"column:is_active"`
	Settings      string         `gorm:"column:settings"`
	HealthStatus  string         `gorm:"column:health_status"`
	OAuthStatus   string         `gorm:"column:oauth_status"`
	LastCheckedAt *time.Time     `gorm:"column:last_checked_at"`
	LastError     sql.NullString `gorm:"column:last_error"`
	CreatedAt     time.Time      `gorm:"column:created_at"`
	UpdatedAt     time.Time      `gorm:"column:updated_at"`
}

func (db *handle) connections(ctx context.Context) *gorm.DB {
	return db.gdb.WithContext(ctx).Table(db.tableName("connections"))
}

func toConnectionRow(c *core.Connection) (*connectionRow, error) {
	settings := c.Settings
	if settings == nil {
		settings = core.Settings{}
	}
	js, err := EncodeJSON(map[string]any(settings))
	if err != nil {
		return nil, fmt.Errorf("connection settings: %w", err)
	}
	health := c.HealthStatus
	if health == "" {
		health = core.HealthUnknown
	}
	return &connectionRow{
		ID:           c.ID,
		Name:         c.Name,
		Driver:       c.Driver,
		IsActive:     c.IsActive,
		Settings:     js,
		HealthStatus: health,
		OAuthStatus:  c.OAuthStatus,
	}, nil
}

func (r *connectionRow) toConnection() (*core.Connection, error) {
	v, err := DecodeJSON(r.Settings)
	if err != nil {
		return nil, fmt.Errorf("connection %d settings: %w", r.ID, err)
	}
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("connection %d settings: stored JSON is not an object", r.ID)
	}
	if m == nil {
		m = map[string]any{}
	}
	c := &core.Connection{
		ID:           r.ID,
		Name:         r.Name,
		Driver:       r.Driver,
		IsActive:     r.IsActive,
		Settings:     core.Settings(m),
		HealthStatus: r.HealthStatus,
		OAuthStatus:  r.OAuthStatus,
		LastError:    r.LastError.String,
		CreatedAt:    r.CreatedAt.UTC(),
		UpdatedAt:    r.UpdatedAt.UTC(),
	}
	if r.LastCheckedAt != nil {
		t := r.LastCheckedAt.UTC()
		c.LastCheckedAt = &t
	}
	return c, nil
}

// FindConnections returns the connections matching f ordered by id, and
// the total count matching f before Offset and Limit.
func (db *ConnectionService) FindConnections(ctx context.Context, f core.ConnectionFilter) ([]*core.Connection, int, error) {
	q := db.connections(ctx)
	if f.Driver != "" {
		q = q.Where("driver = ?", f.Driver)
	}
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("count connections: %w", err)
	}
	q = q.Order("id")
	if f.Offset > 0 {
		q = q.Offset(f.Offset)
	}
	if f.Limit > 0 {
		q = q.Limit(f.Limit)
	} else if f.Offset > 0 {
		// Both dialects accept OFFSET only after a LIMIT.
		q = q.Limit(math.MaxInt64)
	}
	var rows []connectionRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("find connections: %w", err)
	}
	out, err := ConvertRows(rows, (*connectionRow).toConnection)
	if err != nil {
		return nil, 0, err
	}
	return out, int(total), nil
}

// FindConnectionByID returns one connection or an ENOTFOUND error.
func (db *ConnectionService) FindConnectionByID(ctx context.Context, id int64) (*core.Connection, error) {
	return TakeByID(db.connections(ctx), id, "connection", "Connection %d not found.", (*connectionRow).toConnection)
}

// CreateConnection inserts c and sets its ID, CreatedAt and UpdatedAt (and
// HealthStatus to core.HealthUnknown when empty). c.ID is ignored.
func (db *ConnectionService) CreateConnection(ctx context.Context, c *core.Connection) error {
	row, err := toConnectionRow(c)
	if err != nil {
		return err
	}
	row.ID = 0
	t := now()
	row.CreatedAt, row.UpdatedAt = t, t
	if err := db.connections(ctx).Create(row).Error; err != nil {
		return fmt.Errorf("create connection: %w", err)
	}
	c.ID, c.CreatedAt, c.UpdatedAt, c.HealthStatus = row.ID, t, t, row.HealthStatus
	return nil
}

// UpdateConnection replaces the stored name, driver, is_active, settings
// and health status of c.ID and sets c.UpdatedAt; ENOTFOUND if it does not
// exist. CreatedAt is left unchanged in the database.
func (db *ConnectionService) UpdateConnection(ctx context.Context, c *core.Connection) error {
	row, err := toConnectionRow(c)
	if err != nil {
		return err
	}
	t := now()
	res := db.connections(ctx).Where("id = ?", c.ID).Updates(map[string]any{
		"name":          row.Name,
		"driver":        row.Driver,
		"is_active":     row.IsActive,
		"settings":      row.Settings,
		"health_status": row.HealthStatus,
		"oauth_status":  row.OAuthStatus,
		"updated_at":    t,
	})
	if res.Error != nil {
		return fmt.Errorf("update connection %d: %w", c.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		// MySQL counts changed rows, not matched ones: an update that
		// changes nothing also reports 0, so check the row exists.
		var n int64
		if err := db.connections(ctx).Where("id = ?", c.ID).Count(&n).Error; err != nil {
			return fmt.Errorf("update connection %d: %w", c.ID, err)
		}
		if n == 0 {
			return core.Errorf(core.ENOTFOUND, "Connection %d not found.", c.ID)
		}
	}
	c.UpdatedAt, c.HealthStatus = t, row.HealthStatus
	return nil
}

// DeleteConnections deletes the connections with the given ids in one
// transaction and returns how many existed. Repeated ids count once.
func (db *ConnectionService) DeleteConnections(ctx context.Context, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	uniq := slices.Clone(ids)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	var n int64
	err := db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Chunks keep each statement under SQLite's bound-variable limit.
		for chunk := range slices.Chunk(uniq, 500) {
			res := tx.Table(db.tableName("connections")).Where("id IN ?", chunk).Delete(&connectionRow{})
			if res.Error != nil {
				return res.Error
			}
			n += res.RowsAffected
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete connections: %w", err)
	}
	return int(n), nil
}

var _ core.ConnectionStateStore = (*ConnectionService)(nil)

// UpdateConnectionSettings implements core.ConnectionStateStore: it merges
// patch into the stored settings and sets the OAuth status in one
// transaction (the row is read under a write lock), so a rotated refresh
// token and its access token are stored together or not at all.
func (db *ConnectionService) UpdateConnectionSettings(ctx context.Context, id int64, patch core.Settings, oauthStatus string) error {
	err := db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row connectionRow
		q := tx.Table(db.tableName("connections")).Where("id = ?", id)
		if db.dialect == DialectMySQL {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Take(&row).Error; errors.Is(err, gorm.ErrRecordNotFound) {
			return core.Errorf(core.ENOTFOUND, "Connection %d not found.", id)
		} else if err != nil {
			return err
		}
		c, err := row.toConnection()
		if err != nil {
			return err
		}
		for k, v := range patch {
			if v == nil {
				delete(c.Settings, k)
			} else {
				c.Settings[k] = v
			}
		}
		js, err := EncodeJSON(map[string]any(c.Settings))
		if err != nil {
			return fmt.Errorf("connection settings: %w", err)
		}
		upd := map[string]any{"settings": js, "updated_at": now()}
		if oauthStatus != "" {
			upd["oauth_status"] = oauthStatus
		}
		return tx.Table(db.tableName("connections")).Where("id = ?", id).Updates(upd).Error
	})
	if err != nil {
		if core.ErrorCode(err) == core.ENOTFOUND {
			return err
		}
		return fmt.Errorf("update connection %d settings: %w", id, err)
	}
	return nil
}

// UpdateConnectionHealth implements core.ConnectionStateStore. It leaves
// updated_at alone: a health check is not an edit of the connection.
func (db *ConnectionService) UpdateConnectionHealth(ctx context.Context, id int64, h core.ConnectionHealth) error {
	checked := h.CheckedAt.UTC().Truncate(time.Microsecond)
	res := db.connections(ctx).Where("id = ?", id).Updates(map[string]any{
		"health_status":   h.Status,
		"last_checked_at": checked,
		"last_error":      h.Error,
	})
	if res.Error != nil {
		return fmt.Errorf("update connection %d health: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		var n int64
		if err := db.connections(ctx).Where("id = ?", id).Count(&n).Error; err != nil {
			return fmt.Errorf("update connection %d health: %w", id, err)
		}
		if n == 0 {
			return core.Errorf(core.ENOTFOUND, "Connection %d not found.", id)
		}
	}
	return nil
}
