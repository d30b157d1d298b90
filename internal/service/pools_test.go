package service_test

import (
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// poolsOf is the set of pools the listed strikes are in.
func poolsOf(strikes []service.Strike) map[common.Address]int {
	out := map[common.Address]int{}
	for _, s := range strikes {
		out[common.HexToAddress(s.Handler.Pool)]++
	}
	return out
}

func noMarketPools(*config.Chain) {}

// Without any configuration the strikes chain lists the second pool the
// market approved: the subgraph names it (MarketPool), the chain confirms
// approvedPools in the round trip of the pool prices. The first answer
// costs one round trip more for it (with the prime pool's approval, whose
// address the first round gave); the pool is then read with the others,
// so a warm miss is two round trips as with configured pools.
func TestStrikesFindApprovedPoolsWithoutConfiguration(t *testing.T) {
	sc := loadBuyable(t)
	configured, _ := newService(t, sc)
	want := poolsOf(strikesOf(t, configured, sc, 10))
	if want[buyPool2] == 0 || want[sc.Market.PrimePool] == 0 {
		t.Fatalf("setup: the configured second pool lists nothing: %v", want)
	}
	svc, f := newServiceConfigured(t, noMarketPools, sc)
	got := poolsOf(strikesOf(t, svc, sc, 10))
	if got[buyPool2] != want[buyPool2] || got[sc.Market.PrimePool] != want[sc.Market.PrimePool] {
		t.Errorf("ranges by pool %v, want %v (as configured)", got, want)
	}
	if n := f.Node.Requests(); n != 4 {
		t.Errorf("first sight: %d rpc round trips, want 4", n)
	}
	before := f.Node.Requests()
	strikesOf(t, svc, sc, 10)
	if n := f.Node.Requests() - before; n != 2 {
		t.Errorf("warm: %d rpc round trips, want 2", n)
	}
}

// The chain has the last word on approval: a pool the configuration and
// the subgraph both name is left out of the strikes chain and the TVL
// once the market no longer approves it, and so is the prime pool.
func TestUnapprovedPoolsAreLeftOut(t *testing.T) {
	sc := loadBuyable(t)
	approving := func(pools ...common.Address) (map[common.Address]int, int) {
		svc, f := newService(t, sc)
		f.Node.Lock()
		f.Node.Markets[sc.Market.Address].ApprovedPools = pools
		f.Node.Unlock()
		st, err := svc.MarketStats(context.Background(), service.StatsRequest{ChainID: sc.ChainID, Market: sc.Market.Address, From: 0, To: 86400})
		if err != nil {
			t.Fatal(err)
		}
		return poolsOf(strikesOf(t, svc, sc, 10)), st.TVL.Ranges
	}
	prime := sc.Market.PrimePool
	both, tvlBoth := approving(prime, buyPool2)
	primeOnly, tvlPrime := approving(prime)
	secondOnly, tvlSecond := approving(buyPool2)
	if both[prime] == 0 || both[buyPool2] == 0 {
		t.Fatalf("setup: both pools approved list %v", both)
	}
	if primeOnly[buyPool2] != 0 || primeOnly[prime] != both[prime] {
		t.Errorf("second pool not approved: %v", primeOnly)
	}
	if secondOnly[prime] != 0 || secondOnly[buyPool2] != both[buyPool2] {
		t.Errorf("prime pool not approved: %v", secondOnly)
	}
	if tvlPrime == 0 || tvlSecond == 0 || tvlPrime+tvlSecond != tvlBoth {
		t.Errorf("TVL ranges: %d with both pools approved, %d with the prime pool, %d with the second", tvlBoth, tvlPrime, tvlSecond)
	}
}
