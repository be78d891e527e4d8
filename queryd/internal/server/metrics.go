package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are queryd's Prometheus metrics, served at /metrics. They live in
// their own registry, so several servers in one process (tests) never clash.
type Metrics struct {
	registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	channels  *prometheus.HistogramVec
	cacheHits prometheus.Counter
}

// NewMetrics registers the metrics and the Go runtime's own.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queryd_requests_total",
			Help: "Tool calls by tool, transport (mcp-stdio, mcp-http, http) and outcome status.",
		}, []string{"tool", "transport", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "queryd_request_duration_seconds",
			Help:    "Time to answer a tool call, by tool.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
		channels: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "queryd_search_channel_duration_seconds",
			Help:    "Time spent in each search channel (vector, fulltext, fusion, rerank), and embedding queries (query_embedding, within vector).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"channel"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "queryd_search_cache_hits_total",
			Help: "Searches answered from the search cache.",
		}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.channels, m.cacheHits,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// CacheHit counts one search answered from the cache.
func (m *Metrics) CacheHit() { m.cacheHits.Inc() }

// ObserveChannel records the time one search channel took.
func (m *Metrics) ObserveChannel(channel string, d time.Duration) {
	m.channels.WithLabelValues(channel).Observe(d.Seconds())
}

func (m *Metrics) observe(tool, transport, status string, d time.Duration) {
	m.requests.WithLabelValues(tool, transport, status).Inc()
	m.latency.WithLabelValues(tool).Observe(d.Seconds())
}
