package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
	"github.com/clamm-gateway/clamm-gateway/queries"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// connectOptions tune the clients connect builds.
type connectOptions struct {
	// Getenv reads secrets named in configuration (the 1inch API key).
	Getenv          func(string) string
	UpstreamTimeout time.Duration
	ImmutablesTTL   time.Duration
	Queries         queries.Set
	// Upstream are the bounds every upstream transport enforces.
	Upstream upstream.Options
}

// connect builds a chain's subgraph client, chain reader and quoters from
// its configured URLs over tr (nil fields: the network), each transport
// stacked by upstream.For, and returns them as the service's upstreams and
// the pins' sources. Nothing is dialled yet: HTTP clients connect on first
// use.
func connect(ch *config.Chain, tr upstream.Transports, o connectOptions) (*vocab.Upstreams, block.Sources, error) {
	tr = upstream.For(tr, o.Upstream)
	// traced: a span per upstream call when tracing is on (otelhttp's
	// client side, which also sends the request's traceparent on).
	sub := &http.Client{Transport: traced("subgraph", tr.Subgraph)}
	rpcHTTP := &http.Client{Transport: traced("rpc", tr.RPC)}
	quoteHTTP := &http.Client{Transport: traced("quote", tr.Quote)}
	rc, err := rpc.DialOptions(context.Background(), ch.RPCURL, rpc.WithHTTPClient(rpcHTTP))
	if err != nil {
		return nil, block.Sources{}, fmt.Errorf("chain %d rpc %s: %w", ch.ID, secret.URL(ch.RPCURL), err)
	}
	reader, err := chain.NewReader(rc, chain.Options{Multicall3: ch.Multicall3, CallTimeout: o.UpstreamTimeout, ImmutablesTTL: o.ImmutablesTTL, Slot0: ch.PoolSlot0})
	if err != nil {
		return nil, block.Sources{}, fmt.Errorf("chain %d: %w", ch.ID, err)
	}
	quoters, err := newQuoters(ch, rc, quoteHTTP, o)
	if err != nil {
		return nil, block.Sources{}, err
	}
	sg, err := subgraph.New(ch.SubgraphURL, subgraph.Options{HTTPClient: sub, Docs: o.Queries, Timeout: o.UpstreamTimeout, MaxBytes: o.Upstream.MaxBody})
	if err != nil {
		return nil, block.Sources{}, fmt.Errorf("chain %d: %w", ch.ID, err)
	}
	learned := &swap.Learned{RPC: rc, Timeout: o.UpstreamTimeout, QuoterByDex: quoterByDex(ch)}
	return &vocab.Upstreams{Config: ch, Chain: reader, Subgraph: sg, Quoters: quoters, Learned: learned},
		block.Sources{Indexed: sg, Headers: reader}, nil
}

// newQuoters builds a chain's configured swappers' quoters, uni-v3 quoting
// through rc, 1inch through hc.
func newQuoters(ch *config.Chain, rc swap.BatchCaller, hc *http.Client, o connectOptions) (map[string]swap.Quoter, error) {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	quoters := map[string]swap.Quoter{}
	for id, sw := range ch.Swappers {
		contracts := swap.Contracts{Address: sw.Address, ByDex: sw.ByDex}
		var (
			q   swap.Quoter
			err error
		)
		switch sw.Kind {
		case config.SwapperUniswapV3:
			q, err = swap.NewUniV3(swap.UniV3{RPC: rc, Quoter: sw.Quoter, QuoterByDex: quoterByDex(ch), Timeout: o.UpstreamTimeout, Contracts: contracts})
		case config.Swapper1inch:
			key := ""
			if sw.APIKeyEnv != "" {
				key = o.Getenv(sw.APIKeyEnv)
			}
			q, err = swap.NewOneInch(swap.OneInch{BaseURL: sw.APIBaseURL, APIKey: key, ChainID: ch.ID,
				HTTP: hc, Timeout: o.UpstreamTimeout, Contracts: contracts})
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("chain %d swapper %s: %w", ch.ID, id, err)
		}
		quoters[id] = q
	}
	return quoters, nil
}

// quoterByDex is the chain's DEX quoter registry as the uni-v3 quoters
// take it; nil when it is empty.
func quoterByDex(ch *config.Chain) map[string]common.Address {
	if len(ch.Quoters) == 0 {
		return nil
	}
	out := make(map[string]common.Address, len(ch.Quoters))
	for dex, q := range ch.Quoters {
		out[dex] = q.Address
	}
	return out
}

// traced makes one client span per upstream call, named by the upstream,
// and passes the request's trace context on. With tracing off the global
// provider and propagator are no-ops: nothing is recorded or sent (and
// this runs on misses only).
func traced(kind string, rt http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(redactedSpanURL{rt}, otelhttp.WithPropagators(globalPropagator{}),
		otelhttp.WithSpanNameFormatter(func(string, *http.Request) string { return kind }))
}

// redactedSpanURL records an upstream call's URL on its span as its scheme
// and host only (secret.URL), in place of otelhttp's url.full (the
// last value of a key is the one exported): providers put API keys in the
// path or query, and spans leave for the collector.
type redactedSpanURL struct{ rt http.RoundTripper }

func (t redactedSpanURL) RoundTrip(r *http.Request) (*http.Response, error) {
	if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
		span.SetAttributes(attribute.String("url.full", secret.URL(r.URL.String())))
	}
	return t.rt.RoundTrip(r)
}

// globalPropagator is the global propagator as it is at each call, not as
// it was when the transport was built (otelhttp's default): the app is
// built before tracing is set up, and once a propagator is set the global
// one no longer delegates to a later one, so a second start in one process
// kept the first one's propagators.
type globalPropagator struct{}

func (globalPropagator) Inject(ctx context.Context, c propagation.TextMapCarrier) {
	otel.GetTextMapPropagator().Inject(ctx, c)
}

func (globalPropagator) Extract(ctx context.Context, c propagation.TextMapCarrier) context.Context {
	return otel.GetTextMapPropagator().Extract(ctx, c)
}

func (globalPropagator) Fields() []string { return otel.GetTextMapPropagator().Fields() }
