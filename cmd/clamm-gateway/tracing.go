package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
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

// startTracing installs the SDK's tracer provider with the OTLP exporter
// the OTEL_* variables describe (OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf,
// the default, or grpc; endpoint, headers, timeout and TLS read by the
// exporter itself), and W3C trace context as the propagator, so a
// traceparent is taken from each request and passed to the upstreams. It
// returns the handler to serve (h in one server span per request) and the
// provider's shutdown, which flushes the spans still batched.
//
// Not contrib's autoexport: its console exporter links the SDK's tracetest
// package into the served binary, which links no test package.
func startTracing(ctx context.Context, getenv func(string) string, h http.Handler) (http.Handler, func(context.Context) error, error) {
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return nil, nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: the gateway exports traces over OTLP only (otlp, or none for off)", e)
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdktrace.SpanExporter
	var err error
	switch proto {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: http/protobuf or grpc", proto)
	}
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

// withTracing is h wrapped for tracing when the OTEL_* variables ask for it
// (startTracing), with the stop that flushes the last spans; otherwise h
// itself and a stop that does nothing.
func withTracing(ctx context.Context, getenv func(string) string, h http.Handler, logger *slog.Logger) (http.Handler, func(), error) {
	if !tracingAsked(getenv) {
		return h, func() {}, nil
	}
	traced, shutdown, err := startTracing(ctx, getenv, h)
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry (OTEL_* variables): %w", err)
	}
	logger.Info("tracing on: spans exported as the OTEL_* variables say")
	return traced, func() { _ = shutdown(context.Background()) }, nil
}
