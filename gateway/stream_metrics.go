package gateway

import (
	"github.com/prometheus/client_golang/prometheus"
	"time"
)

// lagHistogram is the fan-out lag: from a head's arrival to an event's
// write to one subscriber.
type lagHistogram struct{ h prometheus.Histogram }

func newLagHistogram() lagHistogram {
	return lagHistogram{prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "clamm_stream_fanout_lag_seconds",
		Help: "From a chain's head reaching the gateway to a stream's event for it being written to one subscriber.",
		// from a millisecond to half a minute
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	})}
}

func (l lagHistogram) observe(d time.Duration) {
	if l.h != nil {
		l.h.Observe(d.Seconds())
	}
}

// streamCollectors are what /metrics reports of streams.
func (h *streamHub) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		h.lag.h,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "clamm_stream_subscribers", Help: "Streams followed now (SSE connections and WebSocket subscriptions)."},
			func() float64 { return float64(h.subscribers()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "clamm_stream_events_sent_total", Help: "Stream events written to clients (answers, reorgs, errors)."},
			func() float64 { return float64(h.sent.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "clamm_stream_events_dropped_total", Help: "Stream events a slow client skipped: replaced by a newer one before it took them."},
			func() float64 { return float64(h.dropped.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "clamm_stream_answers_total", Help: "Answers at a block that streams computed, changed or not (an unchanged one is not sent)."},
			func() float64 { return float64(h.answered.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "clamm_stream_fills_total", Help: "Answers at a block that streams filled (one per key and block, however many follow it)."},
			func() float64 { return float64(h.fills.Load()) }),
	}
}
