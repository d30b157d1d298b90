package protocoltest

import (
	"math/big"
	"testing"
)

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

func TestSmokeCall(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	t.Logf("tick %d call %s put %s token0 %s", tick, p.CallAsset, p.PutAsset, p.Token0)
	lp, buyer := p.Users[0], p.Users[1]
	r := Range{TickLower: tick + 100, TickUpper: tick + 110}
	id, shares, err := p.Deposit(lp, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tokenId %s shares %s info %+v", id, shares, p.RangeInfo(r))
	oid, rc, err := p.Buy(buyer, Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []Leg{{r, shares}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Events(rc) {
		t.Logf("%s %v", e.Name, e.Args)
	}
	if _, err := p.Swap(p.Users[2], p.PutAsset, big.NewInt(200_000e6), 500); err != nil {
		t.Fatal(err)
	}
	_, tick2 := p.Slot0(p.Pool)
	t.Logf("tick after %d", tick2)
	rc, err = p.Exercise(buyer, oid, []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), shares}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Events(rc) {
		t.Logf("%s %v", e.Name, e.Args)
	}
	t.Logf("info %+v", p.RangeInfo(r))
}
