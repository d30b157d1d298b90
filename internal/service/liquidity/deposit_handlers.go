package liquidity

import (
	"context"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// readHead begins the read of the chain's head beside an LP prepare's other
// reads from its start: no round trip of its own when the transactions are
// simulated there, and nothing waits for it when they are not (an approval
// to send first, a refusal). The prepare ends it before it returns.
func readHead(ctx context.Context, up *vocab.Upstreams) *vocab.Early[chain.Head] {
	return vocab.Begin(ctx, up.Chain.ReadHead)
}

// LPHandler is the handler of a deposit or withdrawal: its registry name
// and status (empty name: not in the chain's registry) and generation.
type LPHandler struct {
	Name       string `json:"name"`
	Address    string `json:"address"`
	Deprecated bool   `json:"deprecated"`
	// Version is "V1" (no hooks, no reservations), "V2" or "V3" (a V2
	// payload; deposits only into its whitelisted pools, reservations
	// through the position manager V2).
	Version string `json:"version"`
}

// lpMarkets is what the chain's option markets say about a handler: the
// markets that can use it now (whitelisted with it on their position
// manager, of the handler's generation), and the position manager an LP
// goes through.
type lpMarkets struct {
	usable []common.Address
	views  []*chain.StrikesView // of usable
	pms    []common.Address     // every market's position manager, first seen first
}

// marketsFor reads the chain's markets (subgraph) and their chain facts
// with the handler (one round trip, as the strikes chain reads them).
func marketsFor(ctx context.Context, up *vocab.Upstreams, handler common.Address) (lpMarkets, error) {
	var out lpMarkets
	markets, _, err := up.Subgraph.OptionMarkets(ctx)
	if err != nil {
		return out, err
	}
	addrs := make([]common.Address, len(markets))
	for i, m := range markets {
		addrs[i] = m.ID.Addr()
	}
	views, errs, err := up.Chain.StrikesViews(ctx, addrs, []common.Address{handler})
	if err != nil {
		return out, err
	}
	for i, v := range views {
		if errs[i] != nil || v == nil {
			continue // not a market the gateway can read: it cannot use the handler either
		}
		if !slices.Contains(out.pms, v.PositionManager) {
			out.pms = append(out.pms, v.PositionManager)
		}
		hv := v.Handlers[handler]
		if hv.Whitelisted && hv.Format == handlerFormatFor(v.Version) {
			out.usable = append(out.usable, addrs[i])
			out.views = append(out.views, v)
		}
	}
	return out, nil
}

// handlerFormatFor is the handler payload a market version speaks.
func handlerFormatFor(version int) int {
	if version == chain.MarketV1 {
		return chain.HandlerFormatV1
	}
	return chain.HandlerFormatV2
}

// lpState reads the LP state through the first of pms that whitelists
// the handler (usually the chain has one position manager: one read).
func lpState(ctx context.Context, up *vocab.Upstreams, q chain.LPQuery, pms []common.Address) (*chain.LPState, error) {
	if len(pms) == 0 {
		return nil, problem.New(problem.HandlerNotWhitelisted, "no option market on chain %d names a position manager the gateway can read", up.Config.ID)
	}
	var st *chain.LPState
	for _, pm := range pms {
		q.PositionManager = pm
		var err error
		if st, err = up.Chain.LPState(ctx, q); err != nil {
			return nil, err
		}
		if st.HandlerWhitelisted && st.AppWhitelisted {
			return st, nil
		}
	}
	return st, problem.New(problem.HandlerNotWhitelisted, "handler %s is not whitelisted on the position manager of any option market on chain %d (whitelistedHandlers, whitelistedApps)", q.Handler.Hex(), up.Config.ID).On("handler")
}

// noHookOnV1 refuses a hook on a range of a V1 handler (format): V1
// ranges have none (neither their token id nor their payload has the
// field), and a deposit or withdrawal named with one names no range.
func noHookOnV1(format int, handler, hook common.Address) error {
	if format == chain.HandlerFormatV1 && hook != (common.Address{}) {
		return problem.InvalidParam("hook", "handler %s is a V1 handler: its ranges have no hook (give the zero address)", handler.Hex())
	}
	return nil
}

// lpHandler is the handler's registry entry and generation, as the
// chain answered it (st: the tokenIds payload size, whitelistedPools).
func lpHandler(up *vocab.Upstreams, h common.Address, st *chain.LPState) LPHandler {
	out := LPHandler{Address: h.Hex(), Version: "V2"}
	switch {
	case st.Format == chain.HandlerFormatV1:
		out.Version = "V1"
	case st.V3:
		out.Version = "V3"
	}
	if reg, ok := up.Config.Handlers[h]; ok {
		out.Name, out.Deprecated = reg.Name, reg.Deprecated
	}
	return out
}

// lpUpstreams are the chain's clients for an LP operation.
func (s *Liquidity) lpUpstreams(chainID uint64) (*vocab.Upstreams, error) {
	return s.chains.Of(chainID, true)
}

// probeRevert is the 422 of a transaction that reverted when simulated
// at the head's block.
func probeRevert(code *problem.Code, what string, user common.Address, at uint64, rev *chain.RevertError) error {
	return problem.Wrap(code, rev, "%s reverts when simulated from %s at block %d: %s", what, user.Hex(), at, rev.Reason)
}

func tokenAmounts(tokens [2]chain.Token, amounts []*big.Int) []vocab.TokenAmount {
	out := make([]vocab.TokenAmount, len(tokens))
	for i, t := range tokens {
		out[i] = vocab.TokenAmount{Token: vocab.TokenOf(t), Amount: amounts[i].String()}
	}
	return out
}
