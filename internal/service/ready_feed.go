package service

import (
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// HeadFeeds are the chains' head feeds as readiness reads them
// (block.Pins): whether a feed publishes a chain's heads now, and the
// heads it published.
type HeadFeeds interface {
	Feeding(chainID uint64) bool
	Heads(chainID uint64) *block.Heads
}

// MinStallAfter is the shortest stall bound of a head feed (StallAfter):
// one slow `_meta` or a node that blinks does not take a replica out of
// its load balancer.
const MinStallAfter = 30 * time.Second

// StallAfter is how long a head feed that confirms its head every period
// (the poller of a Graph Node chain: CLAMM_HEAD_POLL; the embedded
// indexer: CLAMM_INDEX_POLL, once synced) may stay silent before
// readiness calls it stalled: ten periods, and at least MinStallAfter.
// Both feeds confirm an unchanged head each round, so a quiet chain is
// not a stalled feed; only an upstream that stops answering (or a feed
// that stopped) is.
func StallAfter(period time.Duration) time.Duration {
	return max(10*period, MinStallAfter)
}

// headFeeds is what ReadHeads set.
type headFeeds struct {
	src        HeadFeeds
	stallAfter func(chainID uint64) time.Duration
	now        func() time.Time
}

// ReadHeads makes readiness read each chain's running head feed: /readyz
// reports the feed's latest head (number, hash, age), and a feed silent
// for longer than stallAfter(chainID) makes the chain not ready with
// HEAD_FEED_STALLED. On a chain the gateway indexes itself the feed's head
// is the chain head, and the node's eth_blockNumber is not asked; on a
// Graph Node chain the feed is the subgraph's _meta head, so the node is
// still asked, for the subgraph's lag behind it. A chain without a feed (streams off and
// no embedded index), or whose feed has published nothing yet, is
// probed as before. now is the clock ages are read on (nil: time.Now);
// call before serving.
func (s *Service) ReadHeads(src HeadFeeds, stallAfter func(chainID uint64) time.Duration, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.feeds = headFeeds{src: src, stallAfter: stallAfter, now: now}
}

// FeedReadiness is a chain's head feed as /readyz shows it.
type FeedReadiness struct {
	Block uint64 `json:"block"`
	Hash  string `json:"hash"`
	// AgeMs is how long ago the feed last confirmed its head.
	AgeMs int64 `json:"ageMs"`
	// StallAfterMs is the age past which the feed is stalled.
	StallAfterMs int64 `json:"stallAfterMs"`
	Stalled      bool  `json:"stalled"`
}

// feedOf is chainID's head feed now, nil when the chain has none running
// or it has published no head yet.
func (f headFeeds) feedOf(chainID uint64) *FeedReadiness {
	if f.src == nil || !f.src.Feeding(chainID) {
		return nil
	}
	h := f.src.Heads(chainID)
	if h == nil {
		return nil
	}
	head, at, ok := h.Latest()
	if !ok {
		return nil
	}
	age, bound := f.now().Sub(at), f.stallAfter(chainID)
	return &FeedReadiness{Block: head.Number, Hash: head.Hash, AgeMs: age.Milliseconds(),
		StallAfterMs: bound.Milliseconds(), Stalled: age > bound}
}

// fed reports feed, naming a stall; an embedded index's feed (isHead) is
// also the chain head readiness states.
func (r *ChainReadiness) fed(feed *FeedReadiness, isHead bool) {
	r.HeadFeed = feed
	if isHead {
		r.ChainHead = feed.Block
	}
	if feed.Stalled {
		r.addProblem(problem.HeadFeedStalled)
	}
}
