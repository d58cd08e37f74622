package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/core"
	"gorm.io/gorm"
)

var _ routing.RoutingStore = (*RoutingService)(nil)

// routingRuleRow is a row of {prefix}mailsvc_routing_rules; Conditions is
// a JSON array of routing.RoutingCondition.
type routingRuleRow struct {
	ID           int64     `gorm:"column:id;primaryKey;autoIncrement"`
	Name         string    `gorm:"column:name"`
	Conditions   string    `gorm:"column:conditions"`
	ConnectionID int64     `gorm:"column:connection_id"`
	Priority     int       `gorm:"column:priority"`
	IsActive     bool      `gorm:"column:is_active"`
	CreatedAt    time.Time `gorm:"column:created_at"`
	UpdatedAt    time.Time `gorm:"column:updated_at"`
}

// senderGroupRow is a row of {prefix}mailsvc_sender_groups; Members is a
// JSON array of routing.SenderGroupMember in failover order.
type senderGroupRow struct {
	Sender    string    `gorm:"column:sender;primaryKey"`
	Strategy  string    `gorm:"column:strategy"`
	Members   string    `gorm:"column:members"`
	UpdatedAt time.Time `gorm:"column:updated_at"`
}

func (db *DB) routingRules(ctx context.Context) *gorm.DB {
	return db.base.Gorm().WithContext(ctx).Table(db.base.TableName("routing_rules"))
}

func toRoutingRuleRow(r *routing.RoutingRule) (*routingRuleRow, error) {
	conds := r.Conditions
	if conds == nil {
		conds = []routing.RoutingCondition{}
	}
	b, err := json.Marshal(conds)
	if err != nil {
		return nil, fmt.Errorf("encode rule conditions: %w", err)
	}
	return &routingRuleRow{ID: r.ID, Name: r.Name, Conditions: string(b), ConnectionID: r.ConnectionID,
		Priority: r.Priority, IsActive: r.IsActive}, nil
}

func (row *routingRuleRow) toRule() (*routing.RoutingRule, error) {
	r := &routing.RoutingRule{ID: row.ID, Name: row.Name, ConnectionID: row.ConnectionID, Priority: row.Priority,
		IsActive: row.IsActive, CreatedAt: row.CreatedAt.UTC(), UpdatedAt: row.UpdatedAt.UTC()}
	if err := json.Unmarshal([]byte(row.Conditions), &r.Conditions); err != nil {
		return nil, fmt.Errorf("routing rule %d conditions: %w", row.ID, err)
	}
	if r.Conditions == nil {
		r.Conditions = []routing.RoutingCondition{}
	}
	return r, nil
}

// FindRoutingRules implements routing.RoutingStore.
func (svc *RoutingService) FindRoutingRules(ctx context.Context) ([]*routing.RoutingRule, error) {
	db := svc.db
	var rows []routingRuleRow
	if err := db.routingRules(ctx).Order("priority, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find routing rules: %w", err)
	}
	return store.ConvertRows(rows, (*routingRuleRow).toRule)
}

// FindRoutingRuleByID implements routing.RoutingStore.
func (svc *RoutingService) FindRoutingRuleByID(ctx context.Context, id int64) (*routing.RoutingRule, error) {
	return store.TakeByID(svc.db.routingRules(ctx), id, "routing rule", "Routing rule %d not found.", (*routingRuleRow).toRule)
}

// CreateRoutingRule implements routing.RoutingStore; r.ID is ignored.
func (svc *RoutingService) CreateRoutingRule(ctx context.Context, r *routing.RoutingRule) error {
	db := svc.db
	row, err := toRoutingRuleRow(r)
	if err != nil {
		return err
	}
	t := now()
	row.ID, row.CreatedAt, row.UpdatedAt = 0, t, t
	if err := db.routingRules(ctx).Create(row).Error; err != nil {
		return fmt.Errorf("create routing rule: %w", err)
	}
	r.ID, r.CreatedAt, r.UpdatedAt = row.ID, t, t
	return nil
}

// UpdateRoutingRule implements routing.RoutingStore.
func (svc *RoutingService) UpdateRoutingRule(ctx context.Context, r *routing.RoutingRule) error {
	db := svc.db
	row, err := toRoutingRuleRow(r)
	if err != nil {
		return err
	}
	t := now()
	res := db.routingRules(ctx).Where("id = ?", r.ID).Updates(map[string]any{
		"name": row.Name, "conditions": row.Conditions, "connection_id": row.ConnectionID,
		"priority": row.Priority, "is_active": row.IsActive, "updated_at": t,
	})
	if res.Error != nil {
		return fmt.Errorf("update routing rule %d: %w", r.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		if _, err := svc.FindRoutingRuleByID(ctx, r.ID); err != nil {
			return err
		}
	}
	r.UpdatedAt = t
	return nil
}

// DeleteRoutingRules implements routing.RoutingStore.
func (svc *RoutingService) DeleteRoutingRules(ctx context.Context, ids []int64) (int, error) {
	db := svc.db
	if len(ids) == 0 {
		return 0, nil
	}
	res := db.routingRules(ctx).Where("id IN ?", ids).Delete(&routingRuleRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("delete routing rules: %w", res.Error)
	}
	return int(res.RowsAffected), nil
}

// SetRoutingRulesActive implements routing.RoutingStore. It counts the rules
// that exist, changed or not.
func (svc *RoutingService) SetRoutingRulesActive(ctx context.Context, ids []int64, active bool) (int, error) {
	db := svc.db
	if len(ids) == 0 {
		return 0, nil
	}
	var n int64
	err := db.base.Gorm().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t := tx.Table(db.base.TableName("routing_rules"))
		if err := t.Where("id IN ?", ids).Count(&n).Error; err != nil {
			return err
		}
		return tx.Table(db.base.TableName("routing_rules")).Where("id IN ?", ids).
			Updates(map[string]any{"is_active": active, "updated_at": now()}).Error
	})
	if err != nil {
		return 0, fmt.Errorf("set routing rules active=%v: %w", active, err)
	}
	return int(n), nil
}

// ReorderRoutingRules implements routing.RoutingStore.
func (svc *RoutingService) ReorderRoutingRules(ctx context.Context, ids []int64) error {
	db := svc.db
	err := db.base.Gorm().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t := now()
		for i, id := range ids {
			res := tx.Table(db.base.TableName("routing_rules")).Where("id = ?", id).
				Updates(map[string]any{"priority": i + 1, "updated_at": t})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return core.Errorf(core.ENOTFOUND, "Routing rule %d not found.", id)
			}
		}
		return nil
	})
	if core.ErrorCode(err) == core.ENOTFOUND {
		return err
	} else if err != nil {
		return fmt.Errorf("reorder routing rules: %w", err)
	}
	return nil
}

// FindSenderGroups implements routing.RoutingStore.
func (svc *RoutingService) FindSenderGroups(ctx context.Context) ([]*routing.SenderGroup, error) {
	db := svc.db
	var rows []senderGroupRow
	if err := db.base.Gorm().WithContext(ctx).Table(db.base.TableName("sender_groups")).Order("sender").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find sender groups: %w", err)
	}
	out := make([]*routing.SenderGroup, 0, len(rows))
	for _, row := range rows {
		g := &routing.SenderGroup{Sender: row.Sender, Strategy: row.Strategy, UpdatedAt: row.UpdatedAt.UTC()}
		if err := json.Unmarshal([]byte(row.Members), &g.Members); err != nil {
			return nil, fmt.Errorf("sender group %s members: %w", row.Sender, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// SaveSenderGroup implements routing.RoutingStore.
func (svc *RoutingService) SaveSenderGroup(ctx context.Context, g *routing.SenderGroup) error {
	db := svc.db
	members := g.Members
	if members == nil {
		members = []routing.SenderGroupMember{}
	}
	b, err := json.Marshal(members)
	if err != nil {
		return fmt.Errorf("encode sender group members: %w", err)
	}
	row := senderGroupRow{Sender: strings.ToLower(g.Sender), Strategy: g.Strategy, Members: string(b), UpdatedAt: now()}
	err = db.base.Gorm().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t := tx.Table(db.base.TableName("sender_groups"))
		if err := t.Where("sender = ?", row.Sender).Delete(&senderGroupRow{}).Error; err != nil {
			return err
		}
		return tx.Table(db.base.TableName("sender_groups")).Create(&row).Error
	})
	if err != nil {
		return fmt.Errorf("save sender group %s: %w", row.Sender, err)
	}
	g.Sender, g.UpdatedAt = row.Sender, row.UpdatedAt
	return nil
}

// ReserveSend implements routing.RoutingStore: the counter row is created
// if missing, then one conditional UPDATE adds to it, so concurrent
// reservations (other workers, other replicas) never pass the limit.
func (svc *RoutingService) ReserveSend(ctx context.Context, connID int64, day string, limit int64) (bool, error) {
	db := svc.db
	insert := `INSERT IGNORE INTO {prefix}mailsvc_send_counts (connection_id, day, sent) VALUES (?, ?, 0)`
	if db.base.Dialect() == store.DialectSQLite {
		insert = `INSERT OR IGNORE INTO {prefix}mailsvc_send_counts (connection_id, day, sent) VALUES (?, ?, 0)`
	}
	if _, err := db.base.SQL().ExecContext(ctx, db.base.Expand(insert), connID, day); err != nil {
		return false, fmt.Errorf("reserve a send of connection %d on %s: %w", connID, day, err)
	}
	res, err := db.base.SQL().ExecContext(ctx, db.base.Expand(`UPDATE {prefix}mailsvc_send_counts SET sent = sent + 1
		WHERE day = ? AND connection_id = ? AND (? = 0 OR sent < ?)`), day, connID, limit, limit)
	if err != nil {
		return false, fmt.Errorf("reserve a send of connection %d on %s: %w", connID, day, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("reserve a send of connection %d on %s: %w", connID, day, err)
	}
	return n == 1, nil
}

// SendCounts implements routing.RoutingStore.
func (svc *RoutingService) SendCounts(ctx context.Context, day string) (map[int64]int64, error) {
	db := svc.db
	rows, err := db.base.SQL().QueryContext(ctx, db.base.Expand(`SELECT connection_id, sent FROM {prefix}mailsvc_send_counts WHERE day = ?`), day)
	if err != nil {
		return nil, fmt.Errorf("read the send counts of %s: %w", day, err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("read the send counts of %s: %w", day, err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the send counts of %s: %w", day, err)
	}
	return out, nil
}
