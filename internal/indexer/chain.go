package indexer

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// ChainOptions are what ForChain takes from the gateway's configuration.
type ChainOptions struct {
	// Dir holds the stores, <chainId>.sqlite each (created if absent).
	Dir             string
	Range, MaxRange uint64
	// Batch is the most calls of one batch request (Options.Batch).
	Batch  int
	Poll   time.Duration
	Logger *slog.Logger
	// Redact cleans error texts of the node's URL (see Options.Redact).
	Redact func(string) string
	// HTTP is the node's HTTP client, whose transport DialNode bounds
	// (nil: one of its own).
	HTTP *http.Client
	// History is the blocks of state the store keeps (Options.History).
	History uint64
}

// ForChain opens the indexer of a configured chain: its node from the
// chain's RPC URL, its store in o.Dir, its data sources from the chain's
// index sources or, without them, the deployments registry.
func ForChain(ctx context.Context, ch *config.Chain, o ChainOptions) (*Indexer, error) {
	srcs, err := ch.Sources()
	if err != nil {
		return nil, err
	}
	var sources []mapping.Watched
	for _, s := range srcs {
		sources = append(sources, mapping.Watched{Address: s.Address, Name: s.Name, Start: s.Start})
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("CLAMM_INDEX_DIR: %w", err)
	}
	var base http.RoundTripper
	if o.HTTP != nil {
		base = o.HTTP.Transport
	}
	rc, err := DialNode(ctx, ch.RPCURL, base, 0)
	if err != nil {
		return nil, fmt.Errorf("rpc %s: %w", secret.URL(ch.RPCURL), err)
	}
	ix, err := Open(ctx, Options{ChainID: ch.ID, RPC: rc, Path: filepath.Join(o.Dir, fmt.Sprintf("%d.sqlite", ch.ID)), Sources: sources,
		Logger: o.Logger, Range: o.Range, MaxRange: o.MaxRange, Batch: o.Batch, Poll: o.Poll, Redact: o.Redact, History: o.History})
	if err != nil {
		rc.Close()
		return nil, err
	}
	ix.closeRPC = rc.Close
	return ix, nil
}

// MaxAnswer bounds one answer of the node (a JSON-RPC batch is one), as
// the gateway's own upstream answers are bounded (upstream.DefaultMaxBody):
// geth caps a batch's answers at 25 MB, and an eth_getLogs answer past it
// is refused as a range too large (halved), a batch's split in halves.
const MaxAnswer = upstream.DefaultMaxBody

// DialNode is the indexer's client of the node at url, over base (nil: a
// pooled transport of its own) wrapped as the gateway's upstream clients
// are: every answer read through a size bound (maxAnswer; 0: MaxAnswer),
// and a 429 or 503 with Retry-After obeyed: no request is sent until it
// has run out (each fails at once with a *problem.BackoffError carrying
// the wait, which Run waits out).
func DialNode(_ context.Context, url string, base http.RoundTripper, maxAnswer int64) (*Client, error) {
	return NewClient(url, &http.Client{Transport: NodeTransport(base, maxAnswer)})
}

// NodeTransport is DialNode's transport: base (nil: a pooled transport of
// its own) under the back-off gate and the answer bound. It is exported so
// that a test can watch requests on both sides of the gate (S8: what was
// asked after a 429 was seen, and what of it was sent).
func NodeTransport(base http.RoundTripper, maxAnswer int64) http.RoundTripper {
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 8 // the ranges fetched ahead and the one applied
		base = t
	}
	if maxAnswer <= 0 {
		maxAnswer = MaxAnswer
	}
	return upstream.Transport(upstream.RPC, base, upstream.Options{MaxBody: maxAnswer})
}
