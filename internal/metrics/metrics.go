// Package metrics holds the gateway's Prometheus collectors on a registry
// of its own. Labels are route templates, status codes, cache results,
// upstream kinds and chain ids: never raw paths, addresses or anything a
// client typed, so the number of series stays bounded.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the set of collectors.
type Metrics struct {
	reg *prometheus.Registry

	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	cacheResults   *prometheus.CounterVec
	upstreamCalls  *prometheus.CounterVec
	upstreamErrors *prometheus.CounterVec
	upstreamTime   *prometheus.HistogramVec
	lag            *prometheus.GaugeVec

	// children resolved once per label set, so the request path does not
	// hash labels or allocate.
	mu   sync.RWMutex
	reqs map[reqKey]prometheus.Counter
	lats map[string]prometheus.Observer
	hits map[reqKey]prometheus.Counter
}

type reqKey struct {
	route string
	n     int
	s     string
}

// New registers the collectors (and the Go and process collectors).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "clamm_http_requests_total",
			Help: "Requests by route template and status."}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "clamm_http_request_duration_seconds",
			Help: "Request latency by route template.", Buckets: []float64{.0005, .001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"route"}),
		cacheResults: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "clamm_cache_results_total",
			Help: "Response-cache results by route template: HIT, MISS, STALE."}, []string{"route", "result"}),
		upstreamCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "clamm_upstream_requests_total",
			Help: "HTTP round trips to upstreams by kind (subgraph, rpc, quote)."}, []string{"upstream"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "clamm_upstream_errors_total",
			Help: "Upstream round trips that failed (transport error or HTTP status >= 400) by kind."}, []string{"upstream"}),
		upstreamTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "clamm_upstream_duration_seconds",
			Help: "Upstream round-trip latency by kind.", Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"upstream"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "clamm_subgraph_lag_blocks",
			Help: "Blocks the subgraph trails the chain head, per chain, as of the last /readyz."}, []string{"chain_id"}),
		reqs: map[reqKey]prometheus.Counter{}, lats: map[string]prometheus.Observer{}, hits: map[reqKey]prometheus.Counter{},
	}
	m.reg.MustRegister(m.requests, m.latency, m.cacheResults, m.upstreamCalls, m.upstreamErrors, m.upstreamTime, m.lag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Request records one answered request. route must be a template.
func (m *Metrics) Request(route string, status int, d time.Duration, cacheResult string) {
	k := reqKey{route: route, n: status}
	m.mu.RLock()
	c, ok1 := m.reqs[k]
	o, ok2 := m.lats[route]
	m.mu.RUnlock()
	if !ok1 || !ok2 {
		m.mu.Lock()
		c = m.requests.WithLabelValues(route, strconv.Itoa(status))
		o = m.latency.WithLabelValues(route)
		m.reqs[k], m.lats[route] = c, o
		m.mu.Unlock()
	}
	c.Inc()
	o.Observe(d.Seconds())
	if cacheResult != "" {
		hk := reqKey{route: route, s: cacheResult}
		m.mu.RLock()
		h, ok := m.hits[hk]
		m.mu.RUnlock()
		if !ok {
			m.mu.Lock()
			h = m.cacheResults.WithLabelValues(route, cacheResult)
			m.hits[hk] = h
			m.mu.Unlock()
		}
		h.Inc()
	}
}

// SubgraphLag records a chain's lag from a readiness probe.
func (m *Metrics) SubgraphLag(chainID uint64, blocks uint64) {
	m.lag.WithLabelValues(strconv.FormatUint(chainID, 10)).Set(float64(blocks))
}

// Transport counts and times round trips of one upstream kind.
func (m *Metrics) Transport(upstream string, rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &instrumented{rt: rt, calls: m.upstreamCalls.WithLabelValues(upstream),
		errs: m.upstreamErrors.WithLabelValues(upstream), time: m.upstreamTime.WithLabelValues(upstream)}
}

type instrumented struct {
	rt    http.RoundTripper
	calls prometheus.Counter
	errs  prometheus.Counter
	time  prometheus.Observer
}

func (i *instrumented) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := i.rt.RoundTrip(r)
	i.calls.Inc()
	i.time.Observe(time.Since(start).Seconds())
	if err != nil || resp.StatusCode >= 400 {
		i.errs.Inc()
	}
	return resp, err
}
