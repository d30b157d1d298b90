package service

import (
	"context"
	"sync"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// How an answer's block is chosen (package block carries it to every read):
//
//   - a block the client asked for is resolved by the gateway before the
//     fill (BlockAt: the node's header, so its hash is the chain's now);
//   - routes that read the subgraph first (histories, positions, option
//     markets) resolve it from `_meta` in the same document as their first
//     page: no round trip of its own;
//   - routes that must read the chain before the subgraph (the strikes
//     chain, and the quotes and options chain built on it) take the
//     subgraph's indexed block as last seen, at most HeadMaxAge old, and
//     ask `_meta` first only when none is that recent (pinIndexed);
//   - routes that read the chain only (prepared exercises) run at the
//     head, whose header the first read fetches: the block the
//     simulation ran at is the block the answer names.

// DefaultHeadMaxAge is how old the subgraph's indexed block, as last seen,
// may be for a strikes-chain miss to pin to it without asking again: about
// one block on the fastest chains served, so an answer is never more than
// that behind the subgraph.
const DefaultHeadMaxAge = time.Second

// heads remembers each chain's subgraph head as last seen.
type heads struct {
	mu     sync.Mutex
	maxAge time.Duration
	seen   map[uint64]headSeen
	// blocks memoises BlockAt for maxAge: a client paging at one block
	// asks the node once a second, not once per page.
	blocks map[blockKey]headSeen
}

type headSeen struct {
	ref block.Ref
	at  time.Time
}

type blockKey struct {
	chain, number uint64
}

// SetHeadMaxAge sets how old a remembered subgraph head, or a block's
// remembered hash (BlockAt), may be: 0 asks `_meta` on every strikes-chain
// miss and the node on every request asked at a block. Tests that move
// the chain between two requests set 0, as no clock moves there.
func (s *Service) SetHeadMaxAge(d time.Duration) {
	s.heads.mu.Lock()
	s.heads.maxAge = d
	s.heads.mu.Unlock()
}

func (h *heads) recent(chainID uint64, now time.Time) (block.Ref, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.seen[chainID]
	return s.ref, ok && now.Sub(s.at) < h.maxAge
}

func (h *heads) saw(chainID uint64, r block.Ref, now time.Time) {
	if r.Hash == "" {
		return // a block asked by number: not a head
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen == nil {
		h.seen = map[uint64]headSeen{}
	}
	if old, ok := h.seen[chainID]; !ok || r.Number >= old.ref.Number {
		h.seen[chainID] = headSeen{ref: r, at: now}
	}
}

// subgraphFirst says the answer's block comes from its first subgraph
// page: chain reads wait for it rather than pick the chain's head, which
// the subgraph may not have indexed.
func subgraphFirst(ctx context.Context) {
	if p := block.From(ctx); p != nil {
		p.ResolvedBy(block.Subgraph)
	}
}

// remember records the block a subgraph-first answer resolved, so a
// strikes-chain miss soon after can pin to it without asking.
func (s *Service) remember(ctx context.Context, chainID uint64) {
	if p := block.From(ctx); p != nil && p.Want == 0 {
		if r, ok := p.Resolved(); ok {
			s.heads.saw(chainID, r, time.Now())
		}
	}
}

// pinIndexed resolves ctx's pin to the subgraph's indexed block before a
// chain read that must come first: the head last seen when it is recent,
// else the subgraph's `_meta` (one round trip, then remembered).
func (s *Service) pinIndexed(ctx context.Context, chainID uint64, up *Upstreams) error {
	p := block.From(ctx)
	if p == nil || p.Want != 0 {
		return nil
	}
	if _, ok := p.Resolved(); ok || !p.Claim(block.Anyone) {
		_, err := p.Wait()
		return err
	}
	now := time.Now()
	if r, ok := s.heads.recent(chainID, now); ok {
		p.Resolve(r)
		return nil
	}
	if up.Meta == nil {
		p.Fail(errNoMeta)
		return errNoMeta
	}
	m, err := up.Meta.Meta(block.Without(ctx)) // this read resolves the pin: it must not wait for it
	if err != nil {
		p.Fail(err)
		return err
	}
	r := block.Ref{Number: m.Block, Hash: m.Hash, Timestamp: m.Timestamp}
	s.heads.saw(chainID, r, now)
	p.Resolve(r)
	return nil
}

var errNoMeta = subgraphGarbage(errString("the chain's subgraph declares no _meta reader"))

type errString string

func (e errString) Error() string { return string(e) }

// pinnedMeta is meta with the answer's block: a page asked by number
// carries no hash or time from Graph Node; the pin has them.
func pinnedMeta(ctx context.Context, m subgraph.Meta) subgraph.Meta {
	if p := block.From(ctx); p != nil {
		if r, ok := p.Resolved(); ok {
			m.Block, m.Hash = r.Number, r.Hash
			if r.Timestamp != 0 {
				m.Timestamp = r.Timestamp
			}
		}
	}
	return m
}

// HeaderReader reads a block's header (package chain).
type HeaderReader interface {
	HeaderAt(ctx context.Context, n uint64) (block.Ref, error)
	Header(ctx context.Context, tag string) (block.Ref, error)
}

var _ HeaderReader = (*chain.Reader)(nil)

// BlockAt is block n of the chain as its node has it now: number, hash and
// time (BLOCK_NOT_FOUND past the node's head). The gateway keys an answer
// asked at a block by this hash, so an answer cached before a reorg
// replaced the block is not served after it. Remembered for a second.
func (s *Service) BlockAt(ctx context.Context, chainID, n uint64) (block.Ref, error) {
	up, err := s.upstreams(chainID, false)
	if err != nil {
		return block.Ref{}, err
	}
	hr, ok := up.Chain.(HeaderReader)
	if !ok {
		return block.Ref{}, errString("the chain reader cannot read headers")
	}
	now, k := time.Now(), blockKey{chainID, n}
	s.heads.mu.Lock()
	seen, hit := s.heads.blocks[k]
	maxAge := s.heads.maxAge
	s.heads.mu.Unlock()
	if hit && now.Sub(seen.at) < maxAge {
		return seen.ref, nil
	}
	r, err := hr.HeaderAt(ctx, n)
	if err != nil {
		return block.Ref{}, err
	}
	s.heads.mu.Lock()
	if s.heads.blocks == nil || len(s.heads.blocks) > 4096 {
		s.heads.blocks = map[blockKey]headSeen{}
	}
	s.heads.blocks[k] = headSeen{ref: r, at: now}
	s.heads.mu.Unlock()
	return r, nil
}

// Head resolves ctx's pin when an answer read nothing that resolved it
// (everything it needed was cached): the chain's head, as the answer is
// true there.
func (s *Service) Head(ctx context.Context, chainID uint64) (block.Ref, error) {
	up, err := s.upstreams(chainID, false)
	if err != nil {
		return block.Ref{}, err
	}
	hr, ok := up.Chain.(HeaderReader)
	if !ok {
		return block.Ref{}, errString("the chain reader cannot read headers")
	}
	return hr.Header(ctx, "latest")
}
