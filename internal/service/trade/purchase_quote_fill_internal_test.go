package trade

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// twoRanges is a strike held in two ranges at the same ticks (no hook, and
// a hook, as the frontends deposit), each with free liquidity `free`.
func twoRanges(t *testing.T, tickLower, tickUpper int, heldIs0 bool, free *big.Int) strikeCandidates {
	t.Helper()
	amt, err := clamm.RangeAmount(tickLower, tickUpper, free, heldIs0)
	if err != nil {
		t.Fatal(err)
	}
	c := strikeCandidates{token: chain.Token{Symbol: "T"}}
	for _, hook := range []common.Address{{}, common.HexToAddress("0x00000000000000000000000000000000000000bb")} {
		c.ranges = append(c.ranges, vocab.StrikeRange{Hook: hook, TickLower: tickLower, TickUpper: tickUpper, HeldIs0: heldIs0,
			Liquidity: free, Free: free, Amount: amt, FreeAmount: amt})
	}
	return c
}

// The fill over two token1 ranges where one unit of liquidity is worth
// less than one base unit (a USDC put range of WETH/USDC at ~3000, 10
// ticks wide): what contract-behaviour.md's M16 found (leg 0 one unit
// short, leg 1 of positive liquidity and zero collateral, which makes
// mintOption revert) is gone: every leg withdraws something, each takes
// the largest liquidity whose amount fits, and an amount the first range
// covers is bought exactly from it. Each figure is checked with the pool's
// own rounding (RangeAmount, held to the v3-sdk's vectors).
func TestFillToken1PutOverTwoRanges(t *testing.T) {
	const tl, tu = -196270, -196260
	free := new(big.Int).Mul(big.NewInt(1e17), big.NewInt(10)) // about 27,000 USDC per range
	c := twoRanges(t, tl, tu, false, free)
	perRange := c.ranges[0].FreeAmount
	for _, amount := range []*big.Int{big.NewInt(1_000_000_000), big.NewInt(123_456_789), big.NewInt(5_000_000), big.NewInt(1),
		new(big.Int).Add(perRange, big.NewInt(7)), new(big.Int).Mul(perRange, big.NewInt(2))} {
		st := &quoteState{}
		if err := st.fill(c, amount); err != nil {
			t.Fatalf("amount %s: %v", amount, err)
		}
		checkLegs(t, amount, c, st.legs)
		size := new(big.Int)
		for _, l := range st.legs {
			size.Add(size, l.amount)
		}
		if size.Cmp(amount) != 0 {
			t.Errorf("amount %s: size %s (one unit of liquidity is worth less than a base unit: every amount is reachable)", amount, size)
		}
	}
}

// Over token0 ranges (WETH calls) one unit of liquidity is worth several
// wei: the first leg may stop short of the amount by less than a unit's
// worth, and the second range, which cannot give one wei for what is left,
// gets no leg. Over a WBTC-like call range (8 decimals) a unit is worth
// less than a satoshi again, and the fill is exact.
func TestFillToken0CallsOverTwoRanges(t *testing.T) {
	weth := twoRanges(t, -196250, -196240, true, big.NewInt(109612158745564334))
	for _, amount := range []*big.Int{big.NewInt(999_999_999_999_999_999), big.NewInt(1e17 + 3)} {
		st := &quoteState{}
		if err := st.fill(weth, amount); err != nil {
			t.Fatal(err)
		}
		checkLegs(t, amount, weth, st.legs)
		if len(st.legs) != 1 {
			t.Errorf("amount %s: %d legs", amount, len(st.legs))
		}
	}
	// WBTC (8 decimals) / USDC (6): at 60,000 the pool's tick is about 71000
	// with WBTC as token0 (raw price 600); ranges above it hold WBTC.
	wbtc := twoRanges(t, 71200, 71210, true, new(big.Int).Mul(big.NewInt(1e12), big.NewInt(1e3)))
	for _, amount := range []*big.Int{big.NewInt(12_345_678), big.NewInt(1)} {
		st := &quoteState{}
		if err := st.fill(wbtc, amount); err != nil {
			t.Fatal(err)
		}
		checkLegs(t, amount, wbtc, st.legs)
		if len(st.legs) != 1 || st.legs[0].amount.Cmp(amount) != 0 {
			t.Errorf("WBTC amount %s: legs %+v", amount, st.legs)
		}
	}
}

// checkLegs: every leg withdraws something, no more than what was left,
// and holds either its range's whole free liquidity or the most whose
// amount fits what was left (one more unit would not).
func checkLegs(t *testing.T, amount *big.Int, c strikeCandidates, legs []chosenLeg) {
	t.Helper()
	left := new(big.Int).Set(amount)
	for i, l := range legs {
		r := c.ranges[i]
		got, _ := clamm.RangeAmount(l.tickLower, l.tickUpper, l.liquidity, r.HeldIs0)
		next, _ := clamm.RangeAmount(l.tickLower, l.tickUpper, new(big.Int).Add(l.liquidity, big.NewInt(1)), r.HeldIs0)
		whole := l.liquidity.Cmp(r.Free) == 0
		if l.amount.Sign() == 0 || got.Cmp(l.amount) != 0 || l.amount.Cmp(left) > 0 || (!whole && next.Cmp(left) <= 0) {
			t.Errorf("amount %s, leg %d: L %s amount %s (pool: %s; one more unit: %s; left %s)", amount, i, l.liquidity, l.amount, got, next, left)
		}
		left.Sub(left, l.amount)
	}
}
