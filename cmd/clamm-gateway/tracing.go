package main

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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

// startTracing installs the SDK's tracer provider with the exporter the
// OTEL_* variables choose (autoexport: OTLP over HTTP or gRPC, console),
// and W3C trace context as the propagator, so a traceparent is taken from
// each request and passed to the upstreams. It returns the handler to
// serve (h in one server span per request) and the provider's shutdown,
// which flushes the spans still batched.
func startTracing(ctx context.Context, h http.Handler) (http.Handler, func(context.Context) error, error) {
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	// The gateway names the span by its route once it is known
	// (gateway's middleware); until then, by method.
	return otelhttp.NewHandler(h, "request", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method })), tp.Shutdown, nil
}
