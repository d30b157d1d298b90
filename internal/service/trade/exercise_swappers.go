package trade

import (
	"context"
	"log/slog"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The swapperId values a client may send beside a configured id or a
// swapper contract's address.
const (
	// SwapperAuto prepares through the chain's configured swappers (at
	// most MaxAutoSwappers) and answers the one whose exercise pays the
	// most.
	SwapperAuto = "auto"
	// SwapperDirect is the chain's first configured uniswap-v3
	// (SwapRouterSwapper) swapper.
	SwapperDirect = "direct"
)

// MaxAutoSwappers bounds the swappers auto prepares through (each costs
// a quote batch and two simulations), and autoParallel how many of them
// run at once.
const (
	MaxAutoSwappers = 8
	autoParallel    = 2
)

// learnedNote is a learned swapper's note. auto and direct never choose
// one: whoever deploys a contract can make it learned (one exercise
// through it), and a contract can tell a simulation (eth_call, gas price
// 0) from the real transaction, paying well in the one so auto picks it
// and keeping the profit in the other (the market checks no minimum).
const learnedNote = "used only when swapperId names its address: its code is not vouched for by this gateway's configuration"

// DirectNames are the per-chain DEX names the hosted API's clients send
// for the chain's direct swapper (hosted-api-clients.md section 7): each
// means SwapperDirect on a chain one of whose handlers' DEXes it names.
var DirectNames = []string{"agni", "thruster", "uniswap"}

// NotOffered are the swapperIds the hosted API's clients send that name
// a route this gateway does not build: aggregators' APIs it has no client
// for (KyberSwap, Sushi's API) and Berachain's Kodiak, a chain it does not
// serve.
var NotOffered = []string{"kodiak", "kyberswap", "sushi-api"}

// The sources of a swapper (SwapperChoice.Source).
const (
	SourceConfigured = "configured"
	SourceLearned    = "learned"
)

// SwapperChoice is one swapper a prepared exercise can go through, and
// where the gateway knows it from.
type SwapperChoice struct {
	// ID is what swapperId takes to choose it: the configured id, or the
	// learned contract's checksummed address.
	ID string `json:"id"`
	// Kind is the configured kind (uniswap-v3, 1inch) or, learned, what
	// the contract answered when first seen (swapRouter, oneInch, unknown).
	Kind    string `json:"kind"`
	Address string `json:"address"`
	// Source is "configured" (the gateway's configuration) or "learned"
	// (the chain's own exercises sent collateral through it).
	Source string `json:"source"`
	// FirstExercise is the exercise (transaction hash - log index) a
	// learned swapper was first seen in.
	FirstExercise string `json:"firstExercise,omitempty"`
	// Note says, for a learned swapper, that only its address chooses it.
	Note string `json:"note,omitempty"`
	// Usable is false for a learned swapper whose swapData this gateway
	// cannot build (a 1inch swapper without the API configured, an
	// unknown contract).
	Usable bool `json:"usable"`
	// Profit is, for swapperId=auto, what the exercise through it pays;
	// Error why it was not chosen when it could not prepare, or (on every
	// answer) that a configured swapper failed the start-up check, which
	// leaves it out of auto and direct (checkedNote).
	Profit *string `json:"profit,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// swapperOption is a choice with its quoter (nil when not usable).
type swapperOption struct {
	SwapperChoice
	quoter swap.Quoter
	direct bool // a configured SwapRouterSwapper-kind swapper (a DEX's own router)
	failed bool // a configured swapper that failed the start-up check
}

// checkedNote begins a configured swapper's error when the start-up
// check found one of its contracts without code or not of its kind: auto
// and direct leave it out (its legs would revert, or route through what
// the configuration did not mean); named by its id it is still prepared
// through, and the simulation says what it does.
const checkedNote = "left out of auto and direct: the start-up check found "

// markChecked marks the configured swappers that failed the start-up
// check (Trade.checked), once it has answered.
func (s *Trade) markChecked(up *vocab.Upstreams, opts []swapperOption) []swapperOption {
	if s.checked == nil {
		return opts
	}
	for i := range opts {
		o := &opts[i]
		if o.Source != SourceConfigured {
			continue
		}
		if why, bad := s.checked.SwapperProblem(up.Config.ID, o.ID); bad {
			o.failed, o.Error = true, checkedNote+why
		}
	}
	return opts
}

// learnedReader is the subgraph's read of learned swappers; a subgraph
// client without it (a test's fake) offers none.
type learnedReader interface {
	Swappers(ctx context.Context, first int) ([]subgraph.Swapper, subgraph.Meta, error)
}

// swapperOptions are the options a prepared exercise chooses from:
// chainSwappers with the learned ones read at no block (which swappers
// exist is no state the prepared exercise reads, and the subgraph's block
// must not pin its chain reads). A failed read of the learned ones leaves
// them out (logged): the configured ones still serve.
func swapperOptions(ctx context.Context, up *vocab.Upstreams) []swapperOption {
	out, err := chainSwappers(block.Without(ctx), up)
	if err != nil {
		slog.WarnContext(ctx, "learned swappers unread", "chain", up.Config.ID, "err", err)
	}
	return out
}

// ChainSwappers are a chain's swappers as the exercise prepare lists
// them in swapperChoices (chainSwappers), a configured one that fails the
// swapper check with its error (markChecked), the learned ones read at
// ctx's block (the markets list's, which names them). A failed read of the
// learned ones returns the configured ones and the error, for the caller
// to say so.
func (s *Trade) ChainSwappers(ctx context.Context, chainID uint64) ([]SwapperChoice, error) {
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return nil, err
	}
	opts, err := chainSwappers(ctx, up)
	opts = s.markChecked(up, opts) // as swapperChoices: a failed check's error
	out := make([]SwapperChoice, len(opts))
	for i, o := range opts {
		out[i] = o.SwapperChoice
	}
	return out, err
}

// chainSwappers are the chain's configured swappers, by id, then the
// swappers its own exercises used that the configuration does not name,
// first seen first, read at ctx's block. A failed read of the learned
// ones returns the configured ones and the error.
func chainSwappers(ctx context.Context, up *vocab.Upstreams) ([]swapperOption, error) {
	var out []swapperOption
	known := map[common.Address]bool{}
	ids := make([]string, 0, len(up.Quoters))
	for id := range up.Quoters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := SwapperChoice{ID: id, Source: SourceConfigured, Usable: true}
		if sw := up.Config.Swappers[id]; sw != nil {
			c.Kind, c.Address = sw.Kind, sw.Address.Hex()
			known[sw.Address] = true
			for _, a := range sw.ByDex {
				known[a] = true
			}
		}
		out = append(out, swapperOption{SwapperChoice: c, quoter: up.Quoters[id], direct: c.Kind == "uniswap-v3"})
	}
	learned, err := learnedOptions(ctx, up, known)
	return append(out, learned...), err
}

// learnedOptions are the learned swappers not in known.
func learnedOptions(ctx context.Context, up *vocab.Upstreams, known map[common.Address]bool) ([]swapperOption, error) {
	r, ok := up.Subgraph.(learnedReader)
	if !ok || up.Learned == nil {
		return nil, nil
	}
	list, _, err := r.Swappers(ctx, subgraph.MaxFirst)
	if err != nil {
		return nil, err
	}
	var out []swapperOption
	for _, s := range list {
		a := s.Address.Addr()
		if known[a] {
			continue
		}
		known[a] = true
		q, usable := up.Learned.For(s.Kind, a)
		out = append(out, swapperOption{
			SwapperChoice: SwapperChoice{ID: a.Hex(), Kind: s.Kind, Address: a.Hex(), Source: SourceLearned,
				FirstExercise: s.FirstExercise, Usable: usable, Note: learnedNote},
			quoter: q,
		})
	}
	return out, nil
}

// pickSwappers resolves a swapperId to the options to prepare through:
// one, or the usable configured ones (at most MaxAutoSwappers) for auto.
// auto and direct choose only among configured swappers that did not fail
// the start-up check (checkedNote); a learned one
// is prepared through only when id is its address (learnedNote). A name
// this gateway does not offer is a 400 naming the ids it accepts on the
// chain.
func pickSwappers(up *vocab.Upstreams, id string, opts []swapperOption) ([]swapperOption, error) {
	switch {
	case id == SwapperAuto:
		var out []swapperOption
		for _, o := range opts {
			if o.Usable && o.Source == SourceConfigured && !o.failed && len(out) < MaxAutoSwappers {
				out = append(out, o)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		return nil, noConfigured(up, id, opts)
	case id == SwapperDirect || isDirectName(up, id):
		for _, o := range opts {
			if o.direct && o.Source == SourceConfigured && !o.failed {
				return []swapperOption{o}, nil
			}
		}
		return nil, noConfigured(up, id, opts)
	default:
		for _, o := range opts {
			if o.ID == id || (common.IsHexAddress(id) && strings.EqualFold(o.Address, id)) {
				if !o.Usable {
					return nil, problem.InvalidParam("swapperId", "swapper %s (learned, kind %s) cannot be prepared through by this gateway; accepted on chain %d: %s", o.ID, o.Kind, up.Config.ID, accepted(up, opts))
				}
				return []swapperOption{o}, nil
			}
		}
	}
	why := "is not a swapper of this chain"
	if contains(NotOffered, id) {
		why = "names a route this gateway does not offer"
	}
	return nil, problem.InvalidParam("swapperId", "swapperId %q %s; accepted on chain %d: %s", id, why, up.Config.ID, accepted(up, opts))
}

// noConfigured is the 400 for auto or a direct name on a chain with no
// configured swapper of that kind: it names the learned swappers a
// client may choose by address, at its own judgement.
func noConfigured(up *vocab.Upstreams, id string, opts []swapperOption) error {
	var learned, failed []string
	for _, o := range opts {
		if o.Source == SourceLearned && o.Usable {
			learned = append(learned, o.ID)
		}
		if o.failed && (id == SwapperAuto || o.direct) {
			failed = append(failed, o.ID+" ("+strings.TrimPrefix(o.Error, checkedNote)+")")
		}
	}
	if len(failed) > 0 {
		return problem.InvalidParam("swapperId", "swapperId %q chooses among configured swappers and chain %d has none for it that passed the start-up check: %s; a swapper is still prepared through when named by its id", id, up.Config.ID, strings.Join(failed, "; "))
	}
	if len(learned) == 0 {
		return problem.InvalidParam("swapperId", "swapperId %q chooses among configured swappers and chain %d has none for it; accepted on chain %d: %s", id, up.Config.ID, up.Config.ID, accepted(up, opts))
	}
	return problem.InvalidParam("swapperId", "swapperId %q chooses among configured swappers and chain %d has none for it; learned swappers (not vouched for, chosen only by address): %s", id, up.Config.ID, strings.Join(learned, ", "))
}

// isDirectName: id is one of DirectNames and a DEX of one of the chain's
// handlers.
func isDirectName(up *vocab.Upstreams, id string) bool {
	if !contains(DirectNames, id) {
		return false
	}
	for _, h := range up.Config.Handlers {
		if h.Name == id {
			return true
		}
	}
	return false
}

// accepted lists the swapperIds the chain takes now.
func accepted(up *vocab.Upstreams, opts []swapperOption) string {
	var ids []string
	direct, configured := false, false
	for _, o := range opts {
		if o.Usable {
			ids = append(ids, o.ID)
			direct = direct || o.direct
			configured = configured || o.Source == SourceConfigured
		}
	}
	if len(ids) == 0 {
		return "none (no swapper is configured and none learned from the chain's exercises yet)"
	}
	if configured {
		ids = append(ids, SwapperAuto)
	}
	if direct {
		ids = append(ids, SwapperDirect)
		for _, n := range DirectNames {
			if isDirectName(up, n) {
				ids = append(ids, n)
			}
		}
	}
	return strings.Join(ids, ", ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
