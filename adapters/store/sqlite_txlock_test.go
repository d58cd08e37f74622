package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"gorm.io/gorm"
)

// TestSQLiteTransactionsTakeTheWriteLock runs concurrent read-then-write
// transactions: each must begin IMMEDIATE and wait for the others, never
// fail with SQLITE_BUSY on the lock upgrade.
func TestSQLiteTransactionsTakeTheWriteLock(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "x.db"), "wp_", nil)
	if err != nil {
		t.Fatal(err)
	}
	g := db.Gorm()
	if err := g.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)").Error; err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				err := g.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
					var n int64
					if err := tx.Raw("SELECT COUNT(*) FROM t").Scan(&n).Error; err != nil {
						return err
					}
					return tx.Exec("INSERT INTO t (v) VALUES (?)", n).Error
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int64
	if err := g.Raw("SELECT COUNT(*) FROM t").Scan(&n).Error; err != nil || n != 8*50 {
		t.Errorf("rows = %d, %v; want %d", n, err, 8*50)
	}
}
