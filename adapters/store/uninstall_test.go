package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	// The Pro add-on's tables too (its schema history registers itself),
	// as the shipped binary creates and uninstalls them.
	_ "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

func TestDropServiceTablesAndOptions(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dialect, dsn string) {
		ctx := context.Background()
		db, err := store.Open(ctx, dsn, "wp_", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// Another site's tables in the same database, with a prefix that
		// starts like this one's.
		other, err := store.Open(ctx, dsn, "wp_2_", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()

		// A log with an attempt, so the attempts table references a row.
		l := &core.Log{Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "s", Text: "t"}}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		claimed, err := db.Logs().ClaimLogs(ctx, "owner", 1, time.Minute)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v %d", err, len(claimed))
		}
		if n, err := db.Logs().RecordOutcomes(ctx, "owner", []core.LogOutcome{{LogID: l.ID, Status: core.StatusFailed, Attempts: 1,
			History: []core.Attempt{{LogID: l.ID, ConnectionID: 1, At: time.Now(), Outcome: core.OutcomePermanent, Error: "x"}}}}); err != nil || n != 1 {
			t.Fatalf("record outcome: %v %d", err, n)
		}

		// WordPress's tables of a network whose sites are 1 and 3, with
		// the service's and its bridge's rows and others: each site's
		// options (site 1's carry the base prefix), the network's options
		// and the users' meta. wp_2_options is another installation's
		// (prefix wp_2_, no site 2 in wp_blogs): it keeps everything.
		g := db.Gorm().WithContext(ctx)
		ours := []string{"mailsvc_version", "mail_svc_settings", "_transient_mailsvc_health", "_transient_timeout_mail_svc_x",
			"_site_transient_mailsvc_attention_network", "_site_transient_timeout_mailsvc_attention_network"}
		theirs := []string{"blogname", "mail_other", "mailsvcx", "_transient_other", "_site_transient_other"}
		rows := map[string][]string{
			"wp_options":   slices.Concat(ours, theirs),
			"wp_3_options": slices.Concat(ours, theirs),
			"wp_2_options": slices.Concat(ours, theirs),
			"wp_sitemeta":  {"mailsvc_network_thing", "_site_transient_mailsvc_attention_network", "_site_transient_timeout_mailsvc_attention_network", "site_admins", "_site_transient_other"},
			"wp_usermeta":  {"mailsvc_attention_dismissed", "mailsvc_attention_dismissed", "wp_capabilities", "mailsvcx", "session_tokens"},
		}
		for table, names := range rows {
			column := "option_name"
			if !strings.HasSuffix(table, "_options") {
				column = "meta_key"
			}
			if err := g.Exec("CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, " + column + " VARCHAR(191) NOT NULL, v TEXT NOT NULL)").Error; err != nil {
				t.Fatal(err)
			}
			for i, n := range names {
				if err := g.Exec("INSERT INTO "+table+" (id, "+column+", v) VALUES (?, ?, 'v')", i+1, n).Error; err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := g.Exec("CREATE TABLE wp_blogs (blog_id INTEGER PRIMARY KEY, path VARCHAR(100) NOT NULL)").Error; err != nil {
			t.Fatal(err)
		}
		if err := g.Exec("INSERT INTO wp_blogs (blog_id, path) VALUES (1, '/'), (3, '/site3/')").Error; err != nil {
			t.Fatal(err)
		}
		left := func(table string) []string {
			t.Helper()
			column := "option_name"
			if !strings.HasSuffix(table, "_options") {
				column = "meta_key"
			}
			var names []string
			if err := g.Raw("SELECT " + column + " FROM " + table + " ORDER BY id").Scan(&names).Error; err != nil {
				t.Fatal(err)
			}
			return names
		}
		if tables, err := db.Installation().OptionsTables(ctx); err != nil || !slices.Equal(tables, []string{"wp_3_options", "wp_options"}) {
			t.Fatalf("OptionsTables = %v (%v), want the sites' wp_3_options and wp_options", tables, err)
		}

		want, err := db.Installation().ServiceTables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantTables := []string{"wp_mailsvc_connections", "wp_mailsvc_jobs", "wp_mailsvc_leases", "wp_mailsvc_log_attempts", "wp_mailsvc_log_recipients", "wp_mailsvc_logs", "wp_mailsvc_migrations", "wp_mailsvc_notifications", "wp_mailsvc_oauth_refresh_history", "wp_mailsvc_oauth_states", "wp_mailsvc_outcome_buckets", "wp_mailsvc_routing_rules", "wp_mailsvc_send_counts", "wp_mailsvc_sender_groups", "wp_mailsvc_settings"}
		// Pro's webhook events and suppression list (Pro migrations 2 and 3).
		wantTables = append(wantTables, "wp_mailsvc_log_events", "wp_mailsvc_suppressions", "wp_mailsvc_webhook_seen")
		// The live replicas (migration 7).
		wantTables = append(wantTables, "wp_mailsvc_replicas")
		// The outcome roll-ups by source (Pro migration 4, migration 8 before).
		wantTables = append(wantTables, "wp_mailsvc_source_buckets")
		// Hour and day roll-ups (migration 11), provider event roll-ups
		// (Pro migration 3), by source (Pro migration 4).
		wantTables = append(wantTables, "wp_mailsvc_event_buckets", "wp_mailsvc_event_repeats", "wp_mailsvc_outcome_rollups", "wp_mailsvc_source_rollups")
		// Attachment bytes in binary chunks (migration 12).
		wantTables = append(wantTables, "wp_mailsvc_log_attachments")
		// The host hook outbox (migration 16).
		wantTables = append(wantTables, "wp_mailsvc_hook_events")
		// A log's further provider message ids (migration 18).
		wantTables = append(wantTables, "wp_mailsvc_log_provider_ids")
		// The email control counts (migration 19).
		wantTables = append(wantTables, "wp_mailsvc_email_control_counts")
		// The alert history (migration 20).
		wantTables = append(wantTables, "wp_mailsvc_alert_history")
		// The failure marks of the alert thresholds (migration 21).
		wantTables = append(wantTables, "wp_mailsvc_failure_marks")
		// Per-site quota usage of a multisite network (migration 23).
		wantTables = append(wantTables, "wp_mailsvc_site_quota_usage")
		// The roll-ups by site (migration 24; Pro migrations 3 and 4 now).
		wantTables = append(wantTables, "wp_mailsvc_site_rollups", "wp_mailsvc_site_event_buckets")
		// The log search's address dictionary (migration 25).
		wantTables = append(wantTables, "wp_mailsvc_search_addresses", "wp_mailsvc_search_grams", "wp_mailsvc_search_progress")
		// The Pro add-on's applied versions (adapters/pro/store).
		wantTables = append(wantTables, "wp_mailsvc_pro_migrations")
		if dialect != "sqlite" {
			// The subject's FULLTEXT side table (migration 10).
			wantTables = append(wantTables, "wp_mailsvc_log_subjects")
		}
		slices.Sort(wantTables)
		if dialect == "sqlite" {
			// The subject's FTS5 index and its shadow tables.
			for _, suffix := range []string{"", "_config", "_content", "_data", "_docsize", "_idx"} {
				wantTables = append(wantTables, "wp_mailsvc_logs_fts"+suffix)
			}
			slices.Sort(wantTables)
		}
		if !slices.Equal(want, wantTables) {
			t.Fatalf("service tables %v, want %v", want, wantTables)
		}
		deleted, err := db.Installation().DeleteServiceOptions(ctx)
		if err != nil || deleted != int64(2*len(ours)) {
			t.Fatalf("deleted %d options (%v), want %d", deleted, err, 2*len(ours))
		}
		for _, table := range []string{"wp_options", "wp_3_options"} {
			if got := left(table); !slices.Equal(got, theirs) {
				t.Errorf("%s left %v, want %v", table, got, theirs)
			}
		}
		if got := left("wp_2_options"); !slices.Equal(got, rows["wp_2_options"]) {
			t.Errorf("another installation's wp_2_options left %v, want all of %v", got, rows["wp_2_options"])
		}
		if deleted, err := db.Installation().DeleteServiceNetworkOptions(ctx); err != nil || deleted != 3 {
			t.Errorf("deleted %d network options (%v), want 3", deleted, err)
		}
		if got := left("wp_sitemeta"); !slices.Equal(got, []string{"site_admins", "_site_transient_other"}) {
			t.Errorf("network options left %v", got)
		}
		if deleted, err := db.Installation().DeleteServiceUserMeta(ctx); err != nil || deleted != 2 {
			t.Errorf("deleted %d user meta (%v), want 2", deleted, err)
		}
		if got := left("wp_usermeta"); !slices.Equal(got, []string{"wp_capabilities", "mailsvcx", "session_tokens"}) {
			t.Errorf("user meta left %v", got)
		}
		// The other installation's own uninstall: its options table alone
		// (it has no network options nor user meta of its own).
		if n, err := other.Installation().DeleteServiceOptions(ctx); err != nil || n != int64(len(ours)) {
			t.Errorf("wp_2_'s options: deleted %d (%v), want %d", n, err, len(ours))
		}
		if got := left("wp_2_options"); !slices.Equal(got, theirs) {
			t.Errorf("wp_2_options left %v, want %v", got, theirs)
		}
		for name, del := range map[string]func(context.Context) (int64, error){
			"network options": other.Installation().DeleteServiceNetworkOptions, "user meta": other.Installation().DeleteServiceUserMeta,
		} {
			if n, err := del(ctx); err != nil || n != 0 {
				t.Errorf("wp_2_'s %s: deleted %d (%v), want none", name, n, err)
			}
		}
		if got := left("wp_options"); !slices.Equal(got, theirs) {
			t.Errorf("wp_2_'s uninstall touched wp_options: %v", got)
		}

		dropped, err := db.Installation().DropServiceTables(ctx)
		slices.Sort(dropped)
		if err != nil || !slices.Equal(dropped, wantTables) {
			t.Fatalf("dropped %v (%v), want %v", dropped, err, wantTables)
		}
		if left, err := db.Installation().ServiceTables(ctx); err != nil || len(left) != 0 {
			t.Fatalf("tables left after drop: %v (%v)", left, err)
		}
		if again, err := db.Installation().DropServiceTables(ctx); err != nil || len(again) != 0 {
			t.Fatalf("second drop: %v (%v)", again, err)
		}
		// The other prefix's tables and the options table are untouched.
		if otherTables, err := other.Installation().ServiceTables(ctx); err != nil || len(otherTables) != len(wantTables) {
			t.Fatalf("other site's tables: %v (%v)", otherTables, err)
		}
		if _, _, err := other.Logs().FindLogs(ctx, core.LogFilter{}); err != nil {
			t.Fatalf("other site's store broken: %v", err)
		}
		if got := left("wp_options"); !slices.Equal(got, theirs) {
			t.Fatalf("options table after the drop: %v", got)
		}
	})
}

func TestIsMissingTable(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&mysqldriver.MySQLError{Number: 1146, Message: "Table 'wp.wp_mailsvc_logs' doesn't exist"}, true},
		{fmt.Errorf("claim: %w", &mysqldriver.MySQLError{Number: 1146, Message: "Table 'wp.wp_mailsvc_logs' doesn't exist"}), true},
		{errors.New("claim: SQL logic error: no such table: wp_mailsvc_logs (1)"), true},
		{&mysqldriver.MySQLError{Number: 1146, Message: "Table 'wp.wp_users' doesn't exist"}, false},
		{&mysqldriver.MySQLError{Number: 1213, Message: "Deadlock found"}, false},
		{errors.New("database is locked"), false},
		{nil, false},
	} {
		if got := store.IsMissingTable(tt.err); got != tt.want {
			t.Errorf("IsMissingTable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
