// Package metrics holds the gateway's Prometheus collectors on a registry
// of its own. Labels are route templates, status codes, cache results,
// upstream kinds and chain ids: never raw paths, addresses or anything a
// client typed, so the number of series stays bounded.
package metrics

import (
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
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
	shared         atomic.Pointer[func() SharedCacheStats]
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
	}
	m.reg.MustRegister(m.requests, m.latency, m.cacheResults, m.upstreamCalls, m.upstreamErrors, m.upstreamTime, m.lag, sharedCollector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// BuildInfo registers clamm_build_info, always 1, whose labels say which
// release and commit serve and which Go built them: a dashboard joins it
// to see what a change of behaviour came with. Called once, at start.
func (m *Metrics) BuildInfo(version, commit string) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "clamm_build_info",
		Help: "The serving build: its semantic version, commit and Go version (always 1)."}, []string{"version", "commit", "goversion"})
	g.WithLabelValues(version, commit, runtime.Version()).Set(1)
	m.reg.MustRegister(g)
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Route is one route template's request collectors, resolved once when
// the route is set up: recording a request then hashes no labels and takes
// no lock, it loads one child pointer per label set and adds atomically.
type Route struct {
	template string
	requests *prometheus.CounterVec
	latency  prometheus.Observer
	results  *prometheus.CounterVec
	// Children are made on first use, so a route shows only the statuses
	// and cache results it has answered with. byStatus has a few slots,
	// each claimed by the first status that needs one, rather than one per
	// possible status: a thousand pointers a route were half a megabyte
	// that every garbage collection scanned, for a route that answers with
	// a handful. Statuses past the slots are counted through the vector
	// (a label hash and a lock: the same child, only slower).
	byStatus [statusSlots]statusChild
	byResult [len(cacheResults)]atomic.Pointer[counter]
}

// statusSlots is how many statuses a route records without hashing labels.
const statusSlots = 16

// statusChild is a status (0: slot free) and its child.
type statusChild struct {
	status atomic.Int32
	c      atomic.Pointer[counter]
}

type counter struct{ prometheus.Counter }

// Route returns the collectors of one route template (never a raw path).
// A nil Metrics returns a nil Route, whose Request does nothing.
func (m *Metrics) Route(template string) *Route {
	if m == nil {
		return nil
	}
	return &Route{template: template, requests: m.requests, latency: m.latency.WithLabelValues(template), results: m.cacheResults}
}

// cacheResults are the values of the cache-result label.
var cacheResults = [...]string{"HIT", "MISS", "STALE"}

// child stores and returns vec's child for labels in p: called on a
// route's first use of a status or result (a racing first request stores
// the same child).
func child(p *atomic.Pointer[counter], vec *prometheus.CounterVec, labels ...string) *counter {
	c := &counter{vec.WithLabelValues(labels...)}
	p.Store(c)
	return c
}

// Request records one answered request: its status (100-999, as net/http
// allows), latency and cache result ("" when the cache was not asked).
func (r *Route) Request(status int, d time.Duration, cacheResult string) {
	if r == nil {
		return
	}
	if status == 0 {
		status = http.StatusOK // nothing written: net/http sends 200
	}
	r.statusCounter(status).Inc()
	r.latency.Observe(d.Seconds())
	for i, res := range cacheResults {
		if res == cacheResult {
			c := r.byResult[i].Load()
			if c == nil {
				c = child(&r.byResult[i], r.results, r.template, res)
			}
			c.Inc()
		}
	}
}

// statusCounter is the route's child for status: its slot's, a slot
// claimed for it, or the vector's when every slot is taken (or the slot's
// first request is still storing the child it made).
func (r *Route) statusCounter(status int) prometheus.Counter {
	if status > 0 && status < 1000 {
		for i := range r.byStatus {
			sl := &r.byStatus[i]
			s := int(sl.status.Load())
			if s == 0 && sl.status.CompareAndSwap(0, int32(status)) {
				return child(&sl.c, r.requests, r.template, strconv.Itoa(status))
			}
			if s == 0 {
				s = int(sl.status.Load()) // claimed by a racing request
			}
			if s != status {
				continue
			}
			if c := sl.c.Load(); c != nil {
				return c
			}
			break
		}
	}
	return r.requests.WithLabelValues(r.template, strconv.Itoa(status))
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

// SharedCacheStats is what the response cache's shared tier (Redis) has
// done, read at each scrape.
type SharedCacheStats struct {
	Hits, StaleHits, Waits, Leases, Undecodable, Fallbacks int64 // the cache's view
	Errors, Skipped                                        int64 // Redis commands failed; calls skipped while backing off
	Degraded                                               bool
}

// SharedCache makes /metrics report the shared tier through read, called
// once per scrape; without it no shared-tier series appear.
func (m *Metrics) SharedCache(read func() SharedCacheStats) {
	m.shared.Store(&read)
}

var (
	sharedResultsDesc = prometheus.NewDesc("clamm_cache_shared_results_total",
		"What local cache misses got from the shared tier: hit, stale (served while one replica refreshes), wait (for another replica's fill lease), lease (filled holding it), undecodable (a record treated as a miss), fallback (tier failed; filled alone).", []string{"result"}, nil)
	sharedErrorsDesc = prometheus.NewDesc("clamm_cache_shared_errors_total",
		"Shared-tier (Redis) commands that failed: timeouts, refusals, out of memory.", nil, nil)
	sharedSkippedDesc = prometheus.NewDesc("clamm_cache_shared_skipped_total",
		"Shared-tier calls skipped while the tier backed off after a failure.", nil, nil)
	sharedDegradedDesc = prometheus.NewDesc("clamm_cache_shared_degraded",
		"1 while the shared tier backs off after a failure (the gateway answers from its local cache and upstreams).", nil, nil)
)

// sharedCollector reports the shared tier when one is set. It describes
// nothing up front (an unchecked collector): its series exist only with a
// tier.
type sharedCollector struct{ m *Metrics }

func (sharedCollector) Describe(chan<- *prometheus.Desc) {}

func (c sharedCollector) Collect(ch chan<- prometheus.Metric) {
	read := c.m.shared.Load()
	if read == nil {
		return
	}
	s := (*read)()
	for _, r := range []struct {
		name string
		n    int64
	}{{"hit", s.Hits}, {"stale", s.StaleHits}, {"wait", s.Waits}, {"lease", s.Leases}, {"undecodable", s.Undecodable}, {"fallback", s.Fallbacks}} {
		ch <- prometheus.MustNewConstMetric(sharedResultsDesc, prometheus.CounterValue, float64(r.n), r.name)
	}
	ch <- prometheus.MustNewConstMetric(sharedErrorsDesc, prometheus.CounterValue, float64(s.Errors))
	ch <- prometheus.MustNewConstMetric(sharedSkippedDesc, prometheus.CounterValue, float64(s.Skipped))
	degraded := 0.0
	if s.Degraded {
		degraded = 1
	}
	ch <- prometheus.MustNewConstMetric(sharedDegradedDesc, prometheus.GaugeValue, degraded)
}

// Register adds a collector of another package (the embedded indexer's)
// to the registry /metrics serves.
func (m *Metrics) Register(c prometheus.Collector) error { return m.reg.Register(c) }
