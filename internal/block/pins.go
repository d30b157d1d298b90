package block

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// DefaultHeadFresh is how old the subgraph's indexed head, as last seen,
// may be for an IndexedHead answer to pin to it without refreshing it:
// about one block on the fastest chains served.
const DefaultHeadFresh = time.Second

// HeadAges say how old a remembered subgraph head an IndexedHead answer
// may pin its chain read to. The composition root sets the stale bounds to
// half the TTLs of the answers that pin this way (CLAMM_STRIKES_TTL,
// CLAMM_PREPARE_TTL): such an answer is cached for its TTL from its fill,
// so a hit of it is at most one and a half TTLs behind the head
// (docs/api.md says so). The fresh age never exceeds a stale bound. The
// zero value reuses no head: every miss asks `_meta` first (and BlockAt
// asks the node every time), as tests that move the chain between two
// requests need.
type HeadAges struct {
	// Fresh: a head younger than this is used as is; an older one still
	// within the stale bound is used and refreshed in the background.
	// BlockAt remembers a block's header for as long.
	Fresh time.Duration
	// Strikes bounds the head of StaleStrikes answers.
	Strikes time.Duration
	// Quotes bounds the head of StaleQuotes answers.
	Quotes time.Duration
	// RefreshTimeout is the background refresh's deadline (0: the
	// subgraph client's own).
	RefreshTimeout time.Duration
}

// usable says whether a head seen age ago may pin an answer under stale's
// bound, and whether it is past the fresh age (the caller then starts a
// refresh, or joins the one under way). The stale bound wins over a
// longer fresh age.
func (a HeadAges) usable(age time.Duration, stale Stale) (use, refresh bool) {
	bound := a.Strikes
	if stale == StaleQuotes {
		bound = a.Quotes
	}
	if age >= bound {
		return false, false
	}
	return true, age >= a.Fresh
}

// Indexer is a chain's subgraph as pins read it.
type Indexer interface {
	// IndexedHead reads the subgraph's indexed head now (`_meta`, at no
	// block).
	IndexedHead(ctx context.Context) (Ref, error)
	// Seen is the indexed head as the subgraph's client last read it.
	Seen() *Seen
}

// HeaderReader reads a chain's block headers (package chain).
type HeaderReader interface {
	// Header reads the header of tag ("latest" or a hex number).
	Header(ctx context.Context, tag string) (Ref, error)
	// HeaderAt reads block n's header (BLOCK_NOT_FOUND past the head).
	HeaderAt(ctx context.Context, n uint64) (Ref, error)
}

// Sources are what pins read of one chain, handed in when the app is
// built.
type Sources struct {
	Indexed Indexer
	Headers HeaderReader
}

// Pins choose, for each answer, the block it is read at (Run), and keep
// what that needs: each chain's readers, the subgraph heads seen, the
// headers of blocks clients asked for.
type Pins struct {
	chains map[uint64]*chainPins

	mu   sync.Mutex
	ages HeadAges
}

// chainPins is one chain's part of Pins.
type chainPins struct {
	Sources
	// flight shares one `_meta` read among the answers that need one at
	// the same time and the background refresh (readHead); headers one
	// header read per block among the requests asking for it (BlockAt).
	flight, headers singleflight.Group

	// heads is the chain's head as its feed reports it; fed says a feed
	// runs (Follow), so IndexedHead answers may pin to it.
	heads Heads
	fed   atomic.Bool

	mu sync.Mutex
	// blocks memoises BlockAt for HeadAges.Fresh: a client paging at one
	// block asks the node once a second, not once per page.
	blocks map[uint64]headerSeen
}

type headerSeen struct {
	ref Ref
	at  time.Time
}

// New returns pins over chains' sources with ages. Every chain needs both
// sources: one without is refused here, naming what it lacks, rather than
// failing its requests.
func New(chains map[uint64]Sources, ages HeadAges) (*Pins, error) {
	p := &Pins{chains: make(map[uint64]*chainPins, len(chains)), ages: ages}
	for id, src := range chains {
		switch {
		case src.Indexed == nil:
			return nil, fmt.Errorf("block: chain %d has no subgraph to read its indexed head from (Sources.Indexed)", id)
		case src.Headers == nil:
			return nil, fmt.Errorf("block: chain %d has no header reader (Sources.Headers)", id)
		}
		p.chains[id] = &chainPins{Sources: src}
	}
	return p, nil
}

// SetHeadAges replaces the ages New was given: tests that move the chain
// between two requests set the zero value, as no clock moves there.
func (p *Pins) SetHeadAges(a HeadAges) {
	p.mu.Lock()
	p.ages = a
	p.mu.Unlock()
}

func (p *Pins) headAges() HeadAges {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ages
}

// chain returns chainID's pins, or the error an answer on a chain built
// without sources gets.
func (p *Pins) chain(chainID uint64) (*chainPins, error) {
	c, ok := p.chains[chainID]
	if !ok {
		return nil, problem.New(problem.UpstreamNotConfigured, "chain %d has no live upstreams configured", chainID)
	}
	return c, nil
}

// SeedHeads reads every chain's subgraph `_meta`, in parallel, and
// remembers each one read as the chain's head, so the first IndexedHead
// miss of a new gateway pins its chain read without asking. The command
// runs it in the background at start, beside binding its listener: a
// subgraph slow to answer delays no start, and a request that comes
// before it ends asks `_meta` itself. A read that fails only leaves its
// chain unseeded. It returns when every read has ended.
func (p *Pins) SeedHeads(ctx context.Context) {
	var wg sync.WaitGroup
	for _, c := range p.chains {
		wg.Go(func() {
			at := time.Now()
			if r, err := c.Indexed.IndexedHead(ctx); err == nil {
				c.Indexed.Seen().Saw(r, at)
			}
		})
	}
	wg.Wait()
}

// Admit starts one upstream read inside the gateway's bound on fills
// running at once (upstream.Admission.Admit): it returns the context to
// read under and the release to call when the read is done, or the error
// to answer (503 OVERLOADED). Nil admits every read.
type Admit func(ctx context.Context) (context.Context, func(), error)

// BlockAt is block n of the chain as its node has it now: number, hash and
// time (BLOCK_NOT_FOUND past the node's head). The gateway keys an answer
// asked at a block by this hash, so an answer cached before a reorg
// replaced the block is not served after it. Remembered for
// HeadAges.Fresh.
//
// The read happens before the answer's cache lookup (its key needs the
// hash), so it is held to what a fill is: one read per block, shared by
// every request asking for it meanwhile (they wait for it; a request that
// ends stops waiting, the read goes on for the others), admitted through
// admit (at most as many header reads as fills run at once; past that
// the answer is admit's error), on a context of its own (none of the first
// request's cancellation) under the refresh deadline, and checked: a
// header of another block, or with a hash or time no block has, is 502
// RPC_ERROR, never served or remembered.
func (p *Pins) BlockAt(ctx context.Context, chainID, n uint64, admit Admit) (Ref, error) {
	c, err := p.chain(chainID)
	if err != nil {
		return Ref{}, err
	}
	ages := p.headAges()
	now := time.Now()
	c.mu.Lock()
	seen, hit := c.blocks[n]
	c.mu.Unlock()
	if hit && now.Sub(seen.at) < ages.Fresh {
		return seen.ref, nil
	}
	read := c.headers.DoChan(Decimal(n), func() (any, error) {
		// a read that ended between the look above and this one has
		// remembered the block: asking again would be a second read
		c.mu.Lock()
		seen, hit := c.blocks[n]
		c.mu.Unlock()
		if hit && time.Since(seen.at) < ages.Fresh {
			return seen.ref, nil
		}
		return c.readHeader(context.WithoutCancel(ctx), n, admit, ages.RefreshTimeout)
	})
	select {
	case res := <-read:
		if res.Err != nil {
			return Ref{}, res.Err
		}
		return res.Val.(Ref), nil
	case <-ctx.Done():
		return Ref{}, ctx.Err()
	}
}

// readHeader is BlockAt's one read of block n: admitted, bounded by
// timeout (0: the reader's own deadline), checked, then remembered.
func (c *chainPins) readHeader(ctx context.Context, n uint64, admit Admit, timeout time.Duration) (Ref, error) {
	if admit != nil {
		actx, release, err := admit(ctx)
		if err != nil {
			return Ref{}, err
		}
		defer release()
		ctx = actx
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	at := time.Now()
	r, err := c.Headers.HeaderAt(ctx, n)
	if err != nil {
		return Ref{}, err
	}
	if err := r.Check(n); err != nil {
		return Ref{}, problem.Wrap(problem.RPCError, err, "the rpc node's header for block %d is not that block's", n)
	}
	c.mu.Lock()
	if c.blocks == nil || len(c.blocks) > 4096 {
		c.blocks = map[uint64]headerSeen{}
	}
	c.blocks[n] = headerSeen{ref: r, at: at}
	c.mu.Unlock()
	return r, nil
}

// Head is the chain's head block: the block an answer that read nothing
// is true at (everything it needed was cached).
func (p *Pins) Head(ctx context.Context, chainID uint64) (Ref, error) {
	c, err := p.chain(chainID)
	if err != nil {
		return Ref{}, err
	}
	return c.Headers.Header(ctx, "latest")
}

// Ask is what a request says of its answer's block: its chain, the block
// the client asked for (Want, 0: none) and, once read (BlockAt), that
// block's header.
type Ask struct {
	Chain uint64
	Want  uint64
	At    Ref
}

var errUnstated = errors.New("block: the answer's route states no pin strategy")

// Run reads one answer under one pin: read runs with ctx carrying it, so
// every subgraph query and eth_call read asks the same block. The block is
// the one the client asked for, else the one s chooses; Run returns it: the
// block the pin resolved to, or the chain's head when read resolved
// nothing (everything it needed was cached). An IndexedHead answer that the
// subgraph refuses as past its head (BLOCK_NOT_INDEXED: the head it was
// pinned to, as last seen, is one the subgraph no longer has) is read once
// more at the subgraph's head as `_meta` names it now.
func (p *Pins) Run(ctx context.Context, a Ask, s Strategy, read func(context.Context) error) (Ref, error) {
	ref, pinned, err := p.run(ctx, a, s, read, 0)
	if err == nil || a.Want != 0 || s.kind != indexedHead || problem.As(err).Code != problem.BlockNotIndexed {
		return ref, err
	}
	// The subgraph has not indexed the head this answer was pinned to: it
	// went back (an indexer rewound or replaced behind the same URL). Once
	// more at the head it has now, read from `_meta` (which Seen then
	// follows), unless that is the block that just failed.
	again, _, retryErr := p.run(ctx, a, s, read, pinned.Number)
	if errors.Is(retryErr, errSameHead) {
		return Ref{}, err
	}
	return again, retryErr
}

// errSameHead stops Run's second attempt when `_meta` names the head the
// first one failed at.
var errSameHead = errors.New("block: the subgraph's head is the block that failed")

// NoBlockYet answers a read whose `_meta` names no block
// (block 0, or `_meta` null): an embedded index before its first commit
// (every start, and a store indexed again from the start), a Graph Node
// subgraph not yet started or answering null after a quiet spell. There
// is no block to pin the answer to; that is the index not being ready,
// not the gateway's bug, so it is a 503 (Retry-After) the client can wait
// out, never the 500 an unmapped error would be.
//
// The use cases whose answer needs the indexed block's time (the option
// markets, read SubgraphFirst) refuse a `_meta` of no block with it too.
func NoBlockYet() error {
	return problem.New(problem.SubgraphUnavailable, "the subgraph has indexed no block yet (its _meta names none): ask again once it has; an embedded index shows its progress, and why it stopped if it did, at /readyz")
}

// run is one attempt of Run. failed, when not 0, is the block the first
// attempt failed at: an IndexedHead answer then reads `_meta` rather than
// pin to the head last seen, and stops with errSameHead when `_meta`
// names failed again. It returns the pin's block as chosen before read,
// beside the answer's.
func (p *Pins) run(ctx context.Context, a Ask, s Strategy, read func(context.Context) error, failed uint64) (ref, pinned Ref, err error) {
	ctx, pin := With(ctx, a.Want)
	if a.Want != 0 {
		pin.Resolve(a.At)
	} else if err := p.choose(ctx, a.Chain, pin, s, failed); err != nil {
		return Ref{}, Ref{}, err
	}
	pinned, _ = pin.Resolved()
	if err := read(ctx); err != nil {
		return Ref{}, pinned, err
	}
	if ref, ok := pin.Resolved(); ok {
		return ref, pinned, nil
	}
	ref, err = p.Head(ctx, a.Chain)
	return ref, pinned, err
}

// choose applies s to a new pin asking for no block.
func (p *Pins) choose(ctx context.Context, chainID uint64, pin *Pin, s Strategy, failed uint64) error {
	switch s.kind {
	case subgraphFirst:
		pin.ResolvedBy(Subgraph)
	case indexedHead:
		return p.pinIndexed(ctx, chainID, pin, s.stale, failed)
	case chainHead:
		// The first chain read claims the pin at the head (package chain).
	default:
		return errUnstated
	}
	return nil
}

// pinIndexed resolves pin to the subgraph's indexed head before a chain
// read that must come first: the head last seen when it is within stale's
// bound (refreshed in the background once past the fresh age), else the
// subgraph's `_meta` (one round trip, shared with the answers asking at
// the same time, then remembered).
func (p *Pins) pinIndexed(ctx context.Context, chainID uint64, pin *Pin, stale Stale, failed uint64) error {
	c, err := p.chain(chainID)
	if err != nil {
		return err
	}
	ages := p.headAges()
	if r, ok := c.fedHead(ages, stale); ok && failed == 0 {
		pin.Resolve(r)
		return nil
	}
	if r, at, ok := c.Indexed.Seen().Last(); ok && failed == 0 {
		if use, refresh := ages.usable(time.Since(at), stale); use {
			if refresh {
				// In the background: DoChan reads in a goroutine of its
				// own, or joins the read under way, and nothing waits for
				// it. A failure is dropped; the head then ages past the
				// stale bound and a miss asks `_meta` itself and reports
				// what goes wrong.
				c.readHead(ages.RefreshTimeout)
			}
			pin.Resolve(r)
			return nil
		}
	}
	select {
	case res := <-c.readHead(ages.RefreshTimeout):
		if res.Err != nil {
			return res.Err
		}
		if res.Val.(Ref).Number == 0 {
			return NoBlockYet()
		}
		if res.Val.(Ref).Number == failed {
			return errSameHead
		}
		pin.Resolve(res.Val.(Ref))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readHead reads the chain's subgraph `_meta` and remembers it as the
// head, once for every caller that asks while it is under way: the misses
// of a gateway that has seen no head (at start, after a quiet spell) and
// the background refresh share one read instead of each asking. The read
// runs on a context of its own (none of a request's values: not its
// fill's memory lease, which the read would otherwise charge and wait on,
// nor its trace span, nor its pin; no request's end cuts it short for the
// others), bounded by timeout, else the subgraph client's own deadline.
func (c *chainPins) readHead(timeout time.Duration) <-chan singleflight.Result {
	return c.flight.DoChan("head", func() (any, error) {
		ctx := context.Background()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		at := time.Now() // the head is as old as the question, not the answer
		r, err := c.Indexed.IndexedHead(ctx)
		if err != nil {
			return nil, err
		}
		c.Indexed.Seen().Saw(r, at)
		return r, nil
	})
}

// fedHead is the head a running feed last confirmed, while that is within
// stale's bound: a feed keeps it current, so no answer waits on `_meta`
// and none is refreshed from here. Without a feed, or once the feed has
// gone quiet past the bound (its upstream down), the head as last seen
// and `_meta` take over.
func (c *chainPins) fedHead(ages HeadAges, stale Stale) (Ref, bool) {
	if !c.fed.Load() {
		return Ref{}, false
	}
	r, at, ok := c.heads.Latest()
	if !ok {
		return Ref{}, false
	}
	use, _ := ages.usable(time.Since(at), stale)
	return r, use
}

// Heads is chainID's head feed (nil for a chain built without sources):
// streams and the response cache subscribe to it; the embedded indexer,
// or Follow's feed, publishes into it.
func (p *Pins) Heads(chainID uint64) *Heads {
	c, ok := p.chains[chainID]
	if !ok {
		return nil
	}
	return &c.heads
}

// Feeding says chainID's heads are published by a feed (Follow, or
// MarkFed for a source that publishes by itself, the embedded indexer).
func (p *Pins) Feeding(chainID uint64) bool {
	c, ok := p.chains[chainID]
	return ok && c.fed.Load()
}

// MarkFed tells the pins that chainID's heads are published by a source
// of its own (the embedded indexer after each commit and revert), so
// IndexedHead answers pin to them.
func (p *Pins) MarkFed(chainID uint64) {
	if c, ok := p.chains[chainID]; ok {
		c.fed.Store(true)
	}
}

// Follow runs f into chainID's heads until ctx ends (in the caller's
// goroutine), marking the chain fed meanwhile.
func (p *Pins) Follow(ctx context.Context, chainID uint64, f Feed) error {
	c, err := p.chain(chainID)
	if err != nil {
		return err
	}
	c.fed.Store(true)
	defer c.fed.Store(false)
	return f.Run(ctx, &c.heads)
}

// PollFeed is the feed of a chain served by a Graph Node: a Poller of its
// sources every every, and whenever wake (nil: none) asks.
func (p *Pins) PollFeed(chainID uint64, every time.Duration, wake <-chan struct{}) (Feed, error) {
	c, err := p.chain(chainID)
	if err != nil {
		return nil, err
	}
	return &Poller{Indexed: c.Indexed, Headers: c.Headers, Every: every, Wake: wake}, nil
}

// Chains lists the chains the pins serve.
func (p *Pins) Chains() []uint64 {
	out := make([]uint64, 0, len(p.chains))
	for id := range p.chains {
		out = append(out, id)
	}
	return out
}

// ForgetAbove drops the headers BlockAt remembers of chainID's blocks
// above fork: a reorg replaced them, and for HeadAges.Fresh BlockAt would
// still name the orphaned ones.
func (p *Pins) ForgetAbove(chainID, fork uint64) {
	c, ok := p.chains[chainID]
	if !ok {
		return
	}
	c.mu.Lock()
	for n := range c.blocks {
		if n > fork {
			delete(c.blocks, n)
		}
	}
	c.mu.Unlock()
}
