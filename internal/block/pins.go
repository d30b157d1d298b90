package block

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	// the same time and the background refresh (readHead).
	flight singleflight.Group

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

// BlockAt is block n of the chain as its node has it now: number, hash and
// time (BLOCK_NOT_FOUND past the node's head). The gateway keys an answer
// asked at a block by this hash, so an answer cached before a reorg
// replaced the block is not served after it. Remembered for
// HeadAges.Fresh.
func (p *Pins) BlockAt(ctx context.Context, chainID, n uint64) (Ref, error) {
	c, err := p.chain(chainID)
	if err != nil {
		return Ref{}, err
	}
	now, maxAge := time.Now(), p.headAges().Fresh
	c.mu.Lock()
	seen, hit := c.blocks[n]
	c.mu.Unlock()
	if hit && now.Sub(seen.at) < maxAge {
		return seen.ref, nil
	}
	r, err := c.Headers.HeaderAt(ctx, n)
	if err != nil {
		return Ref{}, err
	}
	c.mu.Lock()
	if c.blocks == nil || len(c.blocks) > 4096 {
		c.blocks = map[uint64]headerSeen{}
	}
	c.blocks[n] = headerSeen{ref: r, at: now}
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
// nothing (everything it needed was cached).
func (p *Pins) Run(ctx context.Context, a Ask, s Strategy, read func(context.Context) error) (Ref, error) {
	ctx, pin := With(ctx, a.Want)
	if a.Want != 0 {
		pin.Resolve(a.At)
	} else if err := p.choose(ctx, a.Chain, pin, s); err != nil {
		return Ref{}, err
	}
	if err := read(ctx); err != nil {
		return Ref{}, err
	}
	if ref, ok := pin.Resolved(); ok {
		return ref, nil
	}
	return p.Head(ctx, a.Chain)
}

// choose applies s to a new pin asking for no block.
func (p *Pins) choose(ctx context.Context, chainID uint64, pin *Pin, s Strategy) error {
	switch s.kind {
	case subgraphFirst:
		pin.ResolvedBy(Subgraph)
	case indexedHead:
		return p.pinIndexed(ctx, chainID, pin, s.stale)
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
func (p *Pins) pinIndexed(ctx context.Context, chainID uint64, pin *Pin, stale Stale) error {
	c, err := p.chain(chainID)
	if err != nil {
		return err
	}
	ages := p.headAges()
	if r, at, ok := c.Indexed.Seen().Last(); ok {
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
