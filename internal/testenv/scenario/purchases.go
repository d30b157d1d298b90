package scenario

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
)

// MintBuyer is who bought the option: Minter, or Owner when not stated.
func (o Option) MintBuyer() string {
	if o.Minter == (common.Address{}) {
		return lower(o.Owner)
	}
	return lower(o.Minter)
}

// Size is LogMintOption.totalAssetWithdrawn: the collateral the legs'
// liquidity held at mint. A scenario mints out of the money, where a range
// holds only the collateral, so each leg adds its whole range's amount of
// the collateral token (what mintOption sums from getAmountsForLiquidity).
func (s *Scenario) Size(o Option) (*big.Int, error) {
	pool, ok := s.primePool()
	if !ok {
		return nil, fmt.Errorf("no prime pool")
	}
	collateral := s.Market.PutAsset
	if o.IsCall {
		collateral = s.Market.CallAsset
	}
	size := new(big.Int)
	for _, l := range o.Legs {
		liq, ok := new(big.Int).SetString(l.Liquidity, 10)
		if !ok {
			return nil, fmt.Errorf("option %d: bad liquidity %q", o.TokenID, l.Liquidity)
		}
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, liq, collateral == pool.Token0)
		if err != nil {
			return nil, err
		}
		size.Add(size, leg.AmountToSwap)
	}
	return size, nil
}
