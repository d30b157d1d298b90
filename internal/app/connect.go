package app

import (
	"context"
	"fmt"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
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
	// MaxBody bounds every upstream answer (0: DefaultMaxBody).
	MaxBody int64
	// Budget bounds the memory all upstream answers hold at once; share
	// one across chains (nil: a budget of replay.DefaultBudget for this
	// chain alone).
	Budget *replay.Budget
	// MaxConnsPerHost sizes the idle connection pool of each upstream
	// reached over the network: the gateway's bound on concurrent fills
	// (0: 64).
	MaxConnsPerHost int
	// Metrics, if set, counts and times every upstream round trip by kind.
	Metrics *metrics.Metrics
}

// DefaultMaxBody bounds an upstream answer: a page of 1000 strikes is
// about 1 MiB.
const DefaultMaxBody = 32 << 20

// connect builds a chain's subgraph client, chain reader and quoters from
// its configured URLs over tr (nil fields: the network). Nothing is dialled
// yet: HTTP clients connect on first use.
func connect(ch *config.Chain, tr Transports, o connectOptions) (*service.Upstreams, error) {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = 64
	}
	// The network, where tr does not replace it: a transport of its own
	// per upstream, its idle pool sized for the fill bound.
	for _, rt := range []*http.RoundTripper{&tr.Subgraph, &tr.RPC, &tr.Quote} {
		if *rt == nil {
			*rt = pooledTransport(o.MaxConnsPerHost)
		}
	}
	if o.Budget == nil {
		o.Budget = replay.NewBudget(replay.DefaultBudget)
	}
	wrap := func(kind string, rt http.RoundTripper) http.RoundTripper {
		if o.Metrics != nil {
			rt = o.Metrics.Transport(kind, rt)
		}
		if kind != "quote" {
			// The subgraph's and the node's refusals are honoured here
			// (Retry-After passed on, no calls until it runs out); the 1inch
			// client reads its own 429 as QUOTE_RATE_LIMITED.
			rt = &replay.BackoffTransport{RT: rt}
		}
		return traced(kind, limitTransport{rt: rt, max: o.MaxBody, budget: o.Budget})
	}
	sub := &http.Client{Transport: wrap("subgraph", tr.Subgraph)}
	rpcHTTP := &http.Client{Transport: wrap("rpc", tr.RPC)}
	quoteHTTP := &http.Client{Transport: wrap("quote", tr.Quote)}
	rc, err := rpc.DialOptions(context.Background(), ch.RPCURL, rpc.WithHTTPClient(rpcHTTP))
	if err != nil {
		return nil, fmt.Errorf("chain %d rpc %s: %w", ch.ID, config.Redact(ch.RPCURL), err)
	}
	reader := chain.NewReader(rc, chain.Options{Multicall3: ch.Multicall3, CallTimeout: o.UpstreamTimeout, ImmutablesTTL: o.ImmutablesTTL})
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	quoters := map[string]swap.Quoter{}
	for id, sw := range ch.Swappers {
		switch sw.Kind {
		case "uniswap-v3":
			quoters[id] = &swap.UniV3{RPC: rc, Quoter: sw.Quoter, Timeout: o.UpstreamTimeout}
		case "1inch":
			key := ""
			if sw.APIKeyEnv != "" {
				key = o.Getenv(sw.APIKeyEnv)
			}
			quoters[id] = &swap.OneInch{BaseURL: sw.APIBaseURL, APIKey: key, ChainID: ch.ID,
				HTTP: quoteHTTP, Timeout: o.UpstreamTimeout}
		}
	}
	sg := subgraph.New(ch.SubgraphURL, subgraph.Options{HTTPClient: sub, Docs: o.Queries, Timeout: o.UpstreamTimeout, MaxBytes: o.MaxBody})
	return &service.Upstreams{
		Config:    ch,
		Subgraph:  sg,
		Chain:     reader,
		Positions: reader,
		Strikes:   reader,
		Hooks:     reader,
		Quoters:   quoters,
		Head:      reader,
		Meta:      sg,
	}, nil
}

// traced makes one client span per upstream call, named by the upstream,
// and passes the request's trace context on. With tracing off the global
// provider and propagator are no-ops: nothing is recorded or sent (and
// this runs on misses only).
func traced(kind string, rt http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(rt, otelhttp.WithSpanNameFormatter(func(string, *http.Request) string { return kind }))
}
