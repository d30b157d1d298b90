package service

import (
	"context"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

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
//     chain, and the quotes, options chain and statistics built on it)
//     take the subgraph's indexed block as last seen, with no round trip
//     of their own while it is younger than the answer's stale bound
//     (pinIndexed, HeadAges): the strikes document asks the unpinned head
//     for free, readiness probes and the read at start (SeedHeads) record
//     what their `_meta` read, and a head older than HeadAges.Fresh starts
//     one background `_meta` so the next miss has a fresh one. Only a head
//     older than the stale bound (an idle gateway without readiness
//     probes), or none, makes the miss ask `_meta` first (one read shared
//     by the misses that ask at the same time: readHead);
//   - routes that read the chain only (prepared exercises) run at the
//     head, whose header the first read fetches in the same round trip
//     (package chain, aggregateFirst): the block the simulation ran at
//     is the block the answer names.

// DefaultHeadFresh is how old the subgraph's indexed block, as last seen,
// may be for a strikes-chain miss to pin to it without refreshing it:
// about one block on the fastest chains served.
const DefaultHeadFresh = time.Second

// HeadAges say how old a remembered subgraph head a miss may pin its chain
// read to. The composition root sets the stale bounds to half the TTLs of
// the answers that pin this way (CLAMM_STRIKES_TTL, CLAMM_PREPARE_TTL):
// such an answer is cached for its TTL from its fill, so a hit of it is at
// most one and a half TTLs behind the head (docs/api.md says so). The
// fresh age never exceeds a stale bound. The zero value reuses no head:
// every miss asks `_meta` first (and BlockAt asks the node every time), as
// tests that move the chain between two requests need.
type HeadAges struct {
	// Fresh: a head younger than this is used as is; an older one still
	// within the stale bound is used and refreshed in the background.
	Fresh time.Duration
	// Strikes bounds the head of strikes chains, options chains and
	// statistics (cached for CLAMM_STRIKES_TTL).
	Strikes time.Duration
	// Quotes bounds the head of purchase quotes and prepared purchases
	// (cached for CLAMM_PREPARE_TTL).
	Quotes time.Duration
	// RefreshTimeout is the background refresh's deadline (0: the
	// subgraph client's own).
	RefreshTimeout time.Duration
}

// staleFor names which stale bound of HeadAges an answer is under.
type staleFor int

const (
	staleStrikes staleFor = iota
	staleQuotes
)

func (a HeadAges) bound(f staleFor) time.Duration {
	if f == staleQuotes {
		return a.Quotes
	}
	return a.Strikes
}

// heads remembers each chain's subgraph head as last seen.
type heads struct {
	mu   sync.Mutex
	ages HeadAges
	seen map[uint64]headSeen
	// flight shares one `_meta` read among the callers of readHead.
	flight singleflight.Group
	// blocks memoises BlockAt for ages.Fresh: a client paging at one
	// block asks the node once a second, not once per page.
	blocks map[blockKey]headSeen
}

type headSeen struct {
	ref block.Ref
	at  time.Time
}

type blockKey struct {
	chain, number uint64
}

// SetHeadAges sets how old a remembered subgraph head may be (HeadAges),
// and a block's remembered hash (BlockAt, for a.Fresh). The composition
// root sets it from the configuration; tests that move the chain between
// two requests set the zero value, as no clock moves there.
func (s *Service) SetHeadAges(a HeadAges) {
	s.heads.mu.Lock()
	s.heads.ages = a
	s.heads.mu.Unlock()
}

// recent returns chainID's head as last seen when a miss under bound f may
// pin to it, and whether it is past the fresh age (the caller then starts
// a refresh, or joins the one under way: readHead).
func (h *heads) recent(chainID uint64, f staleFor, now time.Time) (r block.Ref, ok, refresh bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, seen := h.seen[chainID]
	if !seen {
		return block.Ref{}, false, false
	}
	age, bound := now.Sub(s.at), h.ages.bound(f)
	if age >= bound {
		return block.Ref{}, false, false
	}
	return s.ref, true, age >= h.ages.Fresh
}

func (h *heads) saw(chainID uint64, r block.Ref, now time.Time) {
	if r.Hash == "" || r.Number == 0 {
		return // a block asked by number, or a `_meta` without one: not a head
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

// sawMeta records a `_meta` read (a readiness probe's, the start check's,
// a refresh's) as chainID's head.
func (h *heads) sawMeta(chainID uint64, m subgraph.Meta, now time.Time) {
	h.saw(chainID, block.Ref{Number: m.Block, Hash: m.Hash, Timestamp: m.Timestamp}, now)
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
// chain read that must come first: the head last seen when it is within
// f's stale bound (refreshed in the background once past the fresh age),
// else the subgraph's `_meta` (one round trip, then remembered).
func (s *Service) pinIndexed(ctx context.Context, chainID uint64, up *Upstreams, f staleFor) error {
	p := block.From(ctx)
	if p == nil || p.Want != 0 {
		return nil
	}
	if _, ok := p.Resolved(); ok || !p.Claim(block.Anyone) {
		_, err := p.Wait(ctx)
		return err
	}
	now := time.Now()
	if r, ok, refresh := s.heads.recent(chainID, f, now); ok {
		if refresh && up.Meta != nil {
			// In the background: DoChan reads in a goroutine of its own,
			// or joins the read under way, and nothing waits for it. A
			// failure is dropped; the head then ages past the stale bound
			// and a miss asks `_meta` itself and reports what goes wrong.
			s.readHead(chainID, up)
		}
		p.Resolve(r)
		return nil
	}
	if up.Meta == nil {
		p.Fail(errNoMeta)
		return errNoMeta
	}
	var m subgraph.Meta
	select {
	case res := <-s.readHead(chainID, up):
		if res.Err != nil {
			p.Fail(res.Err)
			return res.Err
		}
		m = res.Val.(subgraph.Meta)
	case <-ctx.Done():
		p.Fail(ctx.Err())
		return ctx.Err()
	}
	p.Resolve(block.Ref{Number: m.Block, Hash: m.Hash, Timestamp: m.Timestamp})
	return nil
}

// readHead reads chainID's subgraph `_meta` and remembers it as the head,
// once for every caller that asks while it is under way: the misses of a
// gateway that has seen no head (at start, after a quiet spell) and the
// background refresh share one read instead of each asking. The read runs
// on a context of its own (none of a request's values: not its fill's
// memory lease, which the read would otherwise charge and wait on, nor its
// trace span; no request's end cuts it short for the others), bounded by
// RefreshTimeout, else the subgraph client's own deadline.
func (s *Service) readHead(chainID uint64, up *Upstreams) <-chan singleflight.Result {
	return s.heads.flight.DoChan(strconv.FormatUint(chainID, 10), func() (any, error) {
		s.heads.mu.Lock()
		timeout := s.heads.ages.RefreshTimeout
		s.heads.mu.Unlock()
		ctx := context.Background()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		at := time.Now() // the head is as old as the question, not the answer
		m, err := up.Meta.Meta(ctx)
		if err != nil {
			return nil, err
		}
		s.heads.sawMeta(chainID, m, at)
		return m, nil
	})
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
	hr, err := s.headerReader(chainID)
	if err != nil {
		return block.Ref{}, err
	}
	now, k := time.Now(), blockKey{chainID, n}
	s.heads.mu.Lock()
	seen, hit := s.heads.blocks[k]
	maxAge := s.heads.ages.Fresh
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
	hr, err := s.headerReader(chainID)
	if err != nil {
		return block.Ref{}, err
	}
	return hr.Header(ctx, "latest")
}

// headerReader is chainID's chain reader as a reader of headers.
func (s *Service) headerReader(chainID uint64) (HeaderReader, error) {
	up, err := s.upstreams(chainID, false)
	if err != nil {
		return nil, err
	}
	hr, ok := up.Chain.(HeaderReader)
	if !ok {
		return nil, errString("the chain reader cannot read headers")
	}
	return hr, nil
}
