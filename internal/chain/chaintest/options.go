package chaintest

import (
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// Option is an option's on-chain state.
type Option struct {
	Owner     common.Address
	IsCall    bool
	TickLower int
	TickUpper int
	Expiry    uint64
	Legs      []Leg
}

// Leg is one opTickMap entry; Liquidity is the current liquidityToUse.
type Leg struct {
	Handler, Pool, Hook common.Address
	TickLower           int
	TickUpper           int
	Liquidity           *big.Int
}

// Swapper is a swapper contract as the fake market's exercise sees it: it
// receives amountIn of tokenIn and delivers out of tokenOut, or reverts.
type Swapper interface {
	Swap(tokenIn, tokenOut common.Address, amountIn *big.Int, swapData []byte) (out *big.Int, revert []byte)
}

// Errors and reverts the fake market and swappers answer with.
func customError(name string) []byte {
	return append([]byte(nil), contracts.OptionMarketErrors.Errors[name].ID.Bytes()[:4]...)
}

// ErrorString is the revert data of require(false, msg).
func ErrorString(msg string) []byte {
	sel := []byte{0x08, 0xc3, 0x79, 0xa0}
	t, _ := abi.NewType("string", "", nil)
	enc, _ := abi.Arguments{{Type: t}}.Pack(msg)
	return append(sel, enc...)
}

// IdealSwap is the fake DEX: the whole amount at the pool's current price
// after the pool's fee, with no price impact. The fake QuoterV2, the fake
// SwapRouter swapper and the fake 1inch API all price with it, so a quote
// and the swap it predicts agree, as they do on chain within a block.
func (n *Node) IdealSwap(tokenIn, tokenOut common.Address, amountIn *big.Int, fee uint32) (*big.Int, bool) {
	for _, p := range n.Pools {
		if p.Fee != fee || !((p.Token0 == tokenIn && p.Token1 == tokenOut) || (p.Token1 == tokenIn && p.Token0 == tokenOut)) {
			continue
		}
		afterFee := new(big.Int).Mul(amountIn, big.NewInt(int64(1_000_000-fee)))
		afterFee.Quo(afterFee, big.NewInt(1_000_000))
		return clamm.SwapAtPrice(afterFee, p.SqrtPriceX96, tokenIn == p.Token0), true
	}
	return nil, false
}

// PoolFee returns the fee of a pool trading the pair, for fakes that route
// without a fee parameter (1inch).
func (n *Node) PoolFee(a, b common.Address) (uint32, bool) {
	for _, p := range n.Pools {
		if (p.Token0 == a && p.Token1 == b) || (p.Token0 == b && p.Token1 == a) {
			return p.Fee, true
		}
	}
	return 0, false
}

// UniV3Swapper is the SwapRouterSwapper: swapData = abi.encode(uint24 fee,
// uint256 amountOutMinimum), reverting "Too little received" like SwapRouter.
type UniV3Swapper struct{ Node *Node }

// Swap implements Swapper. The node's lock is held by the caller.
func (s UniV3Swapper) Swap(tokenIn, tokenOut common.Address, amountIn *big.Int, swapData []byte) (*big.Int, []byte) {
	vals, err := contracts.UniV3SwapData.Unpack(swapData)
	if err != nil {
		return nil, nil
	}
	fee, minOut := vals[0].(*big.Int), vals[1].(*big.Int)
	out, ok := s.Node.IdealSwap(tokenIn, tokenOut, amountIn, uint32(fee.Uint64()))
	if !ok {
		return nil, nil
	}
	if out.Cmp(minOut) < 0 {
		return nil, ErrorString("Too little received")
	}
	return out, nil
}

func (n *Node) quoterCall(data []byte) ([]byte, bool) {
	return dispatch(contracts.QuoterV2, data, func(name string, args []any) ([]any, bool) {
		p := args[0].(struct {
			TokenIn           common.Address `json:"tokenIn"`
			TokenOut          common.Address `json:"tokenOut"`
			AmountIn          *big.Int       `json:"amountIn"`
			Fee               *big.Int       `json:"fee"`
			SqrtPriceLimitX96 *big.Int       `json:"sqrtPriceLimitX96"`
		})
		out, ok := n.IdealSwap(p.TokenIn, p.TokenOut, p.AmountIn, uint32(p.Fee.Uint64()))
		if !ok {
			return nil, false
		}
		return []any{out, new(big.Int), uint32(0), big.NewInt(100_000)}, true
	})
}

// exercise runs exerciseOption as eth_call from `from`, with the contract's
// checks in its order: owner, expiry, array lengths, then per leg the swap
// and NotEnoughAfterSwap.
func (n *Node) exercise(m *Market, from common.Address, args []any) ([]any, []byte) {
	p := args[0].(struct {
		OptionId            *big.Int         `json:"optionId"`
		Swapper             []common.Address `json:"swapper"`
		SwapData            [][]byte         `json:"swapData"`
		LiquidityToExercise []*big.Int       `json:"liquidityToExercise"`
	})
	o, ok := m.Options[p.OptionId.Uint64()]
	if !ok || !p.OptionId.IsUint64() {
		return nil, ErrorString("ERC721: invalid token ID")
	}
	if from != o.Owner && !m.Delegates[o.Owner][from] {
		return nil, customError("DopexV2OptionMarket__NotOwnerOrDelegator")
	}
	if new(big.Int).SetUint64(o.Expiry).Cmp(new(big.Int).SetUint64(n.BlockTimestamp)) < 0 {
		return nil, customError("DopexV2OptionMarket__OptionExpired")
	}
	if len(p.Swapper) != len(o.Legs) || len(p.SwapData) != len(o.Legs) || len(p.LiquidityToExercise) != len(o.Legs) {
		return nil, customError("DopexV2OptionMarket__ArrayLenMismatch")
	}
	useAsset, getAsset := m.PutAsset, m.CallAsset
	if o.IsCall {
		useAsset, getAsset = m.CallAsset, m.PutAsset
	}
	pool := n.Pools[m.PrimePool]
	profit, relocked := new(big.Int), new(big.Int)
	for i, l := range o.Legs {
		liq := p.LiquidityToExercise[i]
		if liq.Sign() == 0 {
			continue
		}
		if liq.Cmp(l.Liquidity) > 0 {
			return nil, ErrorString("liquidity to exercise exceeds the leg's")
		}
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, liq, useAsset == pool.Token0)
		if err != nil {
			return nil, ErrorString("bad ticks")
		}
		sw, ok := n.Swappers[p.Swapper[i]]
		if !ok {
			return nil, nil // calling a contract that does not exist
		}
		out, revert := sw.Swap(useAsset, getAsset, leg.AmountToSwap, p.SwapData[i])
		if out == nil {
			return nil, revert
		}
		if out.Cmp(leg.AmountReq) < 0 {
			return nil, customError("DopexV2OptionMarket__NotEnoughAfterSwap")
		}
		profit.Add(profit, new(big.Int).Sub(out, leg.AmountReq))
		relocked.Add(relocked, leg.AmountToSwap)
	}
	return []any{useAsset, getAsset, profit, relocked}, nil
}
