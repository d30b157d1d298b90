package scenario

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
)

// AutoExerciserState is the chain's AutoExerciseTimeBased as the scenario
// states it; its address is the configuration's (the deployments
// registry's), its fee constants the contract's.
type AutoExerciserState struct {
	FeeTo        common.Address `json:"feeTo"`
	TimeToSettle uint64         `json:"timeToSettle"`
}

// DelegateUpdate is an owner's updateExerciseDelegate(delegate, status).
type DelegateUpdate struct {
	Owner     common.Address `json:"owner"`
	Delegate  common.Address `json:"delegate"`
	Status    bool           `json:"status"`
	Timestamp int64          `json:"timestamp"`
	TxHash    common.Hash    `json:"txHash"`
}

// Settlement is settleOption of an expired option by Settler, every leg in
// full, at the prime pool's price SqrtRatioAtTick(tick), which must lie
// outside each leg's range: a leg whose range holds only the collateral
// there goes back to its liquidity providers as it is; a leg whose range
// holds only the other token is swapped through the chain's swapper (at
// that price, no fee, no price impact) and the surplus over what its
// liquidity providers are owed goes to the settler.
type Settlement struct {
	TokenID   uint64         `json:"tokenId"`
	Settler   common.Address `json:"settler"`
	Tick      int            `json:"tick"`
	Timestamp int64          `json:"timestamp"`
	TxHash    common.Hash    `json:"txHash"`
}

// settled says whether the scenario settles option id.
func (s *Scenario) settled(id uint64) bool {
	for _, st := range s.Settlements {
		if st.TokenID == id {
			return true
		}
	}
	return false
}

// closed says whether option id ends with no liquidity left: exercised in
// full or settled.
func (s *Scenario) closed(id uint64) bool {
	for _, e := range s.Exercises {
		if e.TokenID == id {
			return true
		}
	}
	return s.settled(id)
}

// settlementLeg is what settling one leg does at the settlement's price.
type settlementLeg struct {
	liquidity   *big.Int
	leg         clamm.Leg
	inTheMoney  bool
	swapOut     *big.Int // what the swap delivered (in the money)
	settlerGets *big.Int // swapOut - amountReq (in the money), else 0
}

// settlementAmounts works out each leg of a settlement and what the
// settler keeps in all.
func (s *Scenario) settlementAmounts(st Settlement) ([]settlementLeg, *big.Int, error) {
	o, ok := s.option(st.TokenID)
	if !ok {
		return nil, nil, fmt.Errorf("settlement of unknown option %d", st.TokenID)
	}
	if st.Timestamp <= o.Expiry {
		return nil, nil, fmt.Errorf("option %d settled at %d, not after its expiry %d", o.TokenID, st.Timestamp, o.Expiry)
	}
	a, err := s.assetsOf(o)
	if err != nil {
		return nil, nil, err
	}
	is0 := a.is0
	sqrt, err := clamm.SqrtRatioAtTick(st.Tick)
	if err != nil {
		return nil, nil, err
	}
	total := new(big.Int)
	var out []settlementLeg
	for _, l := range o.Legs {
		if st.Tick >= l.TickLower && st.Tick < l.TickUpper {
			return nil, nil, fmt.Errorf("option %d settled at tick %d, inside a leg's range [%d, %d)", o.TokenID, st.Tick, l.TickLower, l.TickUpper)
		}
		liq, _ := new(big.Int).SetString(l.Liquidity, 10)
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, liq, is0)
		if err != nil {
			return nil, nil, err
		}
		sl := settlementLeg{liquidity: liq, leg: leg, settlerGets: new(big.Int)}
		// The range holds only the other token once the price has left it
		// on the far side: above it when the collateral is token0.
		sl.inTheMoney = (is0 && st.Tick >= l.TickUpper) || (!is0 && st.Tick < l.TickLower)
		if sl.inTheMoney {
			sl.swapOut = clamm.SwapAtPrice(leg.AmountToSwap, sqrt, is0)
			if sl.swapOut.Cmp(leg.AmountReq) < 0 {
				return nil, nil, fmt.Errorf("option %d: a leg's swap at tick %d does not cover its liquidity providers", o.TokenID, st.Tick)
			}
			sl.settlerGets = new(big.Int).Sub(sl.swapOut, leg.AmountReq)
			total.Add(total, sl.settlerGets)
		}
		out = append(out, sl)
	}
	return out, total, nil
}

// settle is settleOption's logs, leg by leg in the real V2 market's order
// (an in-the-money leg: the collateral to the swapper, the swap, the
// proceeds back, the surplus to the settler; then every leg's
// LogUnusePosition), then LogSettleOption naming the owner.
func (h *history) settle(st Settlement) error {
	s := h.s
	o, ok := s.option(st.TokenID)
	if !ok {
		return fmt.Errorf("settlement of unknown option %d", st.TokenID)
	}
	a, err := s.assetsOf(o)
	if err != nil {
		return err
	}
	m := s.Market.Address
	h.add(&tx{ts: st.Timestamp, hash: st.TxHash, from: st.Settler, to: m, build: func(uint64) ([]types.Log, error) {
		legs, _, err := s.settlementAmounts(st)
		if err != nil {
			return nil, err
		}
		var out []types.Log
		for i, l := range o.Legs {
			p := h.ranges[rangeKey{l.Handler, l.Pool, l.Hook, l.TickLower, l.TickUpper}]
			sl := legs[i]
			if sl.inTheMoney {
				out = append(append(out, h.swapLogs(a, sl.leg.AmountToSwap, sl.swapOut, st.Tick)...), ev.erc20(a.get, m, st.Settler, sl.settlerGets))
			}
			out = append(out, ev.log(l.Handler, ev.unuse, p.id, sl.liquidity))
			p.used.Sub(p.used, sl.liquidity)
		}
		out = append(out, ev.log(m, ev.settle, o.Owner, new(big.Int).SetUint64(o.TokenID)))
		return logs(out...)
	}})
	return nil
}

// delegate is updateExerciseDelegate by the owner.
func (h *history) delegate(d DelegateUpdate) {
	m := h.s.Market.Address
	h.add(&tx{ts: d.Timestamp, hash: d.TxHash, from: d.Owner, to: m, build: func(uint64) ([]types.Log, error) {
		return logs(ev.log(m, ev.delegate, d.Owner, d.Delegate, d.Status))
	}})
}

// deployAutoExerciser deploys the chain's auto-exerciser (ch's, when it
// names one) on the node: as one of the scenarios states it, else with no
// fee recipient and the contract's default window of 5 minutes.
func deployAutoExerciser(node *chaintest.Node, ch *config.Chain, scenarios []*Scenario) {
	if ch == nil || ch.AutoExerciser == (common.Address{}) {
		return
	}
	ae := &chaintest.AutoExerciser{TimeToSettle: 300}
	for _, s := range scenarios {
		if s.AutoExerciser != nil {
			ae = &chaintest.AutoExerciser{FeeTo: s.AutoExerciser.FeeTo, TimeToSettle: s.AutoExerciser.TimeToSettle}
		}
	}
	node.Lock()
	node.AutoExercisers[ch.AutoExerciser] = ae
	node.Unlock()
}
