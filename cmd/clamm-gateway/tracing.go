package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
)

// tracingAsked reads the standard OpenTelemetry variables: tracing is on
// when OTEL_TRACES_EXPORTER names an exporter (not "none") or an OTLP
// endpoint is set, and OTEL_SDK_DISABLED is not true. Off by default: then
// nothing wraps the handler, and a hit costs what it did.
func tracingAsked(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" {
		return e != "none"
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// startTracing installs the SDK's tracer provider with the OTLP exporter
// the OTEL_* variables describe (OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf,
// the default, or grpc; endpoint, headers, timeout and TLS read by the
// exporter itself), and the propagators OTEL_PROPAGATORS names (W3C trace
// context by default), so a traceparent is taken from each request and
// passed to the upstreams. It returns the handler to serve (h in one server
// span per request, serverSpans) and the provider's shutdown, which flushes
// the spans still batched until its context ends.
//
// Not contrib's autoexport: its console exporter links the SDK's tracetest
// package into the served binary, which links no test package.
func startTracing(ctx context.Context, getenv func(string) string, h http.Handler) (http.Handler, func(context.Context) error, error) {
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return nil, nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: the gateway exports traces over OTLP only (otlp, or none for off)", e)
	}
	prop, err := propagators(getenv("OTEL_PROPAGATORS"))
	if err != nil {
		return nil, nil, err
	}
	exp, err := exporter(ctx, getenv)
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithSpanLimits(spanLimits()))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(prop)
	return serverSpans{h: h, tracer: tp.Tracer("github.com/clamm-gateway/clamm-gateway"), prop: prop}, tp.Shutdown, nil
}

// exporter is the OTLP exporter of the protocol the variables name.
func exporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	}
	return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: http/protobuf or grpc", proto)
}

// propagators reads OTEL_PROPAGATORS: tracecontext and baggage, or none.
// Unset is W3C trace context alone, not the SDK's usual "tracecontext,
// baggage": a client's baggage is the client's words, and forwarding it
// sent them to the subgraph, the RPC node and 1inch. An operator whose
// upstreams should see it names baggage.
func propagators(v string) (propagation.TextMapPropagator, error) {
	if v == "" {
		return propagation.TraceContext{}, nil
	}
	var ps []propagation.TextMapPropagator
	for _, name := range strings.Split(v, ",") {
		switch strings.TrimSpace(name) {
		case "tracecontext":
			ps = append(ps, propagation.TraceContext{})
		case "baggage":
			ps = append(ps, propagation.Baggage{})
		case "none":
		default:
			return nil, fmt.Errorf("OTEL_PROPAGATORS=%q: tracecontext, baggage or none", v)
		}
	}
	return propagation.NewCompositeTextMapPropagator(ps...), nil
}

// maxAttributeChars bounds every span attribute value (OpenTelemetry's
// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT may lower it, not raise it): spans
// wait in the batch queue (2,048 by default) as long as the collector takes,
// so their size is memory a client or upstream could otherwise choose.
const maxAttributeChars = 256

// spanLimits are the SDK's limits from the OTEL_SPAN_* variables with the
// attribute values bounded by maxAttributeChars.
func spanLimits() sdktrace.SpanLimits {
	l := sdktrace.NewSpanLimits()
	if l.AttributeValueLengthLimit < 0 || l.AttributeValueLengthLimit > maxAttributeChars {
		l.AttributeValueLengthLimit = maxAttributeChars
	}
	return l
}

// serverSpans wraps each request in a server span under the trace context
// the client sent. Not otelhttp's handler: it copied the User-Agent,
// Host, X-Forwarded-For and path into attributes whole, and the SDK's
// length limit cuts a string by slicing it, which keeps all of it: 6,000
// requests with a 60 KB User-Agent and a slow collector grew the process
// from 28 MB to 770 MB. What a span keeps of the request here is bounded
// and copied (boundedCopy); the gateway's middleware names the span by its
// route and records the outcome (gateway.annotate).
type serverSpans struct {
	h      http.Handler
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

func (s serverSpans) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := s.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	method := gateway.MethodName(r.Method)
	attrs := []attribute.KeyValue{attribute.String("http.request.method", method)}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, attribute.String("user_agent.original", boundedCopy(ua)))
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		attrs = append(attrs, attribute.String("client.address", boundedCopy(host)))
	}
	ctx, span := s.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	defer span.End()
	s.h.ServeHTTP(w, r.WithContext(ctx))
}

// boundedCopy is s cut to maxAttributeChars bytes (at a rune start), in
// memory of its own.
func boundedCopy(s string) string {
	if len(s) > maxAttributeChars {
		n := maxAttributeChars
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.Clone(s)
}

// withTracing is h wrapped for tracing when the OTEL_* variables ask for it
// (startTracing), with the stop that flushes the last spans until its
// context ends (the shutdown's bound, whatever the collector does);
// otherwise h itself and a stop that does nothing. Stop is safe twice.
func withTracing(ctx context.Context, getenv func(string) string, h http.Handler, logger *slog.Logger) (http.Handler, func(context.Context), error) {
	if !tracingAsked(getenv) {
		return h, func(context.Context) {}, nil
	}
	traced, shutdown, err := startTracing(ctx, getenv, h)
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry (OTEL_* variables): %w", err)
	}
	logger.Info("tracing on: spans exported as the OTEL_* variables say")
	var once sync.Once
	return traced, func(ctx context.Context) {
		once.Do(func() {
			if err := shutdown(ctx); err != nil {
				logger.Warn("tracing: spans not all exported at shutdown", "error", secret.Scrub(err.Error()))
			}
		})
	}, nil
}
