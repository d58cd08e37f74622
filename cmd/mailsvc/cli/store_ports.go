package cli

import "github.com/mailsvc/mailsvc/adapters/store"

// The consumers whose small interface spans two of the store's services
// get them joined here.

// doctorDB is what the doctor's checks read: the schema version, the
// database's clock (the handle), the queue and the connections.
type doctorDB struct {
	*store.DB
	*store.SchemaService
	*store.LogService
	*store.ConnectionService
}

// queueMetrics is what the metrics scrape reads: the queue and the
// captured count.
type queueMetrics struct {
	*store.LogService
	*store.CaptureService
}

// thresholdStore is what the alert thresholds use: the failure count and
// the channels' threshold claims.
type thresholdStore struct {
	*store.LogService
	*store.NotificationService
}
