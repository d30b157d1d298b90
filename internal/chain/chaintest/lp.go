package chaintest

import (
	"bytes"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// What a liquidity provider's prepared deposit or withdrawal reads, as the
// fake's contracts answer it: no account holds handler shares or reserved
// liquidity (the fake keeps no positions), a handler accepts every
// position manager the node has as its app and computes
// tokensToPullForMint from its pool's price as the real one does
// (LiquidityAmounts.getAmountsForLiquidity), a position manager whitelists
// the handlers it pairs with an app (Allow), and a market approves its
// prime pool. Token balances and allowances are the tokens' (balances.go).
// Transactions are not run, but for the gateway's ActionProbe of a burn, a
// reservation or a reserved withdrawal (lpprobe.go), and of a prepare's
// approvals and the purchase or deposit that spends them (spend.go).

// lpHandlerCall answers a handler's LP getters; answered is false for
// other methods (handlerCall's).
func (n *Node) lpHandlerCall(h *Handler, data []byte) (ret []byte, ok, answered bool) {
	method, err := contracts.HandlerLP.MethodById(data[:4])
	if err != nil || method.Name == "reserveCooldown" {
		return nil, false, false
	}
	ret, ok = dispatch(contracts.HandlerLP, data, func(name string, args []any) ([]any, bool) {
		switch name {
		case "whitelistedApps":
			return []any{n.PositionManagers[args[0].(common.Address)] != nil}, true
		case "balanceOf":
			return []any{new(big.Int)}, true
		case "reservedLiquidityPerUser":
			return []any{new(big.Int), uint64(0)}, h.Version != 1
		case "tokensToPullForMint":
			return n.tokensToPull(h, args[0].([]byte))
		}
		return nil, false
	})
	return ret, ok, true
}

// tokensToPull decodes a mint payload (V2: pool, hook, ticks, liquidity;
// V1 without the hook) and prices it at the pool's current price.
func (n *Node) tokensToPull(h *Handler, payload []byte) ([]any, bool) {
	p, lo, hi, liquidity, ok := n.rangePayload(h, payload)
	if !ok {
		return nil, false
	}
	a0, a1 := clamm.AmountsForLiquidity(p.SqrtPriceX96, lo, hi, liquidity)
	return []any{[]common.Address{p.Token0, p.Token1}, []*big.Int{a0, a1}}, true
}

// lpPositionManagerCall answers whitelistedHandlers: true for a handler
// the manager pairs with some app.
func lpPositionManagerCall(pm *PositionManager, data []byte) ([]byte, bool, bool) {
	if !bytes.Equal(data[:4], contracts.PositionManagerLP.Methods["whitelistedHandlers"].ID) {
		return nil, false, false
	}
	ret, ok := dispatch(contracts.PositionManagerLP, data, func(_ string, args []any) ([]any, bool) {
		return []any{pm.Handlers[args[0].(common.Address)]}, true
	})
	return ret, ok, true
}

// approvedPool answers a market's approvedPools: its ApprovedPools, or its
// prime pool alone when it lists none.
func approvedPool(m *Market, data []byte) ([]byte, bool, bool) {
	if !bytes.Equal(data[:4], contracts.MarketPools.Methods["approvedPools"].ID) {
		return nil, false, false
	}
	ret, ok := dispatch(contracts.MarketPools, data, func(_ string, args []any) ([]any, bool) {
		pool := args[0].(common.Address)
		if m.ApprovedPools == nil {
			return []any{pool == m.PrimePool}, true
		}
		return []any{slices.Contains(m.ApprovedPools, pool)}, true
	})
	return ret, ok, true
}
