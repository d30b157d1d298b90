package gateway

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
)

// FollowHeads follows every chain's head feed until ctx ends: a reorg
// evicts, from this replica's cache, the answers of that chain read above
// the fork (their keys hold the block's hash, so none would be served
// for the new branch's blocks, but they would hold memory until their
// TTL). The composition root runs it beside the feeds (app.RunFeeds).
func (s *Server) FollowHeads(ctx context.Context) {
	var wg sync.WaitGroup
	for _, id := range s.opts.Pins.Chains() {
		events := s.opts.Pins.Heads(id).Subscribe(ctx)
		wg.Go(func() {
			for ev := range events {
				if ev.Kind == block.Reorg {
					s.opts.Pins.ForgetAbove(id, ev.Fork.Number)
					s.evictAbove(id, ev.Fork.Number)
				}
			}
		})
	}
	wg.Wait()
}

// evictAbove drops chainID's answers true at a block above fork.
func (s *Server) evictAbove(chainID, fork uint64) int {
	return s.responses.EvictIf(func(key string, e entry) bool {
		return e.ref.Number > fork && keyChain(key) == chainID
	})
}

// keyChain is the chain a cache key names: every key is the route's name
// then its chain id (cacheKey).
func keyChain(key string) uint64 {
	_, rest, ok := strings.Cut(key, "|")
	if !ok {
		return 0
	}
	id, _, _ := strings.Cut(rest, "|")
	n, _ := strconv.ParseUint(id, 10, 64)
	return n
}
