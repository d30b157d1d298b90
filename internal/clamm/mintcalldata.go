package clamm

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// MintLeg is one of mintOption's OptionTicks: the range a leg borrows and
// how much of its liquidity.
type MintLeg struct {
	Handler, Pool, Hook  common.Address
	TickLower, TickUpper int
	Liquidity            *big.Int
}

// MintParams is DopexV2OptionMarketV2's OptionParams: the legs in order,
// the option's ticks, its ttl and side, and the most the buyer lets the
// market take (premium plus protocol fee).
type MintParams struct {
	Legs                 []MintLeg
	TickLower, TickUpper int
	TTL                  uint64
	IsCall               bool
	MaxCostAllowance     *big.Int
}

// MintOptionCalldata ABI-encodes mintOption(params) (selector 0xbde0a7df).
func MintOptionCalldata(p MintParams) ([]byte, error) {
	type optionTicks struct {
		Handler        common.Address
		Pool           common.Address
		Hook           common.Address
		TickLower      *big.Int
		TickUpper      *big.Int
		LiquidityToUse *big.Int
	}
	ticks := make([]optionTicks, len(p.Legs))
	for i, l := range p.Legs {
		if l.Liquidity == nil {
			return nil, fmt.Errorf("mintOption leg %d has no liquidity", i)
		}
		ticks[i] = optionTicks{l.Handler, l.Pool, l.Hook, big.NewInt(int64(l.TickLower)), big.NewInt(int64(l.TickUpper)), l.Liquidity}
	}
	arg := struct {
		OptionTicks      []optionTicks
		TickLower        *big.Int
		TickUpper        *big.Int
		Ttl              *big.Int
		IsCall           bool
		MaxCostAllowance *big.Int
	}{ticks, big.NewInt(int64(p.TickLower)), big.NewInt(int64(p.TickUpper)), new(big.Int).SetUint64(p.TTL), p.IsCall, p.MaxCostAllowance}
	return contracts.PackChecked(contracts.MintOption, "mintOption", arg)
}

// ApproveCalldata ABI-encodes ERC20 approve(spender, amount) (selector 0x095ea7b3).
func ApproveCalldata(spender common.Address, amount *big.Int) ([]byte, error) {
	return contracts.PackChecked(contracts.ERC20Approve, "approve", spender, amount)
}
