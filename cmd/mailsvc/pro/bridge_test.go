package pro

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/mail"
	"os"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/adapters/wordpress/wpconfig"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/delivery"
	apppro "github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// noEnv is an environment without any variable, so that only the
// constants a test gives count.
func noEnv(string) (string, bool) { return "", false }

// serveEnv is what the module's Serve needs of a starting serve, over db
// with the given constants.
func serveEnv(db *store.DB, consts *core.Constants) *cli.ServeEnv {
	return &cli.ServeEnv{Constants: consts, DB: db, Cipher: apptest.Cipher{Key: "k"}, Connections: &app.Connections{},
		Delivery: &delivery.Options{}, Privacy: &app.Privacy{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// excludedSources returns the bridge directive stored in db, as JSON, or
// "absent".
func excludedSources(t *testing.T, db *store.DB) string {
	t.Helper()
	m, err := db.Settings().LoadSettings(context.Background(), core.ScopeBridge)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := m[core.BridgeExcludedSources]
	if !ok {
		return "absent"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServeWritesBridgeDirective: as serve starts, the module writes the
// bridge's excluded sources from the stored Pro settings (a database
// upgraded from a build without the directive gets it then), and with Pro
// switched off in wp-config.php writes an empty list whatever the Pro
// settings say; switched off by the environment alone, the exclusions
// stay, as when the bridge read the constant itself.
func TestServeWritesBridgeDirective(t *testing.T) {
	for _, tt := range []struct {
		name     string
		wpconfig map[string]string
		environ  map[string]string
		pro      map[string]any
		want     string
	}{
		{"exclusions on", nil, nil, map[string]any{apppro.SettingPluginExclusions: true, apppro.SettingExcludedPlugins: []string{"keep-out", "theme:astra"}}, `["keep-out","theme:astra"]`},
		{"exclusions off", nil, nil, map[string]any{apppro.SettingPluginExclusions: false, apppro.SettingExcludedPlugins: []string{"keep-out"}}, `[]`},
		{"no Pro settings", nil, nil, nil, `[]`},
		{"Pro switched off in wp-config.php", map[string]string{"MAIL_SVC_PRO_ENABLED": "false"}, nil, map[string]any{apppro.SettingPluginExclusions: true, apppro.SettingExcludedPlugins: []string{"keep-out"}}, `[]`},
		{"Pro switched off with no", map[string]string{"MAIL_SVC_PRO_ENABLED": "no"}, nil, map[string]any{apppro.SettingPluginExclusions: true, apppro.SettingExcludedPlugins: []string{"keep-out"}}, `[]`},
		// The bridge never saw the service's environment: the stored
		// exclusions stay in force for wp_mail() (docs/pro.md).
		{"Pro switched off by the environment only", nil, map[string]string{"MAIL_SVC_PRO_ENABLED": "false"}, map[string]any{apppro.SettingPluginExclusions: true, apppro.SettingExcludedPlugins: []string{"keep-out"}}, `["keep-out"]`},
		{"wp-config.php switches Pro on over the environment", map[string]string{"MAIL_SVC_PRO_ENABLED": "true"}, map[string]string{"MAIL_SVC_PRO_ENABLED": "false"}, map[string]any{apppro.SettingPluginExclusions: true, apppro.SettingExcludedPlugins: []string{"keep-out"}}, `["keep-out"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.OpenDialect(t, "sqlite")
			if err := db.Settings().SaveSettings(ctx, core.ScopePro, tt.pro); err != nil {
				t.Fatal(err)
			}
			consts, _ := core.NewConstants(tt.wpconfig, func(name string) (string, bool) { v, ok := tt.environ[name]; return v, ok })
			if _, err := (module{}).Serve(ctx, serveEnv(db, consts)); err != nil {
				t.Fatal(err)
			}
			if got := excludedSources(t, db); got != tt.want {
				t.Errorf("excluded sources %s, want %s", got, tt.want)
			}
		})
	}
}

// TestBridgeFollowsProSettings runs the bridge in a real WordPress as the
// Pro settings and serve's start decide its directive: with the
// exclusions on (saved through the Pro settings service), mail from the
// excluded plugin goes through WordPress's own mailer (PHPMailer, to a
// local SMTP sink) and is not queued; with exclusions off, Pro switched
// off in wp-config.php (false or "Off") when serve starts, or Pro
// settings that cannot be read at start, it is queued.
func TestBridgeFollowsProSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpb_"})
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "mysql:"+site.DSN, site.Prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sink := smtpsink.Start(t)
	site.WriteContent(t, map[string]string{
		"mu-plugins/smtp-setup.php":     wpsite.PHPMailerSMTPPlugin(sink.Port(), ""),
		"plugins/keep-out/keep-out.php": "<?php\n/* Plugin Name: Keep Out */\nfunction keep_out_send( $subject ) { return wp_mail( 'reader@example.com', $subject, 'excluded body' ); }\n",
	})
	site.PHP(t, `update_option( 'active_plugins', array( 'keep-out/keep-out.php' ) ); echo 'ok';`)
	config, err := os.ReadFile(site.WPConfigPath)
	if err != nil {
		t.Fatal(err)
	}

	settings := &apppro.Settings{Store: db.Settings(), Tx: settingsTransactor{db}}
	update := func(t *testing.T, patch map[string]any) {
		t.Helper()
		if _, err := settings.Update(ctx, patch); err != nil {
			t.Fatal(err)
		}
	}
	// serveStart joins the module as serve does, with the constants of
	// wp-config.php as it reads them.
	serveStart := func(t *testing.T) {
		t.Helper()
		f, err := wpconfig.ParseFile(site.WPConfigPath, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		consts, _ := core.NewConstants(f.ConstantStrings(), noEnv)
		if _, err := (module{}).Serve(ctx, serveEnv(db, consts)); err != nil {
			t.Fatal(err)
		}
	}
	proOff := func(value string) func(t *testing.T) {
		return func(t *testing.T) {
			update(t, map[string]any{apppro.SettingPluginExclusions: true, apppro.SettingExcludedPlugins: []any{"keep-out"}})
			define := "<?php\ndefine( 'MAIL_SVC_PRO_ENABLED', " + value + " );\n"
			if err := os.WriteFile(site.WPConfigPath, []byte(strings.Replace(string(config), "<?php\n", define, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.WriteFile(site.WPConfigPath, config, 0o644) })
			serveStart(t)
		}
	}
	queued := func(t *testing.T, subject string) *core.Log {
		t.Helper()
		logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range logs {
			if l.Message.Subject == subject {
				return l
			}
		}
		return nil
	}
	received := func(subject string) int {
		n := 0
		for _, m := range sink.Messages() {
			if msg, err := mail.ReadMessage(bytes.NewReader(m.Data)); err == nil && msg.Header.Get("Subject") == subject {
				n++
			}
		}
		return n
	}

	for _, c := range []struct {
		name     string
		setup    func(t *testing.T)
		excluded bool
	}{
		{
			name: "exclusions on",
			setup: func(t *testing.T) {
				update(t, map[string]any{apppro.SettingPluginExclusions: true, apppro.SettingExcludedPlugins: []any{"keep-out"}})
			},
			excluded: true,
		},
		{
			name:  "exclusions off",
			setup: func(t *testing.T) { update(t, map[string]any{apppro.SettingPluginExclusions: false}) },
		},
		{name: "Pro switched off in wp-config.php", setup: proOff("false")},
		{name: "Pro switched off with a string", setup: proOff("'Off'")},
		{
			name: "serve starts with Pro on again",
			setup: func(t *testing.T) {
				update(t, map[string]any{apppro.SettingPluginExclusions: true})
				if err := db.Gorm().Exec("DELETE FROM " + db.TableName("settings") + " WHERE scope = 'bridge'").Error; err != nil {
					t.Fatal(err)
				}
				serveStart(t)
			},
			excluded: true,
		},
		{
			name: "Pro settings values that are not JSON",
			setup: func(t *testing.T) {
				update(t, map[string]any{apppro.SettingPluginExclusions: true})
				if err := db.Gorm().Exec("UPDATE " + db.TableName("settings") + " SET setting_value = 'keep-out' WHERE scope = 'pro' AND setting_key = 'excluded_plugins'").Error; err != nil {
					t.Fatal(err)
				}
				serveStart(t)
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.setup(t)
			subject := c.name
			if got := site.PHP(t, `echo wp_json_encode( keep_out_send( `+wpsite.PHPString(subject)+` ) );`); got != "true" {
				t.Fatalf("wp_mail() returned %s, want true", got)
			}
			l := queued(t, subject)
			if c.excluded {
				if l != nil || received(subject) != 1 {
					t.Errorf("the excluded plugin's message: queued %v, %d at the site's own SMTP server, want not queued and 1", l != nil, received(subject))
				}
				return
			}
			if l == nil || l.Source != "keep-out" || received(subject) != 0 {
				t.Errorf("the message is not queued with source keep-out (%+v), or reached the site's own SMTP server (%d)", l, received(subject))
			}
		})
	}
	if got := excludedSources(t, db); got != `[]` {
		t.Errorf("after unreadable Pro settings the directive is %s, want []", got)
	}
}

// TestConcurrentSavesLeaveTheLastDirective: Pro settings saved at the same
// time, each touching other keys, on MariaDB (where a transaction reads a
// snapshot): once all are done, the bridge directive is the one the stored
// settings decide.
func TestConcurrentSavesLeaveTheLastDirective(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenDialect(t, "mysql")
	settings := &apppro.Settings{Store: db.Settings(), Tx: settingsTransactor{db}}
	patches := []map[string]any{
		{apppro.SettingPluginExclusions: true},
		{apppro.SettingExcludedPlugins: []any{"keep-out"}},
		{apppro.SettingPluginExclusions: false},
		{apppro.SettingExcludedPlugins: []any{"keep-out", "theme:astra"}},
	}
	for round := 0; round < 10; round++ {
		errs := make(chan error, len(patches))
		for _, p := range patches {
			go func() {
				_, err := settings.Update(ctx, p)
				errs <- err
			}()
		}
		for range patches {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		stored, err := settings.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := `[]`
		if stored[apppro.SettingPluginExclusions] == true {
			b, _ := json.Marshal(stored[apppro.SettingExcludedPlugins])
			want = string(b)
		}
		if got := excludedSources(t, db); got != want {
			t.Fatalf("round %d: excluded sources %s, the stored settings (%v) decide %s", round, got, stored, want)
		}
	}
}
