package service

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// ChainReadiness is one chain's part of /readyz.
type ChainReadiness struct {
	ChainID uint64 `json:"chainId"`
	// Mode is how the chain is served: demo, graph-node, indexed or not
	// served (config.ServeMode).
	Mode          string   `json:"mode,omitempty"`
	Ready         bool     `json:"ready"`
	Configured    bool     `json:"configured"`
	SubgraphBlock uint64   `json:"subgraphBlock,omitempty"`
	ChainHead     uint64   `json:"chainHead,omitempty"`
	LagBlocks     uint64   `json:"lagBlocks"`
	Problems      []string `json:"problems,omitempty"`
	// HeadFeed is the chain's head feed, where one runs: ChainHead is
	// its head then, and the node is not asked (ReadHeads).
	HeadFeed *FeedReadiness `json:"headFeed,omitempty"`
	// Indexing is where the gateway's own indexer of the chain stands (a
	// chain configured with an RPC URL and no subgraph URL).
	Indexing *vocab.Indexing `json:"indexing,omitempty"`
	// ContractChecks are the configured contracts that did not answer as
	// their kind at the latest check (CheckContracts, KeepChecking). They
	// leave the chain ready:
	// the reads that need them say so in their own answers.
	ContractChecks []ContractCheck `json:"contractChecks,omitempty"`
}

// Readiness probes every configured chain in parallel: the subgraph answers
// _meta without indexing errors, the RPC node serves the configured chain
// id (eth_chainId) and answers eth_blockNumber, and
// the subgraph's block is at most maxLag blocks behind the node's head.
// A chain whose head feed runs (ReadHeads) takes its head from the feed
// instead of eth_blockNumber, and is not ready while the feed is stalled.
// Chains without upstreams are listed as not configured and not ready
// (their requests are refused with a 400), and do not make the gateway
// unready: nothing it serves depends on them.
func (s *Service) Readiness(ctx context.Context, maxLag uint64) (bool, []ChainReadiness) {
	out := make([]ChainReadiness, 0, len(s.chains))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, up := range s.chains {
		if up.Subgraph == nil || up.Chain == nil {
			out = append(out, ChainReadiness{ChainID: id, Mode: up.Mode, Ready: false, Configured: false})
			continue
		}
		wg.Add(1)
		go func(id uint64, up *vocab.Upstreams) {
			defer wg.Done()
			// What `_meta` reads is the subgraph's head: the subgraph
			// client remembers it, and an answer soon after pins to it
			// without asking (package block).
			r := probe(ctx, id, up, maxLag, s.feeds.feedOf(id))
			r.ContractChecks = s.checkedContracts(id)
			mu.Lock()
			out = append(out, r)
			mu.Unlock()
		}(id, up)
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].ChainID < out[j].ChainID })
	ready := true
	for _, r := range out {
		ready = ready && (r.Ready || !r.Configured)
	}
	return ready, out
}

// indexing adds the state of the chain's own indexer: a failed indexer is
// SUBGRAPH_INDEXING_ERROR (its error says at which block, handler and
// why), one that has not reached the head yet SUBGRAPH_LAGGING whatever
// the lag bound, so a load balancer sends nothing to a replica still
// backfilling; so is one stalled on a failure it keeps retrying. A store
// that failed a read is SUBGRAPH_ERROR, and a node behind the index (a
// replica still syncing: the chain's reads at the index's block fail)
// RPC_UNAVAILABLE.
func indexing(r *ChainReadiness, up *vocab.Upstreams) {
	if up.Indexing == nil {
		return
	}
	st := up.Indexing()
	r.Indexing = &st
	var codes []*problem.Code
	switch st.State {
	case vocab.IndexingFailed:
		codes = append(codes, problem.SubgraphIndexingError)
	case vocab.IndexingSynced:
	default:
		codes = append(codes, problem.SubgraphLagging)
	}
	if st.Stalled {
		codes = append(codes, problem.SubgraphLagging)
	}
	if st.StoreError != "" {
		codes = append(codes, problem.SubgraphError)
	}
	if st.State == vocab.IndexingSynced && st.ChainHead < st.Block {
		codes = append(codes, problem.RPCUnavailable)
	}
	for _, code := range codes {
		r.addProblem(code)
	}
}

// addProblem names code among the chain's problems, once.
func (r *ChainReadiness) addProblem(code *problem.Code) {
	if !slices.Contains(r.Problems, code.Name()) {
		r.Problems = append(r.Problems, code.Name())
	}
}

// probe checks one chain; with feed (nil: none) its head is the feed's.
func probe(ctx context.Context, id uint64, up *vocab.Upstreams, maxLag uint64, feed *FeedReadiness) ChainReadiness {
	r := ChainReadiness{ChainID: id, Mode: up.Mode, Configured: true}
	var head uint64
	var meta subgraph.Meta
	var headErr, metaErr, chainErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		chainErr = up.Chain.CheckChainID(ctx, id)
	}()
	// Only an embedded index's feed is the chain's head: it follows the
	// node. A Graph Node chain's feed is its subgraph's _meta head, so
	// taking it as the chain head would hide a subgraph that stopped
	// indexing (a lag of zero): there the node is still asked.
	if feed != nil && up.Indexing != nil {
		head = feed.Block
	} else {
		wg.Add(1)
		go func() {
			defer wg.Done()
			head, headErr = up.Chain.BlockNumber(ctx)
		}()
	}
	go func() {
		defer wg.Done()
		meta, metaErr = up.Subgraph.Meta(ctx)
	}()
	wg.Wait()
	// A node that is down fails eth_chainId and eth_blockNumber alike:
	// each problem is named once (addProblem).
	for _, err := range []error{chainErr, headErr, metaErr} {
		if err != nil {
			r.addProblem(problem.As(err).Code)
		}
	}
	if meta.HasIndexingErrors {
		r.addProblem(problem.SubgraphIndexingError)
	}
	r.SubgraphBlock, r.ChainHead = meta.Block, head
	if feed != nil {
		r.fed(feed, up.Indexing != nil)
	}
	if headErr == nil && metaErr == nil && head > meta.Block {
		r.LagBlocks = head - meta.Block
		if r.LagBlocks > maxLag {
			r.addProblem(problem.SubgraphLagging)
		}
	}
	indexing(&r, up)
	r.Ready = len(r.Problems) == 0
	return r
}
