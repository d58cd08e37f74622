package metrics

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// SiteLabel is the label a fleet puts on every series of a site.
const SiteLabel = "site"

// Fleet holds the metrics of one process serving several sites: the Go
// runtime and process collectors once, and each site's series (Site)
// labelled with SiteLabel.
type Fleet struct {
	reg *prometheus.Registry
}

// NewFleet returns an empty fleet registry.
func NewFleet() *Fleet {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Fleet{reg: reg}
}

// Site returns the Registry of the site named site: its delivery and
// queue metrics, registered in the fleet with site=<site>. Its Handler
// serves the whole fleet's metrics.
func (f *Fleet) Site(site string, queue QueueReader, logger *slog.Logger) *Registry {
	return newRegistry(prometheus.WrapRegistererWith(prometheus.Labels{SiteLabel: site}, f.reg), f.reg, queue, logger)
}

// Handler serves every site's metrics in the Prometheus text format (or
// OpenMetrics when the scraper asks for it). It does no access control.
func (f *Fleet) Handler() http.Handler {
	return promhttp.HandlerFor(f.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Gatherer returns the underlying registry, for tests.
func (f *Fleet) Gatherer() prometheus.Gatherer { return f.reg }
