package orders

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

// FillableRequest asks for the open orders a keeper could fill now
// through a swapper, simulated from Filler (the zero address when unset:
// a fill needs nothing of the filler's).
type FillableRequest struct {
	ChainID   uint64
	SwapperID string
	Filler    common.Address
}

// Fill is an order that would fill now: the transaction, as built, ran
// at the answer's block from the filler and returned Commission, which
// the contract pays the filler in CommissionToken.
type Fill struct {
	Order           View     `json:"order"`
	Tx              vocab.Tx `json:"tx"`
	From            string   `json:"from"`
	Simulated       bool     `json:"simulated"`
	Commission      string   `json:"commission"`
	CommissionToken string   `json:"commissionToken"`
}

// Fillable lists the open limit exercises whose fill, built with the
// swapper's routes, runs without reverting now: the maker gets minProfit,
// the filler the commission stated. An order whose fill reverts (profit
// below minProfit, a swap short) is not offered; nothing unsimulated is.
// Limit purchases are not offered: their legs are the filler's choice of
// ranges, which the book does not pick. At most Limits.Simulations orders
// are simulated per answer (the book's order: newest accepted first), so
// a book of many orders below their minimum costs one answer a bounded
// number of calls; an order whose own reads fail is left out, not the
// answer failed.
func (s *Orders) Fillable(ctx context.Context, req FillableRequest) ([]Fill, error) {
	up, err := s.contractOf(req.ChainID)
	if err != nil {
		return nil, err
	}
	quoter, ok := up.Quoters[req.SwapperID]
	if !ok {
		return nil, problem.InvalidParam("swapperId", "chain %d has no swapper %q", req.ChainID, req.SwapperID)
	}
	views, err := s.List(ctx, ListRequest{ChainID: req.ChainID, Status: StatusOpen})
	if err != nil {
		return nil, err
	}
	out := []Fill{}
	tried := 0
	for _, v := range views {
		if v.Kind != KindExercise {
			continue
		}
		if tried >= s.limits.Simulations {
			break // the bound: the rest wait for the next ask
		}
		tried++
		f, ok, err := s.exerciseFill(ctx, up, quoter, v, req.Filler)
		if err != nil {
			if _, err := faulty(err); err != nil {
				return nil, err
			}
			continue // this order's own reads failed: not offered, the others are
		}
		if ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// exerciseFill builds exerciseOption for an open take-profit with one
// route per leg and simulates it; false when it reverts.
func (s *Orders) exerciseFill(ctx context.Context, up *vocab.Upstreams, q swap.Quoter, v View, filler common.Address) (Fill, bool, error) {
	o, err := orderFields(v.Order)
	if err != nil {
		return Fill{}, false, err
	}
	id, _ := new(big.Int).SetString(v.TokenID, 10)
	market := common.HexToAddress(v.OptionMarket)
	pos, err := up.Chain.Position(ctx, market, id)
	if err != nil {
		return Fill{}, false, err
	}
	info, err := up.Chain.Market(ctx, market)
	if err != nil {
		return Fill{}, false, err
	}
	swaps, err := routes(ctx, q, info, pos, market)
	if err != nil {
		return Fill{}, false, err
	}
	data, err := contracts.ExerciseOrderCall(o.Contract(), o.Sig, swaps)
	if err != nil {
		return Fill{}, false, problem.Wrap(problem.Overloaded, err, "the stored order does not encode")
	}
	raw, err := up.Chain.SimulateCall(ctx, filler, up.Config.LimitOrders, data)
	var rev *chain.RevertError
	if errors.As(err, &rev) {
		return Fill{}, false, nil
	}
	if err != nil {
		return Fill{}, false, err
	}
	commission, err := contracts.UnpackLimitUint("exerciseOption", raw)
	if err != nil {
		return Fill{}, false, problem.Wrap(problem.RPCError, fmt.Errorf("%w: %w", chain.ErrUndecodable, err), "the simulated fill returned data that does not decode")
	}
	token := info.CallAsset.Address
	if pos.Data.IsCall {
		token = info.PutAsset.Address
	}
	return Fill{Order: v, Tx: vocab.Tx{To: up.Config.LimitOrders.Hex(), Data: hexutil.Encode(data)}, From: filler.Hex(),
		Simulated: true, Commission: commission.String(), CommissionToken: token.Hex()}, true, nil
}

// routes asks the swapper for each leg's swap of the asset the leg
// releases into the other, through the market's prime pool fee tier; a
// leg the contract will skip (nothing owed in the other asset) still gets
// its entry, as the market reads one per leg index.
func routes(ctx context.Context, q swap.Quoter, info *chain.MarketInfo, pos *chain.Position, market common.Address) (contracts.ExerciseSwaps, error) {
	use, get := info.CallAsset.Address, info.PutAsset.Address
	if !pos.Data.IsCall {
		use, get = get, use
	}
	reqs := make([]swap.Request, len(pos.Legs))
	for i, l := range pos.Legs {
		a0, a1, err := clamm.RangeAmounts(l.TickLower, l.TickUpper, l.LiquidityToUse)
		if err != nil {
			return contracts.ExerciseSwaps{}, problem.Wrap(problem.MarketUnsupported, err, "leg %d's ticks", i)
		}
		amount := a1
		if use == info.Token0 {
			amount = a0
		}
		reqs[i] = swap.Request{TokenIn: use, TokenOut: get, AmountIn: amount, Fee: info.Fee, Receiver: market}
	}
	quotes, err := q.Quote(ctx, reqs)
	if err != nil {
		return contracts.ExerciseSwaps{}, err
	}
	var out contracts.ExerciseSwaps
	for i := range reqs {
		out.Swapper = append(out.Swapper, q.SwapperFor(""))
		out.SwapData = append(out.SwapData, quotes[i].SwapData)
	}
	return out, nil
}
