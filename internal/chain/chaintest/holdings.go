package chaintest

import (
	"bytes"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// HandlerRange is one range of a handler as its liquidity providers' reads
// see it: the TokenIdInfo fields they use, each holder's shares and (V2)
// reservation.
type HandlerRange struct {
	TotalLiquidity, TotalSupply, LiquidityUsed, DonatedLiquidity, ReservedLiquidity *big.Int
	LastDonation                                                                    uint64
	Shares                                                                          map[common.Address]*big.Int
	Reserved                                                                        map[common.Address]Reservation
}

// Reservation is reservedLiquidityPerUser(tokenId, user).
type Reservation struct {
	Liquidity   *big.Int
	LastReserve uint64
}

// HandlerLP is a handler's liquidity-provider state: its ranges by token
// id (decimal) and its donation lock and reserve cooldown (answered by a
// V2 handler only, as reserveCooldown is).
type HandlerLP struct {
	Ranges              map[string]*HandlerRange
	LockedBlockDuration uint64
	ReserveCooldown     uint64
}

// Range returns the range of tokenID, made empty the first time.
func (lp *HandlerLP) Range(tokenID *big.Int) *HandlerRange {
	if lp.Ranges == nil {
		lp.Ranges = map[string]*HandlerRange{}
	}
	r, ok := lp.Ranges[tokenID.String()]
	if !ok {
		z := func() *big.Int { return new(big.Int) }
		r = &HandlerRange{TotalLiquidity: z(), TotalSupply: z(), LiquidityUsed: z(), DonatedLiquidity: z(), ReservedLiquidity: z(),
			Shares: map[common.Address]*big.Int{}, Reserved: map[common.Address]Reservation{}}
		lp.Ranges[tokenID.String()] = r
	}
	return r
}

// holdingsCall answers the liquidity providers' getters of a handler with
// LP state (answered false when the call is none of them).
func holdingsCall(h *Handler, data []byte) (ret []byte, ok, answered bool) {
	if h.LP == nil || len(data) < 4 {
		return nil, false, false
	}
	m, err := contracts.HoldingsHandler.MethodById(data[:4])
	if err != nil || !holdingsReads[m.Name] {
		return nil, false, false // convertToAssets and the like: another part of the fake answers them
	}
	if (m.Name == "reserveCooldown" || m.Name == "reservedLiquidityPerUser") && h.Version == 1 {
		return nil, false, true
	}
	lp := h.LP
	ret, ok = dispatch(contracts.HoldingsHandler, data, func(name string, args []any) ([]any, bool) {
		switch name {
		case "lockedBlockDuration":
			return []any{lp.LockedBlockDuration}, true
		case "reserveCooldown":
			return []any{lp.ReserveCooldown}, true
		case "balanceOf":
			return []any{orZero(lp.Range(args[1].(*big.Int)).Shares[args[0].(common.Address)])}, true
		case "tokenIds":
			r := lp.Range(args[0].(*big.Int))
			z := new(big.Int)
			return []any{r.TotalLiquidity, r.TotalSupply, r.LiquidityUsed, z, z, z, z, r.LastDonation, r.DonatedLiquidity,
				common.Address{}, common.Address{}, z, r.ReservedLiquidity}, true
		case "reservedLiquidityPerUser":
			res := lp.Range(args[0].(*big.Int)).Reserved[args[1].(common.Address)]
			return []any{orZero(res.Liquidity), res.LastReserve}, true
		}
		return nil, false
	})
	if ok && h.Version == 1 && bytes.Equal(data[:4], contracts.HoldingsHandler.Methods["tokenIds"].ID) {
		ret = ret[:contracts.HandlerV1Words*32]
	}
	return ret, ok, true
}

// holdingsReads are the getters holdingsCall answers.
var holdingsReads = map[string]bool{"lockedBlockDuration": true, "reserveCooldown": true, "balanceOf": true, "tokenIds": true, "reservedLiquidityPerUser": true}

func orZero(x *big.Int) *big.Int {
	if x == nil {
		return new(big.Int)
	}
	return x
}
