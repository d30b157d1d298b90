package metrics

import (
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"
)

// requests is the route's clamm_http_requests_total by status.
func requests(t *testing.T, m *Metrics, route string) map[string]float64 {
	t.Helper()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "clamm_http_requests_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["route"] == route {
				out[labels["status"]] = s.GetCounter().GetValue()
			}
		}
	}
	return out
}

// Every request is counted under its status: the statuses the route's
// slots hold, those past them, odd ones, and first requests of one
// status racing for its slot.
func TestRouteCountsEveryStatus(t *testing.T) {
	m := New()
	r := m.Route("/r")
	want := map[string]float64{}
	var wg sync.WaitGroup
	for status := 200; status < 200+2*statusSlots; status++ {
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.Request(status, time.Millisecond, "HIT")
			}()
		}
		want[strconv.Itoa(status)] = 8
	}
	wg.Wait()
	for _, status := range []int{0, 999, 1000, -1} {
		r.Request(status, time.Millisecond, "")
	}
	want["200"]++ // 0: nothing written, net/http sent 200
	want["999"], want["1000"], want["-1"] = 1, 1, 1
	got := requests(t, m, "/r")
	if len(got) != len(want) {
		t.Errorf("%d statuses counted, want %d: %v", len(got), len(want), got)
	}
	for status, n := range want {
		if got[status] != n {
			t.Errorf("status %s: %v requests, want %v", status, got[status], n)
		}
	}
}

// A gateway holds a Route per route template for its life, and every
// garbage collection scans them: a route and its children are a couple of KiB to scan,
// not a pointer per possible status.
func TestRoutesAreLightForTheCollector(t *testing.T) {
	scan := func() int64 {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	m := New()
	before := scan()
	routes := make([]*Route, 100)
	for i := range routes {
		routes[i] = m.Route("/r" + strconv.Itoa(i))
		routes[i].Request(200, time.Millisecond, "HIT")
	}
	per := (scan() - before) / int64(len(routes))
	runtime.KeepAlive(routes)
	t.Logf("%d bytes to scan a route", per)
	if per > 4096 {
		t.Errorf("a route is %d bytes to scan, want at most 4 KiB", per)
	}
}
