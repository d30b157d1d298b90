package scenario

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
)

// What the compiled mappings write for each scenario's history is the
// state the scenario states: every listed range's liquidity, its daily
// donations and fee compounds with their prices, every option's owner,
// buyer, state and legs, every exercise's amounts as the exercise maths
// gives them (clamm.ExerciseLeg, clamm.SwapAtPrice), the pools' head
// prices, the market's counts and sums (premiums, sizes) and the head block.
func TestIndexedStoreIsTheScenario(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "scenarios", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			scs, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			s := scs[0]
			n := chaintest.NewNode(t)
			s.Populate(n)
			sg := graphnodetest.New()
			if err := Index(&sg.Store, n, scs); err != nil {
				t.Fatal(err)
			}
			c := checker{t: t, st: sg.Store}
			c.strikes(s)
			c.options(s)
			c.exercises(s)
			c.settlements(s)
			c.delegates(s)
			for _, p := range s.Pools {
				if sg.Store.Get("Pool", lower(p.Address)) == nil {
					continue // a pool no market or handler names is not indexed
				}
				sqrt, _ := p.SqrtPriceX96()
				c.field("Pool", lower(p.Address), "sqrtPriceX96", sqrt.String())
				c.field("Pool", lower(p.Address), "tick", fmt.Sprint(p.Tick))
			}
			if head := sg.Store.Head(); head.Number != s.Block.Number || head.Timestamp != uint64(s.Block.Timestamp) {
				t.Errorf("head %+v, scenario's %+v", head, s.Block)
			}
		})
	}
}

type checker struct {
	t  *testing.T
	st *graphnode.Store
}

func (c checker) field(typ, id, name, want string) {
	c.t.Helper()
	e := c.st.Get(typ, id)
	if e == nil {
		c.t.Errorf("%s %s: missing", typ, id)
		return
	}
	if got := fmt.Sprint(e[name].JSON()); got != want {
		c.t.Errorf("%s %s: %s = %s, want %s", typ, id, name, got, want)
	}
}

func (c checker) strikes(s *Scenario) {
	for _, st := range s.Strikes {
		id := st.ID()
		c.field("Strike", id, "totalLiquidity", st.TotalLiquidity)
		c.field("Strike", id, "usedLiquidity", st.UsedLiquidity)
		for _, d := range st.DailyDonations {
			sqrt, _ := clamm.SqrtRatioAtTick(d.Tick)
			c.field("DailyDonation", fmt.Sprintf("%s-%d", id, d.Start), "donation", d.Liquidity)
			c.field("DailyDonation", fmt.Sprintf("%s-%d", id, d.Start), "sqrtPriceX96", sqrt.String())
		}
		for _, d := range st.DailyFeeCompounds {
			sqrt, _ := clamm.SqrtRatioAtTick(d.Tick)
			c.field("DailyFeeCompound", fmt.Sprintf("%s-%d", id, d.Start), "compound", d.Liquidity)
			c.field("DailyFeeCompound", fmt.Sprintf("%s-%d", id, d.Start), "sqrtPriceX96", sqrt.String())
		}
	}
}

func (c checker) options(s *Scenario) {
	exercised := map[uint64]bool{}
	for _, e := range s.Exercises {
		exercised[e.TokenID] = true
	}
	market := lower(s.Market.Address)
	for _, o := range s.Options {
		id := fmt.Sprintf("%s-%d", market, o.TokenID)
		state := "Open"
		if exercised[o.TokenID] {
			state = "Exercised"
		}
		if s.settled(o.TokenID) {
			state = "Settled"
		}
		c.field("Option", id, "owner", lower(o.Owner))
		c.field("Option", id, "minter", o.MintBuyer())
		c.field("Option", id, "state", state)
		c.field("Option", id, "premium", o.Premium)
		c.field("Option", id, "expiry", fmt.Sprint(o.Expiry))
		c.field("Option", id, "mintTimestamp", fmt.Sprint(o.MintTimestamp))
		for i, l := range o.Legs {
			leg := fmt.Sprintf("%s-%d", id, i)
			c.field("OptionLeg", leg, "liquidity", l.Liquidity)
			c.field("OptionLeg", leg, "strike", Strike{Handler: l.Handler, Pool: l.Pool, Hook: l.Hook, TickLower: l.TickLower, TickUpper: l.TickUpper}.ID())
		}
	}
	sums := map[string]*big.Int{"callPremium": new(big.Int), "putPremium": new(big.Int), "callVolume": new(big.Int), "putVolume": new(big.Int)}
	for _, o := range s.Options {
		side := "put"
		if o.IsCall {
			side = "call"
		}
		premium, _ := new(big.Int).SetString(o.Premium, 10)
		size, err := s.Size(o)
		if err != nil {
			c.t.Fatal(err)
		}
		sums[side+"Premium"].Add(sums[side+"Premium"], premium)
		sums[side+"Volume"].Add(sums[side+"Volume"], size)
	}
	for name, v := range sums {
		c.field("Market", market, name, v.String())
	}
	c.field("Market", market, "purchases", fmt.Sprint(len(s.Options)))
	c.field("Market", market, "exercises", fmt.Sprint(len(s.Exercises)))
}

func (c checker) exercises(s *Scenario) {
	for _, e := range s.Exercises {
		var id string
		for _, x := range c.st.All("Exercise") {
			if strings.HasPrefix(x, strings.ToLower(e.TxHash.Hex())+"-") {
				id = x
			}
		}
		if id == "" {
			c.t.Errorf("no Exercise of transaction %s", e.TxHash.Hex())
			continue
		}
		amt, err := s.exerciseAmounts(e)
		if err != nil {
			c.t.Fatal(err)
		}
		o, _ := s.option(e.TokenID)
		c.field("Exercise", id, "totalProfit", amt.profit.String())
		c.field("Exercise", id, "profitToOwner", amt.profit.String())
		c.field("Exercise", id, "totalAssetRelocked", amt.size.String())
		c.field("Exercise", id, "sqrtPriceX96", amt.sqrtPriceX96.String())
		c.field("Exercise", id, "exerciser", lower(o.Owner))
		c.field("Exercise", id, "blockNumber", new(big.Int).SetUint64(e.BlockNumber).String())
		c.field("Exercise", id, "timestamp", fmt.Sprint(e.Timestamp))
	}
}

// settlements: who settled each option (the stated settler: the market's
// profit transfer names it, or for nothing moved the sender), what it kept
// (the in-the-money legs' surplus, as the exercise maths gives it), the
// owner, each leg's liquidity returned, and the option's latest settlement.
func (c checker) settlements(s *Scenario) {
	market := lower(s.Market.Address)
	for _, st := range s.Settlements {
		id := c.entityOf("Settlement", st.TxHash.Hex())
		if id == "" {
			continue
		}
		legs, kept, err := s.settlementAmounts(st)
		if err != nil {
			c.t.Fatal(err)
		}
		o, _ := s.option(st.TokenID)
		c.field("Settlement", id, "settler", lower(st.Settler))
		c.field("Settlement", id, "sender", lower(st.Settler))
		c.field("Settlement", id, "user", lower(o.Owner))
		c.field("Settlement", id, "settlerProfit", kept.String())
		c.field("Settlement", id, "settlerCollateral", "0")
		c.field("Settlement", id, "settlerPaid", "0")
		c.field("Settlement", id, "timestamp", fmt.Sprint(st.Timestamp))
		for i, l := range legs {
			c.field("SettlementLeg", fmt.Sprintf("%s-%d", id, i), "liquidity", l.liquidity.String())
		}
		c.field("Option", fmt.Sprintf("%s-%d", market, st.TokenID), "lastSettlement", id)
	}
}

// delegates: each owner's delegate holds its last stated status.
func (c checker) delegates(s *Scenario) {
	last := map[string]DelegateUpdate{}
	for _, d := range s.Delegates {
		last[lower(s.Market.Address)+"-"+lower(d.Owner)+"-"+lower(d.Delegate)] = d
	}
	for id, d := range last {
		c.field("ExerciseDelegate", id, "status", fmt.Sprint(d.Status))
		c.field("ExerciseDelegate", id, "updatedAt", fmt.Sprint(d.Timestamp))
	}
}

// entityOf is the id of the entity of typ made by transaction hash.
func (c checker) entityOf(typ, hash string) string {
	for _, x := range c.st.All(typ) {
		if strings.HasPrefix(x, strings.ToLower(hash)+"-") {
			return x
		}
	}
	c.t.Errorf("no %s of transaction %s", typ, hash)
	return ""
}

// The index of a set of scenarios is cached by their content: a changed
// scenario is indexed anew.
func TestIndexFollowsTheScenario(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "scenarios", "arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	total := func(mutate func(*Scenario)) string {
		s, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		mutate(s)
		n := chaintest.NewNode(t)
		s.Populate(n)
		sg := graphnodetest.New()
		if err := Index(&sg.Store, n, []*Scenario{s}); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(sg.Store.Get("Strike", s.Strikes[0].ID())["totalLiquidity"].JSON())
	}
	before := total(func(*Scenario) {})
	after := total(func(s *Scenario) { s.Strikes[0].TotalLiquidity = "1250000000000000001" })
	if before != "1250000000000000000" || after != "1250000000000000001" {
		t.Errorf("total before %s, after the change %s", before, after)
	}
}
