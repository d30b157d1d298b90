package indexer

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// The mappings' eth_calls, prefetched. A handler's eth_call is asked at
// its trigger's block (by hash) for an address the store holds (a
// market's prime pool, a strike's pool), so the manifest cannot declare
// it; asked one at a time on the indexing goroutine, each was a round trip
// the mappings waited for (half that goroutine's time on a backfill). So
// the indexer learns, per data source address and event topic0, which
// (to, calldata) calls the handler made for the recent events of that key,
// and for a range far below the head, once fetched, asks those calls at
// each of its events' blocks in JSON-RPC batches beside the fetching
// (prefetch). The mapping's ethereum.call looks its exact (block hash, to,
// calldata) up first; anything else (a call not predicted, one whose
// answer was a node's error) is asked live as before. An answer is that
// of the block it was asked at, whenever it was asked: a prediction can
// cost a call, never a wrong value.

// Prediction bounds: a call is prefetched for a key's events while it was
// asked by at least predictShare of the last predictWindow events of the
// key (and predictMin have been seen), so that a handler whose events name
// many pools does not multiply a paid provider's calls; an event's calls
// past callsPerEvent and calldata longer than maxCallData are not learnt,
// and past maxKeys keys the least recently seen evictKeys are forgotten
// (memory stays bounded, and a long-lived indexer keeps learning the
// triggers of new pools); a range prefetches at most maxPrefetch calls.
const (
	predictWindow = 10
	predictMin    = 4
	callsPerEvent = 8
	maxCallData   = 256
	maxKeys       = 1024
	evictKeys     = maxKeys / 4
	maxPrefetch   = 5000
)

// giveUp is how many ranges in a row may have every prefetched call
// failed before prefetching pauses: a node that cannot answer eth_calls
// in batches (a provider refusing them, or failing each) would otherwise
// cost a request a range, for nothing. A range refused for the rate of
// requests is not counted (a burst of 429s says nothing of batches), and
// a paused prefetch tries again every retryEvery ranges: one request in
// that many, so that a node that failed for a while is used again.
const (
	giveUp     = 8
	retryEvery = 32
)

// trigger is what a prediction is kept by: a data source's address and
// the topic0 of the event its handler ran for.
type trigger struct {
	addr  common.Address
	topic common.Hash
}

// call is an eth_call without its block: the contract and the calldata.
type call struct {
	to   common.Address
	data string
}

// callKey is an eth_call at one block: what an answer is cached by. The
// block is named by hash, as the mappings' calls ask it (EIP-1898), so an
// answer for a block a reorg replaced is never an answer for its successor.
type callKey struct {
	block common.Hash
	call
}

// callAnswer is an answer: the returned bytes, or a revert.
type callAnswer struct {
	ret      []byte
	reverted bool
	// used: a mapping has read it (counted once); live: asked by a
	// mapping, not prefetched (not counted).
	used, live bool
}

// callCache holds a range's answers: those prefetched, and those asked
// live while it is applied (a block's events often ask the same call, as
// Graph Node's call cache knows). It lives as long as the range is applied
// (Indexer.calls), so it is bounded by maxPrefetch and the range's calls.
type callCache map[callKey]*callAnswer

// learnt is what a key's recent events asked.
type learnt struct {
	// seen is the predictor's tick when the key's last event was told
	// (what eviction orders keys by).
	seen uint64
	// recent are the calls of the key's last predictWindow events, a ring
	// at n (events seen).
	recent [predictWindow][]call
	n      int
	// predicted are the calls to prefetch for the key's next events.
	predicted []call
}

// add records an event's calls and predicts again.
func (l *learnt) add(calls []call) {
	l.recent[l.n%predictWindow] = calls
	l.n++
	l.predicted = l.predicted[:0]
	seen := min(l.n, predictWindow)
	if seen < predictMin {
		return
	}
	counts := map[call]int{}
	for _, cs := range l.recent[:seen] {
		for _, c := range cs {
			counts[c]++
		}
	}
	for c, k := range counts {
		if 5*k >= 4*seen { // asked by at least 80 % of them
			l.predicted = append(l.predicted, c)
		}
	}
	slices.SortFunc(l.predicted, func(a, b call) int {
		if c := bytes.Compare(a.to[:], b.to[:]); c != 0 {
			return c
		}
		return strings.Compare(a.data, b.data)
	})
}

// predictor learns the calls of each key's events (on the indexing
// goroutine) and predicts those of a range's (on a fetching one).
type predictor struct {
	mu   sync.Mutex
	keys map[trigger]*learnt
	tick uint64
	// failed counts the ranges in a row whose prefetch got no answer (not
	// for a rate limit); paused, the ranges skipped since giveUp.
	failed, paused atomic.Int32
}

func (p *predictor) observe(key trigger, calls []call) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.keys[key]
	if l == nil {
		if len(p.keys) >= maxKeys {
			p.evict()
		}
		if p.keys == nil {
			p.keys = map[trigger]*learnt{}
		}
		l = &learnt{}
		p.keys[key] = l
	}
	p.tick++
	l.seen = p.tick
	l.add(calls)
}

// evict forgets the evictKeys least recently seen keys: a quarter at a
// time, so that the sort is paid once per evictKeys new keys.
func (p *predictor) evict() {
	seen := make([]uint64, 0, len(p.keys))
	for _, l := range p.keys {
		seen = append(seen, l.seen)
	}
	slices.Sort(seen)
	cut := seen[min(evictKeys, len(seen))-1] // ticks are distinct
	for k, l := range p.keys {
		if l.seen <= cut {
			delete(p.keys, k)
		}
	}
}

// skip reports whether a range's prefetch is skipped: prefetching is
// paused (giveUp ranges in a row failed) and this range is not the one
// in retryEvery that tries again.
func (p *predictor) skip() bool {
	return p.failed.Load() >= giveUp && p.paused.Add(1)%retryEvery != 0
}

// outcome counts a range's prefetch: answers resume prefetching, a
// failure not for the rate of requests counts toward giveUp (true: this
// one paused it).
func (p *predictor) outcome(answered, limited bool) bool {
	switch {
	case answered:
		p.failed.Store(0)
		p.paused.Store(0)
	case !limited:
		return p.failed.Add(1) == giveUp
	}
	return false
}

// predict lists the calls the blocks' events are expected to ask, at most
// limit, each once.
func (p *predictor) predict(blocks []*blockData, limit int) []callKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []callKey
	seen := map[callKey]bool{}
	for _, b := range blocks {
		for _, lg := range b.logs {
			if len(lg.Topics) == 0 {
				continue
			}
			l := p.keys[trigger{lg.Address, lg.Topics[0]}]
			if l == nil {
				continue
			}
			for _, c := range l.predicted {
				k := callKey{b.header.Hash, c}
				if seen[k] {
					continue
				}
				if len(out) >= limit {
					return out
				}
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// recording is the event whose handler runs now and the calls it has
// asked so far; it is told to the predictor when the next event starts
// (or the range ends). Used on the indexing goroutine only.
type recording struct {
	key   trigger
	calls []call
	on    bool
}

// begin starts an event's recording, ending the one before.
func (r *recording) begin(p *predictor, key trigger) {
	r.end(p)
	r.key, r.calls, r.on = key, nil, true
}

// ask records one of the running handler's calls.
func (r *recording) ask(to common.Address, data []byte) {
	if !r.on || len(data) > maxCallData || len(r.calls) >= callsPerEvent {
		return
	}
	c := call{to, string(data)}
	if !slices.Contains(r.calls, c) {
		r.calls = append(r.calls, c)
	}
}

func (r *recording) end(p *predictor) {
	if r.on {
		p.observe(r.key, r.calls)
	}
	r.key, r.calls, r.on = trigger{}, nil, false
}

// prefetch asks, for a range far below the head, the calls its events are
// predicted to make, in batches, and returns their answers (the range's
// cache while it is applied: Indexer.calls). Its failures are not
// errors: what it could not get is asked live when the handler asks it. A
// node that refuses batches gains nothing from it (each call would be a
// request still): none then, nor near the head (few events; a reorg there
// would waste them).
func (ix *Indexer) prefetch(ctx context.Context, c *chunk) callCache {
	if c.near || ix.node.noBatch.Load() || ix.predict.skip() {
		return nil
	}
	keys := ix.predict.predict(c.blocks, maxPrefetch)
	if len(keys) == 0 {
		return nil
	}
	ix.stats.prefetched.Add(int64(len(keys)))
	got, limited := ix.node.callBatch(ctx, keys)
	// an ended sync (a failure elsewhere) is not the node's refusal
	if ctx.Err() == nil && ix.predict.outcome(len(got) > 0, limited) {
		ix.log.Warn("the node failed every eth_call asked ahead in batches: the mappings' calls are asked one at a time, and a range's asked ahead only now and then",
			"chainId", ix.opts.ChainID, "retryEvery", retryEvery)
	}
	return got
}

// callBatch asks calls in JSON-RPC batches of at most maxBatch, one after
// the other, and returns the answers that are a result or a revert. Any
// other error (a node's, per call or for the whole batch; an ended
// context) leaves its calls out: the mapping asks those live, with
// ethCall's retries and error classes. Each call is counted as an
// eth_call (providers bill them one by one), each batch as one request.
// limited: a batch, or a call, was refused for the rate of requests.
func (n *node) callBatch(ctx context.Context, keys []callKey) (out callCache, limited bool) {
	out = make(callCache, len(keys))
	step := max(n.maxBatch, 1)
	for i := 0; i < len(keys); i += step {
		part := keys[i:min(i+step, len(keys))]
		rets := make([]hexutil.Bytes, len(part))
		elems := make([]rpc.BatchElem, len(part))
		for j, k := range part {
			elems[j] = rpc.BatchElem{Method: "eth_call", Args: callArgs(k.to, []byte(k.data), k.block), Result: &rets[j]}
		}
		if err := n.sendCalls(ctx, elems); err != nil {
			return out, limited || rateLimited(err)
		}
		for j, e := range elems {
			switch {
			case e.Error == nil:
				out[part[j]] = &callAnswer{ret: rets[j]}
			case reverted(e.Error):
				out[part[j]] = &callAnswer{reverted: true}
			default:
				limited = limited || rateLimited(e.Error)
			}
		}
	}
	return out, limited
}

// sendCalls sends one batch whose calls may fail one by one (a revert is
// an answer), unlike node.send, which fails the batch on any.
func (n *node) sendCalls(ctx context.Context, elems []rpc.BatchElem) error {
	n.counts.add("eth_call", len(elems))
	n.counts.requests.Add(1)
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	return n.rpc.BatchCallContext(ctx, elems)
}

// callArgs are an eth_call's parameters at a block named by hash, as
// node.ethCall asks them.
func callArgs(to common.Address, data []byte, block common.Hash) []any {
	return []any{map[string]any{"to": to, "data": hexutil.Bytes(data)}, map[string]any{"blockHash": block}}
}

// cached answers a mapping's call from the prefetched answers of the range
// being applied (nil, false: not there).
func (ix *Indexer) cached(to common.Address, data []byte, block common.Hash) (*callAnswer, bool) {
	a := ix.calls[callKey{block, call{to, string(data)}}]
	if a == nil {
		return nil, false
	}
	if !a.used && !a.live {
		a.used = true
		ix.stats.usedCalls.Add(1)
	}
	return a, true
}

// keep adds a live answer to the range's cache: the same call at the same
// block (hash) answers the same.
func (ix *Indexer) keep(to common.Address, data []byte, block common.Hash, ret []byte, reverted bool) {
	if ix.calls == nil {
		ix.calls = callCache{}
	}
	ix.calls[callKey{block, call{to, string(data)}}] = &callAnswer{ret: bytes.Clone(ret), reverted: reverted, live: true}
}
