package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// TestReplicaHeartbeat counts the live replicas: each heartbeat counts
// itself and the others not yet expired; an expired or departed replica
// is no longer counted.
func TestReplicaHeartbeat(t *testing.T) {
	for _, tc := range []struct{ name, dsn string }{{"sqlite", testdb.SQLite(t)}, {"mysql", testdb.MySQL(t)}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := store.Open(ctx, tc.dsn, store.DefaultPrefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			steps := []struct {
				owner string
				ttl   time.Duration
				leave string
				want  int
			}{
				{owner: "a", ttl: time.Minute, want: 1},
				{owner: "b", ttl: time.Minute, want: 2},
				{owner: "a", ttl: time.Minute, want: 2}, // a renewal is not a new replica
				{owner: "c", ttl: -time.Second, want: 2},
				{owner: "a", ttl: time.Minute, leave: "b", want: 1},
			}
			for i, st := range steps {
				if st.leave != "" {
					if err := db.Leases().ReplicaLeave(ctx, st.leave); err != nil {
						t.Fatal(err)
					}
				}
				n, err := db.Leases().ReplicaHeartbeat(ctx, st.owner, st.ttl)
				if err != nil {
					t.Fatal(err)
				}
				if st.ttl < 0 {
					// c expired at once: the next heartbeat forgets it.
					continue
				}
				if n != st.want {
					t.Errorf("step %d (%s): %d live replicas, want %d", i, st.owner, n, st.want)
				}
			}
		})
	}
}
