// Package floodguard is the flood guard (docs/delivery.md "The flood
// guard"): one per delivery service, so one per site's store. It learns
// each source's usual hourly volume from the logs (volumes.go), counts
// what each source of each site sends in memory over the last hour
// (window.go) and each message's different recipients over minutes
// (fingerprint.go), and when a source floods it alerts once per episode
// and holds the excess (guard.go). Held mail is released or discarded by
// the filters of the log list (held.go).
package floodguard
