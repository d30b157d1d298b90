package trade

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// SettlementRequest is a validated settlement-history request: the
// settlements of options User owned when they were settled, on Market
// when it is not nil, else on every market of the chain.
type SettlementRequest struct {
	ChainID     uint64
	User        common.Address
	Market      *common.Address
	First, Skip int
}

// SettlementHistory is one page of settlements and the block behind it.
type SettlementHistory struct {
	Records []SettlementRecord
	Block   uint64
}

// SettlementRecord is one settlement (settleOption after expiry): the
// option, who settled it, what the settlement moved and each leg's
// liquidity returned to its range.
type SettlementRecord struct {
	OptionID string  `json:"optionId"`
	Market   string  `json:"optionMarket"`
	Type     string  `json:"type"`
	Strike   float64 `json:"strike"`
	Expiry   string  `json:"expiry"`
	// Owner held the option when it was settled (LogSettleOption.user).
	Owner string `json:"owner"`
	// Settler called settleOption; Sender sent the transaction (they
	// differ when the settler is a contract, an open-settlement contract
	// passing on what it got); KnownSettler: the deployments registry
	// lists the settler for this chain.
	Settler      string `json:"settler"`
	Sender       string `json:"sender"`
	KnownSettler bool   `json:"knownSettler"`
	// Outcome is "settled" when the settler kept value (the option was in
	// the money and its owner did not exercise it), "expiredWorthless"
	// when the collateral went back to the liquidity providers as it was.
	Outcome string `json:"outcome"`
	// SettlerProfit is what the settler kept in the profit token (the
	// in-the-money legs' swap surplus); for legs whose range held the
	// price it got SettlerCollateral of the collateral and paid
	// SettlerPaid of the profit token.
	SettlerProfit     string             `json:"settlerProfit"`
	ProfitToken       vocab.Token        `json:"profitToken"`
	SettlerCollateral string             `json:"settlerCollateral"`
	SettlerPaid       string             `json:"settlerPaid"`
	SizeToken         vocab.Token        `json:"sizeToken"`
	Legs              []SettledLegRecord `json:"legs"`
	// SettlePrice is the prime pool's price (put asset per call asset)
	// as of the settlement's log, after its own swaps.
	SettlePrice float64 `json:"settlePrice"`
	BlockNumber string  `json:"blockNumber"`
	Timestamp   string  `json:"timestamp"`
	TxHash      string  `json:"txHash"`
}

// SettledLegRecord is one leg of a settlement: its index and range, and
// the liquidity the settlement returned to the range (0 for a leg it
// skipped).
type SettledLegRecord struct {
	Index int `json:"index"`
	PositionLeg
}

// SettlementHistory returns a page of the settlements of the options the
// user owned when they were settled, newest first: one subgraph query,
// and each market's immutables (cached) for its tokens and prices.
func (s *Trade) SettlementHistory(ctx context.Context, req SettlementRequest) (SettlementHistory, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return SettlementHistory{}, err
	}
	var (
		list []subgraph.Settlement
		meta subgraph.Meta
	)
	g, gctx := errgroup.WithContext(ctx)
	if req.Market != nil { // its immutables alongside the page, and a 404 for a market that is none
		g.Go(func() error { _, err := up.Chain.Market(gctx, *req.Market); return err })
	}
	g.Go(func() (err error) {
		list, meta, err = up.Subgraph.SettlementHistory(gctx, subgraph.SettlementQuery{User: req.User, Market: req.Market, First: req.First, Skip: req.Skip})
		return
	})
	if err := g.Wait(); err != nil {
		return SettlementHistory{}, err
	}
	infos, err := marketInfos(ctx, up, list)
	if err != nil {
		return SettlementHistory{}, err
	}
	records := make([]SettlementRecord, 0, len(list))
	for _, st := range list {
		r, err := settlementRecord(st, infos[st.Market.Addr()], up.Config.IsSettler(st.Settler.Addr()))
		if err != nil {
			return SettlementHistory{}, vocab.SubgraphGarbage(fmt.Errorf("settlement %s: %w", st.ID, err))
		}
		records = append(records, r)
	}
	return SettlementHistory{Records: records, Block: meta.Block}, nil
}

// marketInfos reads the immutables of the settlements' markets, in parallel.
func marketInfos(ctx context.Context, up *vocab.Upstreams, list []subgraph.Settlement) (map[common.Address]*chain.MarketInfo, error) {
	out := map[common.Address]*chain.MarketInfo{}
	for _, st := range list {
		out[st.Market.Addr()] = nil
	}
	results := make(chan *chain.MarketInfo, len(out))
	g, gctx := errgroup.WithContext(ctx)
	for m := range out {
		g.Go(func() error {
			info, err := up.Chain.Market(gctx, m)
			results <- info
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	close(results)
	for info := range results {
		out[info.Market] = info
	}
	return out, nil
}

func settlementRecord(st subgraph.Settlement, info *chain.MarketInfo, known bool) (SettlementRecord, error) {
	o := st.Option
	if info == nil || o.TickLower >= o.TickUpper || o.TickLower < clamm.MinTick || o.TickUpper > clamm.MaxTick || !txHashRE.MatchString(st.TxHash) {
		return SettlementRecord{}, fmt.Errorf("option ticks [%d, %d], transaction %q", o.TickLower, o.TickUpper, st.TxHash)
	}
	tok0, tok1 := info.TokenByAddress(info.Token0), info.TokenByAddress(info.Token1)
	m := clamm.Market{Token0IsCall: info.Token0IsCall(), Decimals0: int(tok0.Decimals), Decimals1: int(tok1.Decimals)}
	r := SettlementRecord{
		OptionID: o.TokenID.String(), Market: info.Market.Hex(), Type: "put", Strike: m.TickPrice(clamm.PutStrikeTick(o.TickLower, o.TickUpper)),
		Expiry: o.Expiry.String(), Owner: st.User.Addr().Hex(), Settler: st.Settler.Addr().Hex(), Sender: st.Sender.Addr().Hex(), KnownSettler: known,
		Outcome: OutcomeExpiredWorthless, SettlerProfit: st.SettlerProfit.String(), SettlerCollateral: st.SettlerCollateral.String(),
		SettlerPaid: st.SettlerPaid.String(), ProfitToken: vocab.TokenOf(info.CallAsset), SizeToken: vocab.TokenOf(info.PutAsset),
		SettlePrice: m.SqrtPriceX96Price(st.SqrtPriceX96.Int), BlockNumber: st.BlockNumber.String(), Timestamp: st.Timestamp.String(), TxHash: st.TxHash,
		Legs: make([]SettledLegRecord, len(st.Legs)),
	}
	if o.IsCall {
		r.Type, r.Strike = "call", m.TickPrice(clamm.CallStrikeTick(o.TickLower, o.TickUpper))
		r.ProfitToken, r.SizeToken = vocab.TokenOf(info.PutAsset), vocab.TokenOf(info.CallAsset)
	}
	if st.SettlerProfit.Sign() > 0 || st.SettlerCollateral.Sign() > 0 {
		r.Outcome = OutcomeSettled
	}
	for i, l := range st.Legs {
		g := l.Leg // the subgraph client refuses a leg without its range
		r.Legs[i] = SettledLegRecord{Index: l.Index, PositionLeg: PositionLeg{Handler: g.Handler.Addr().Hex(), Pool: g.Pool.Addr().Hex(),
			Hook: g.Hook.Addr().Hex(), TickLower: g.TickLower, TickUpper: g.TickUpper, Liquidity: l.Liquidity.String()}}
	}
	return r, nil
}
