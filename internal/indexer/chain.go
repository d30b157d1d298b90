package indexer

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
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
	// HTTP is the node's HTTP client (nil: one of its own).
	HTTP *http.Client
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
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	rc, err := rpc.DialOptions(ctx, ch.RPCURL, rpc.WithHTTPClient(hc))
	if err != nil {
		return nil, fmt.Errorf("rpc %s: %w", config.Redact(ch.RPCURL), err)
	}
	ix, err := Open(ctx, Options{ChainID: ch.ID, RPC: rc, Path: filepath.Join(o.Dir, fmt.Sprintf("%d.sqlite", ch.ID)), Sources: sources,
		Logger: o.Logger, Range: o.Range, MaxRange: o.MaxRange, Batch: o.Batch, Poll: o.Poll, Redact: o.Redact})
	if err != nil {
		rc.Close()
		return nil, err
	}
	ix.closeRPC = rc.Close
	return ix, nil
}
