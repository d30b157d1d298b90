package service_test

import (
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// poolsOf is the set of pools the listed strikes are in.
func poolsOf(strikes []market.Strike) map[common.Address]int {
	out := map[common.Address]int{}
	for _, s := range strikes {
		out[common.HexToAddress(s.Handler.Pool)]++
	}
	return out
}

func noMarketPools(*config.Chain) {}

// Without any configuration the strikes chain lists the second pool the
// market approved: the strikes document names it (MarketPool, beside the
// ranges), the chain confirms approvedPools. The first answer reads the
// pool's price and approval in the round the unregistered handlers need
// anyway, then its ranges in one more query; the pool is then read with
// the others, so a warm miss is two RPC round trips and one query, as with
// configured pools.
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
	if n, q := f.Node.Requests(), f.Subgraph.Requests(); n != 3 || q != 2 {
		t.Errorf("first sight: %d rpc round trips and %d queries, want 3 and 2", n, q)
	}
	rpc, queries := f.Node.Requests(), f.Subgraph.Requests()
	strikesOf(t, svc, sc, 10)
	if n, q := f.Node.Requests()-rpc, f.Subgraph.Requests()-queries; n != 2 || q != 1 {
		t.Errorf("warm: %d rpc round trips and %d queries, want 2 and 1", n, q)
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
		st, err := svc.MarketStats(context.Background(), market.StatsRequest{ChainID: sc.ChainID, Market: sc.Market.Address, From: 0, To: 86400})
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
