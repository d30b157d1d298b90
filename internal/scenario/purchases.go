package scenario

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/subgraph/subgraphtest"
)

// purchaseLogIndex is the log index stated for every scenario mint's
// LogMintOption: a scenario mints one option per transaction, so the
// Purchase id (transaction hash - log index) stays unique.
const purchaseLogIndex = 7

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

// purchases are the scenario options' Purchase and Option entities. An
// option with an exercise is in state Exercised (the subgraph cannot tell a
// partial exercise from a full one; the chain's liquidity left can).
func (s *Scenario) purchases() ([]subgraphtest.Purchase, []subgraphtest.Option) {
	var out []subgraphtest.Purchase
	var opts []subgraphtest.Option
	exercised := map[uint64]bool{}
	for _, e := range s.Exercises {
		exercised[e.TokenID] = true
	}
	for _, o := range s.Options {
		size, err := s.Size(o)
		if err != nil || len(o.Legs) == 0 {
			continue
		}
		fees := o.ProtocolFees
		if fees == "" {
			fees = "0"
		}
		lo, hi := o.Range()
		tx := strings.ToLower(o.MintTxHash.Hex())
		out = append(out, subgraphtest.Purchase{
			ID: fmt.Sprintf("%s-%d", tx, purchaseLogIndex), Market: lower(s.Market.Address), Buyer: o.MintBuyer(),
			TxHash: tx, Timestamp: fmt.Sprint(o.MintTimestamp),
			IsCall: o.IsCall, Premium: o.Premium, ProtocolFees: fees, TotalAssetWithdrawn: size.String(),
			Option: subgraphtest.PurchasedOption{TokenID: fmt.Sprint(o.TokenID), TickLower: lo, TickUpper: hi,
				Expiry: fmt.Sprint(o.Expiry), MintTimestamp: fmt.Sprint(o.MintTimestamp)},
		})
		state := "Open"
		if exercised[o.TokenID] {
			state = "Exercised"
		}
		opts = append(opts, subgraphtest.Option{
			ID: fmt.Sprintf("%s-%d", lower(s.Market.Address), o.TokenID), Market: lower(s.Market.Address), Owner: lower(o.Owner), State: state,
			TokenID: fmt.Sprint(o.TokenID), IsCall: o.IsCall, TickLower: lo, TickUpper: hi, Expiry: fmt.Sprint(o.Expiry),
			Premium: o.Premium, ProtocolFees: fees, TotalAssetWithdrawn: size.String(),
			MintTimestamp: fmt.Sprint(o.MintTimestamp), MintTxHash: tx,
		})
	}
	return out, opts
}
