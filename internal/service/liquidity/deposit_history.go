package liquidity

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// LPRequest is a validated request of one of the liquidity provider's
// reads: the user always, pool and handler only when given.
type LPRequest struct {
	ChainID       uint64
	User          common.Address
	Pool, Handler *common.Address
	First, Skip   int
}

func (r LPRequest) query() subgraph.LPQuery {
	return subgraph.LPQuery{User: r.User, Pool: r.Pool, Handler: r.Handler, First: r.First, Skip: r.Skip}
}

// LPRange is a handler range as the LP reads show it.
type LPRange struct {
	Handler   vocab.Handler   `json:"handler"`
	Hook      string          `json:"hook"`
	HookRules vocab.HookRules `json:"hookRules"`
	TokenID   string          `json:"tokenId"`
	TickLower int             `json:"tickLower"`
	TickUpper int             `json:"tickUpper"`
	// Prices are the range's bounds as prices of one whole token0 in whole
	// token1 (1.0001^tick scaled by the decimals): a range is not tied to
	// one market, so no call or put side is implied.
	Prices LPPrices `json:"prices"`
	Tokens LPTokens `json:"tokens"`
}

// LPPrices are a range's bounds as prices.
type LPPrices struct {
	TickLower float64 `json:"tickLower"`
	TickUpper float64 `json:"tickUpper"`
}

// LPTokens are the pool's two tokens.
type LPTokens struct {
	Token0 vocab.Token `json:"token0"`
	Token1 vocab.Token `json:"token1"`
}

// LPAmount is a quantity of a range's liquidity: Uniswap liquidity units L
// and the base units of each token they stand for, integer strings.
type LPAmount struct {
	Liquidity string `json:"liquidity"`
	Token0    string `json:"token0"`
	Token1    string `json:"token1"`
}

// LPHistory is one page of deposits or withdrawals and the subgraph block
// behind it.
type LPHistory struct {
	Records []LPHistoryRecord
	Block   uint64
}

// LPHistoryRecord is one deposit or withdrawal.
type LPHistoryRecord struct {
	// Type: "deposit"; or for withdrawals "burn" (the liquidity left the
	// pool to the user), "reserve" (shares burnt into liquidity reserved
	// for the user, still in the pool) or "withdrawReserved".
	Type string `json:"type"`
	LPRange
	// Shares minted (deposit) or burnt (burn, reserve); "0" for
	// withdrawReserved, which burns none.
	Shares string `json:"shares"`
	// Amount is the event's liquidity and the tokens it stood for at the
	// pool's price as of the event: for a deposit what the pool's mint
	// charged (rounded up), for the others what a burn of it pays
	// (rounded down; collected fees are not included).
	Amount      LPAmount `json:"amount"`
	TxHash      string   `json:"txHash"`
	BlockNumber string   `json:"blockNumber"`
	Timestamp   string   `json:"timestamp"`
}

var withdrawTypes = map[string]string{"Burn": "burn", "Reserve": "reserve", "WithdrawReserved": "withdrawReserved"}

// DepositHistory returns a page of the user's deposits, newest first,
// first and skip passed to the subgraph.
func (s *Liquidity) DepositHistory(ctx context.Context, req LPRequest) (LPHistory, error) {
	return s.lpHistory(ctx, req, false)
}

// WithdrawHistory returns a page of the user's withdrawals (burns,
// reservations, withdrawals of reserved liquidity), newest first.
func (s *Liquidity) WithdrawHistory(ctx context.Context, req LPRequest) (LPHistory, error) {
	return s.lpHistory(ctx, req, true)
}

func (s *Liquidity) holdingsUpstreams(chainID uint64) (*vocab.Upstreams, vocab.HoldingsSubgraph, error) {
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return nil, nil, err
	}
	return up, up.Subgraph, nil
}

func (s *Liquidity) lpHistory(ctx context.Context, req LPRequest, withdrawals bool) (LPHistory, error) {
	up, sg, err := s.holdingsUpstreams(req.ChainID)
	if err != nil {
		return LPHistory{}, err
	}
	page := sg.LPDepositHistory
	if withdrawals {
		page = sg.LPWithdrawHistory
	}
	recs, meta, err := page(ctx, req.query())
	if err != nil {
		return LPHistory{}, err
	}
	recs = recs[:min(len(recs), req.First)]
	pools := map[common.Address]bool{}
	var list []common.Address
	for _, r := range recs {
		if p := r.Pool.Addr(); !pools[p] {
			pools[p] = true
			list = append(list, p)
		}
	}
	tokens, err := up.Chain.Holdings().PoolTokens(ctx, list)
	if err != nil {
		return LPHistory{}, err
	}
	out := LPHistory{Records: make([]LPHistoryRecord, len(recs)), Block: meta.Block}
	for i, r := range recs {
		if out.Records[i], err = historyRecord(up, r, tokens[r.Pool.Addr()], withdrawals); err != nil {
			return LPHistory{}, err
		}
	}
	return out, nil
}

func historyRecord(up *vocab.Upstreams, r subgraph.LPRecord, pool chain.HoldingPool, withdrawal bool) (LPHistoryRecord, error) {
	rg, err := lpRange(up, r.LPRange, pool)
	if err != nil {
		return LPHistoryRecord{}, err
	}
	sa, sb, err := rangeSqrt(r.LPRange)
	if err != nil {
		return LPHistoryRecord{}, err
	}
	typ := "deposit"
	a0, a1 := clamm.MintAmounts(r.SqrtPriceX96.Int, sa, sb, r.Liquidity.Int)
	if withdrawal {
		typ = withdrawTypes[r.Kind]
		a0, a1 = clamm.AmountsForLiquidity(r.SqrtPriceX96.Int, sa, sb, r.Liquidity.Int)
	}
	return LPHistoryRecord{
		Type: typ, LPRange: rg, Shares: r.Shares.String(),
		Amount: LPAmount{Liquidity: r.Liquidity.String(), Token0: a0.String(), Token1: a1.String()},
		TxHash: r.TxHash, BlockNumber: r.BlockNumber.String(), Timestamp: r.Timestamp.String(),
	}, nil
}

// lpRange is the response's view of a subgraph range, with the pool's tokens.
func lpRange(up *vocab.Upstreams, r subgraph.LPRange, pool chain.HoldingPool) (LPRange, error) {
	if r.TickLower >= r.TickUpper || r.TickLower < clamm.MinTick || r.TickUpper > clamm.MaxTick {
		return LPRange{}, vocab.SubgraphGarbage(fmt.Errorf("LP range [%d, %d]", r.TickLower, r.TickUpper))
	}
	h := up.Config.HandlerInfo(r.Handler.Addr())
	m := clamm.Market{Token0IsCall: true, Decimals0: int(pool.Token0.Decimals), Decimals1: int(pool.Token1.Decimals)}
	return LPRange{
		Handler:   vocab.Handler{Name: h.Name, Deprecated: h.Deprecated, Handler: vocab.HandlerRef{Address: r.Handler.Addr().Hex()}, Pool: r.Pool.Addr().Hex()},
		Hook:      r.Hook.Addr().Hex(),
		HookRules: vocab.HookRulesOf(up.Config, r.Hook.Addr()),
		TokenID:   r.TokenID.String(), TickLower: r.TickLower, TickUpper: r.TickUpper,
		Prices: LPPrices{TickLower: m.TickPrice(r.TickLower), TickUpper: m.TickPrice(r.TickUpper)},
		Tokens: LPTokens{Token0: vocab.TokenOf(pool.Token0), Token1: vocab.TokenOf(pool.Token1)},
	}, nil
}

func rangeSqrt(r subgraph.LPRange) (sa, sb *big.Int, err error) {
	if sa, err = clamm.SqrtRatioAtTick(r.TickLower); err != nil {
		return nil, nil, vocab.SubgraphGarbage(err)
	}
	if sb, err = clamm.SqrtRatioAtTick(r.TickUpper); err != nil {
		return nil, nil, vocab.SubgraphGarbage(err)
	}
	return sa, sb, nil
}

// lpAmount is liquidity with the token amounts it stands for at sqrtP
// (rounded down: what burning it would pay).
func lpAmount(l, sqrtP, sa, sb *big.Int) LPAmount {
	a0, a1 := clamm.AmountsForLiquidity(sqrtP, sa, sb, l)
	return LPAmount{Liquidity: l.String(), Token0: a0.String(), Token1: a1.String()}
}
