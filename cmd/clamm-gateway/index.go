package main

import (
	"context"
	"log/slog"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer"
)

// openIndex opens the embedded indexer of each chain configured with an
// RPC URL and no subgraph URL: wired here, in the command, so that the
// app's other users (tests, the demo generator) do not link its wasm
// runtime and database.
func openIndex(cfg *config.Config, logger *slog.Logger) app.OpenIndex {
	return func(ctx context.Context, ch *config.Chain) (app.Index, error) {
		return indexer.ForChain(ctx, ch, indexer.ChainOptions{Dir: cfg.IndexDir, Range: cfg.IndexRange, MaxRange: cfg.IndexMaxRange, Batch: cfg.IndexBatch, History: cfg.IndexHistoryBlocks,
			Poll: cfg.IndexPoll.D(), Logger: logger, Redact: app.Secrets(cfg).Known})
	}
}
