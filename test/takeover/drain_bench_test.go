package takeover

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// bridgeDrainMessages is how many wp_mail() calls the bridge queues
// before the service starts.
const bridgeDrainMessages = 10_000

// BenchmarkBridgeDrain is the drain as a WordPress site sees it after the
// service was down: 10,000 wp_mail() calls queued by the bridge in the
// site's MariaDB database while the service is stopped, then `mailsvc
// serve` started, and the time from its start until a loopback SMTP sink
// has all 10,000. Default settings; one SMTP connection to the sink.
//
// It reports the rate from the process's start (msgs/s) and from the
// moment it serves (served-msgs/s), the CPU per message of the service
// and of the database, the RSS once the drain's memory is given back,
// and the rate at which the bridge queued (wp_mail-calls/s).
func BenchmarkBridgeDrain(b *testing.B) {
	if testing.Short() {
		b.Skip("real WordPress benchmark: not in -short mode")
	}
	site := wpsite.Install(b, wpsite.Options{Prefix: "wpdrain_"})
	dir := b.TempDir()
	if r := servicetest.Run(dir, servicetest.Environ(dir), "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		b.Fatalf("wp install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	env := servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1")
	sink := smtpsink.Start(b)

	// The connection, through the REST API as an administrator would.
	appPW := site.CreateApplicationPassword(b, site.AdminLogin, "drain benchmark")
	auth := func(req *http.Request) {
		req.SetBasicAuth(site.AdminLogin, appPW)
		req.Header.Set("X-Forwarded-Proto", "https")
	}
	setup := servicetest.StartEnv(b, dir, env)
	var conn struct{ ID int64 }
	r := servicetest.Call(b, "POST", setup.Base+"/connections", fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false}}`, sink.Host(), sink.Port()), auth)
	if r.Status != http.StatusCreated {
		b.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	r.JSON(b, &conn)
	if r := servicetest.Call(b, "PUT", setup.Base+"/settings", fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID), auth); r.Status != http.StatusOK {
		b.Fatalf("default connection: %d %s", r.Status, r.Body)
	}
	setup.Stop(b)

	// The mail comes from a shop plugin: a source the flood guard, by
	// default, only alerts on (WordPress core's own mail at this volume
	// would be held).
	shop := `<?php
function shop_send_orders( $n ) {
	for ( $i = 0; $i < $n; $i++ ) {
		if ( true !== wp_mail( 'reader' . $i . '@example.com', 'Order ' . $i . ' confirmed', "Hello,\n\nyour order $i is confirmed.\n", array( 'From: Shop <shop@example.com>' ) ) ) {
			wpsite_fail( "wp_mail() call $i returned false" );
		}
	}
}
`
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "shop-orders.php"), []byte(shop), 0o644); err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	for range b.N {
		sink.Reset()
		q0 := time.Now()
		site.PHP(b, fmt.Sprintf(`shop_send_orders( %d );`, bridgeDrainMessages))
		queued := time.Since(q0)

		t0 := time.Now()
		dbCPU0 := servicetest.DatabaseCPU(b)
		svc := servicetest.StartEnv(b, dir, env)
		served := time.Now()
		// The flood guard's alert to the administrator may come through
		// the sink too: the orders are counted by their subject.
		for want, last := bridgeDrainMessages, -1; ; {
			got, _ := sink.WaitFor(want, 20*time.Second)
			orders := 0
			for _, m := range got {
				if strings.Contains(string(m.Data), "Subject: Order ") {
					orders++
				}
			}
			if orders >= bridgeDrainMessages {
				break
			}
			if len(got) < want && orders == last {
				b.Fatalf("%d of %d orders at the sink, none more in 20 s (the service's log:\n%s)", orders, bridgeDrainMessages, svc.Stderr)
			}
			want, last = bridgeDrainMessages+len(got)-orders, orders
		}
		done := time.Now()
		cpu, dbCPU := servicetest.ProcessCPU(b, svc.Pid()), servicetest.DatabaseCPU(b)-dbCPU0
		rss, peak := servicetest.SettledMemory(b, svc.Pid())
		svc.Stop(b)

		perMsg := func(d time.Duration) float64 { return float64(d.Microseconds()) / bridgeDrainMessages }
		b.ReportMetric(bridgeDrainMessages/done.Sub(t0).Seconds(), "msgs/s")
		b.ReportMetric(bridgeDrainMessages/done.Sub(served).Seconds(), "served-msgs/s")
		b.ReportMetric(perMsg(cpu), "svc-CPU-us/msg")
		b.ReportMetric(perMsg(dbCPU), "db-CPU-us/msg")
		b.ReportMetric(float64(rss)/(1<<20), "RSS-after-MB")
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
		b.ReportMetric(bridgeDrainMessages/queued.Seconds(), "wp_mail-calls/s")
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
}
