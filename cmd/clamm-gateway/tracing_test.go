package main

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it decodes each
// export request as a collector would and keeps the spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			if v := a.Value.GetStringValue(); v != "" {
				return v
			}
			if a.Value.GetIntValue() != 0 {
				return strconv.FormatInt(a.Value.GetIntValue(), 10)
			}
		}
	}
	return ""
}

// With the OTEL_* variables set, each request is one trace: a server span
// named by the route with its chain, cache outcome and status, under the
// trace id the client sent (W3C traceparent), and a child span per
// upstream call its miss made, passed the same trace context.
func TestTracesReachAnOTLPReceiver(t *testing.T) {
	recv := &otlpReceiver{}
	col := httptest.NewServer(recv)
	defer col.Close()
	env := map[string]string{
		"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL, "OTEL_BSP_SCHEDULE_DELAY": "50",
	}
	for k, v := range env {
		t.Setenv(k, v) // autoexport reads the process environment
	}
	base, _, stderr, stop := start(t, env)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest(http.MethodGet, base+"/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=10&putsReach=10", nil)
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	hit, err := http.Get(base + "/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=10&putsReach=10")
	if err != nil {
		t.Fatal(err)
	}
	hit.Body.Close()
	stop() // flushes the batched spans
	recv.mu.Lock()
	defer recv.mu.Unlock()
	var server *tracepb.Span
	traces := map[string]int{}
	for _, s := range recv.spans {
		if s.Kind == tracepb.Span_SPAN_KIND_SERVER {
			traces[hex.EncodeToString(s.TraceId)]++
			if hex.EncodeToString(s.TraceId) == traceID {
				server = s
			}
		}
	}
	if server == nil || len(traces) != 2 || traces[traceID] != 1 {
		t.Fatalf("server spans by trace %v, want one under the client's trace id and one more for the hit (%d spans)\n%s", traces, len(recv.spans), stderr)
	}
	if server.Name != "GET /clamm/strikes-chain" || attr(server, "clamm.chain_id") != "42161" || attr(server, "clamm.cache") != "MISS" || attr(server, "http.response.status_code") != "200" {
		t.Errorf("server span %s %v", server.Name, server.Attributes)
	}
	children := map[string]int{}
	for _, s := range recv.spans {
		if hex.EncodeToString(s.TraceId) == traceID && s.Kind == tracepb.Span_SPAN_KIND_CLIENT {
			children[s.Name]++
		}
	}
	t.Logf("%d spans; the request's upstream child spans %v", len(recv.spans), children)
	if children["subgraph"] == 0 || children["rpc"] == 0 {
		t.Errorf("upstream child spans %v, want subgraph and rpc", children)
	}
}
