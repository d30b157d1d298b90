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

// marketEntity is the scenario market's Market entity: its sums derived
// from the purchases (each option's LogMintOption) and the exercises, the
// way the subgraph's mappings add them up, per UTC day and all time.
func (s *Scenario) marketEntity(purchases []subgraphtest.Purchase) subgraphtest.Market {
	version := s.Market.Version
	if version == 0 {
		version = 2
	}
	m := subgraphtest.Market{
		ID: lower(s.Market.Address), Version: version, CallAsset: lower(s.Market.CallAsset), PutAsset: lower(s.Market.PutAsset),
		PrimePool: subgraphtest.EntityRef{ID: lower(s.Market.PrimePool)}, MarketSums: zeroSums(),
	}
	days := map[int64]*subgraphtest.MarketSums{}
	dayOf := func(ts int64) *subgraphtest.MarketSums {
		start := ts / 86400 * 86400
		if days[start] == nil {
			z := zeroSums()
			days[start] = &z
		}
		return days[start]
	}
	for _, p := range purchases {
		ts, _ := new(big.Int).SetString(p.Timestamp, 10)
		for _, sums := range []*subgraphtest.MarketSums{&m.MarketSums, dayOf(ts.Int64())} {
			sums.Purchases++
			volume, premium, fees := &sums.PutVolume, &sums.PutPremium, &sums.PutProtocolFees
			if p.IsCall {
				volume, premium, fees = &sums.CallVolume, &sums.CallPremium, &sums.CallProtocolFees
			}
			*volume, *premium, *fees = addDec(*volume, p.TotalAssetWithdrawn), addDec(*premium, p.Premium), addDec(*fees, p.ProtocolFees)
		}
	}
	for _, e := range s.Exercises {
		m.Exercises++
		dayOf(e.Timestamp).Exercises++
	}
	for start, sums := range days {
		m.DayData = append(m.DayData, subgraphtest.MarketDay{Start: start, MarketSums: *sums})
	}
	return m
}

func zeroSums() subgraphtest.MarketSums {
	return subgraphtest.MarketSums{CallVolume: "0", PutVolume: "0", CallPremium: "0", PutPremium: "0", CallProtocolFees: "0", PutProtocolFees: "0"}
}

// addDec adds two decimal integer strings.
func addDec(a, b string) string {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	if x == nil || y == nil {
		panic(fmt.Sprintf("scenario: adding %q and %q", a, b))
	}
	return x.Add(x, y).String()
}
