package gateway

import (
	"context"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// DefaultOptions are the options the composition root would pass for the
// default configuration, over svc: for tests that build a Server alone.
// Its pins know no chain: tests whose answers need one set their own.
func DefaultOptions(svc *service.Service) Options {
	c := config.Default()
	pins, _ := block.New(nil, block.HeadAges{}) // no chain: nothing to refuse
	return Options{
		Service: svc, Pins: pins, RequestTimeout: c.RequestTimeout.D(), StrikesTTL: c.StrikesTTL.D(),
		HistoryTTL: c.HistoryTTL.D(), PrepareTTL: c.PrepareTTL.D(), CacheMaxEntries: c.CacheMaxEntries,
		CacheMaxBytes: c.CacheMaxBytes, StaleGrace: c.StaleGrace.D(), MaxFills: c.MaxFills, MaxLagBlocks: c.MaxLagBlocks,
	}
}

// PathExample is the path of the tests' example operation.
const PathExample = "/clamm/example/swappers"

// WithExampleEndpoint adds the tests' example operation to a server's
// options: one table entry over one service method (the chain's swappers),
// and nothing else.
func WithExampleEndpoint(o *Options) {
	o.extra = append(o.extra, api[uint64]{
		path: PathExample, name: "example", operation: "exampleSwappers", params: marketsParams,
		ttl: ttlStrikes, pin: block.ChainHead, stream: notStreamed, // it reads nothing: true at the head
		parse: func(s *Server, p *params) (uint64, error) { return p.chainID(s.chains, s.opts.ServeHint) },
		key:   func(k cacheKey, chainID uint64) cacheKey { return k.uint(chainID) },
		call: func(_ context.Context, svc *service.Service, chainID uint64) (any, uint64, error) {
			return svc.Swappers(chainID), 0, nil
		},
	}.endpoint())
}
