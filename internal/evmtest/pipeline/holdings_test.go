package pipeline

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// holdings are open interest, the expired options awaiting settlement and
// TVL as the contracts' getters give them at one block, by the
// definitions docs/api.md states: [call|put] amounts.
type holdings struct {
	open, expired     [2]*big.Int // the options' collateral: calls' in the call asset, puts' in the put asset
	openN, expiredN   int         // options with liquidity left
	openR, expiredR   int         // distinct ranges their legs hold liquidity of
	tvl, reserved     [2]*big.Int // (totalLiquidity + reservedLiquidity), and reservedLiquidity, at the pools' prices
	tvlR              int
	primeSqrtPriceX96 *big.Int
}

// callAt is an eth_call of method at block n, unpacked.
func callAt(t *testing.T, p *pt.Protocol, to common.Address, a abi.ABI, n uint64, method string, args ...any) []any {
	t.Helper()
	data, err := a.Pack(method, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Chain.Client().CallContract(context.Background(), ethereum.CallMsg{To: &to, Data: data}, new(big.Int).SetUint64(n))
	if err != nil {
		t.Fatalf("%s at %d: %v", method, n, err)
	}
	v, err := a.Unpack(method, out)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// slot0At is a pool's sqrtPriceX96 at block n.
func slot0At(t *testing.T, p *pt.Protocol, pool common.Address, n uint64) *big.Int {
	t.Helper()
	out, err := p.Chain.Client().CallContract(context.Background(), ethereum.CallMsg{To: &pool, Data: common.FromHex("0x3850c7bd")}, new(big.Int).SetUint64(n)) // slot0()
	if err != nil || len(out) < 32 {
		t.Fatalf("slot0 of %s at %d: %v", pool.Hex(), n, err)
	}
	return new(big.Int).SetBytes(out[:32])
}

// holdingsAt reads every option of the market (ids 1 to optionIds) and
// the given ranges at block n: an option whose expiry is at or after the
// block's time is open (exerciseOption reverts only past it), and counts
// each leg's liquidityToUse as the amount of its collateral token over the
// leg's range (exerciseOption's amountToSwap); ranges count their
// totalLiquidity + reservedLiquidity at their pool's price.
func holdingsAt(t *testing.T, p *pt.Protocol, n uint64, ranges []pt.Range) holdings {
	t.Helper()
	h := holdings{primeSqrtPriceX96: slot0At(t, p, p.Pool, n)}
	for _, s := range []*[2]*big.Int{&h.open, &h.expired, &h.tvl, &h.reserved} {
		*s = [2]*big.Int{new(big.Int), new(big.Int)}
	}
	header, err := p.Chain.Client().HeaderByNumber(context.Background(), new(big.Int).SetUint64(n))
	if err != nil {
		t.Fatal(err)
	}
	m := pt.MarketV2.ABI
	count := callAt(t, p, p.Market, m, n, "optionIds")[0].(*big.Int).Int64()
	rangesOf := [2]map[string]bool{{}, {}}
	for id := int64(1); id <= count; id++ {
		d := callAt(t, p, p.Market, m, n, "opData", big.NewInt(id))
		legs, expiry, isCall := d[0].(*big.Int).Int64(), d[3].(*big.Int), d[4].(bool)
		set := 0
		if expiry.Uint64() < header.Time {
			set = 1
		}
		side, collateral := 1, p.PutAsset
		if isCall {
			side, collateral = 0, p.CallAsset
		}
		held := false
		for i := int64(0); i < legs; i++ {
			leg := callAt(t, p, p.Market, m, n, "opTickMap", big.NewInt(id), big.NewInt(i))
			lo, hi, l := int(leg[3].(*big.Int).Int64()), int(leg[4].(*big.Int).Int64()), leg[5].(*big.Int)
			if l.Sign() == 0 {
				continue
			}
			c, err := clamm.ExerciseLeg(lo, hi, l, collateral == p.Token0)
			if err != nil {
				t.Fatal(err)
			}
			sum := [2]*[2]*big.Int{&h.open, &h.expired}[set]
			sum[side].Add(sum[side], c.AmountToSwap)
			rangesOf[set][fmt.Sprint(leg[0], leg[1], leg[2], lo, hi)] = true
			held = true
		}
		if held {
			*[2]*int{&h.openN, &h.expiredN}[set]++
		}
	}
	h.openR, h.expiredR = len(rangesOf[0]), len(rangesOf[1])
	h.addRanges(t, p, n, ranges)
	return h
}

func (h *holdings) addRanges(t *testing.T, p *pt.Protocol, n uint64, ranges []pt.Range) {
	idx := map[string]int{}
	for i, o := range pt.HandlerV2.ABI.Methods["tokenIds"].Outputs {
		idx[o.Name] = i
	}
	for _, r := range ranges {
		handler := r.Handler // a range of another handler (V3) is read at its own
		if handler == (common.Address{}) {
			handler = p.Handler
		}
		info := callAt(t, p, handler, pt.HandlerV2.ABI, n, "tokenIds", p.TokenID(r))
		total, res := info[idx["totalLiquidity"]].(*big.Int), info[idx["reservedLiquidity"]].(*big.Int)
		all := new(big.Int).Add(total, res)
		if all.Sign() == 0 {
			continue
		}
		h.tvlR++
		pool := r.Pool
		if pool == (common.Address{}) {
			pool = p.Pool
		}
		sa, _ := clamm.SqrtRatioAtTick(r.TickLower)
		sb, _ := clamm.SqrtRatioAtTick(r.TickUpper)
		price := slot0At(t, p, pool, n)
		for _, x := range []struct {
			l   *big.Int
			sum [2]*big.Int
		}{{all, h.tvl}, {res, h.reserved}} {
			a0, a1 := clamm.AmountsForLiquidity(price, sa, sb, x.l)
			if p.CallAsset != p.Token0 {
				a0, a1 = a1, a0
			}
			x.sum[0].Add(x.sum[0], a0)
			x.sum[1].Add(x.sum[1], a1)
		}
	}
}

// check compares the statistics' open interest, expired options and TVL
// with h.
func (h holdings) check(t *testing.T, p *pt.Protocol, got market.MarketStats) {
	t.Helper()
	e := chainEvent{sqrtP: h.primeSqrtPriceX96, callIs0: p.CallAsset == p.Token0}
	checkAmounts(t, p, "openInterest", got.OpenInterest.StatsAmounts, h.open[0], h.open[1], e.callInPut(h.open[0]))
	checkAmounts(t, p, "expiredUnsettled", got.ExpiredUnsettled.StatsAmounts, h.expired[0], h.expired[1], e.callInPut(h.expired[0]))
	checkAmounts(t, p, "tvl", got.TVL.StatsAmounts, h.tvl[0], h.tvl[1], e.callInPut(h.tvl[0]))
	checkAmounts(t, p, "tvl.reserved", got.TVL.Reserved, h.reserved[0], h.reserved[1], e.callInPut(h.reserved[0]))
	if got.OpenInterest.Options != h.openN || got.ExpiredUnsettled.Options != h.expiredN || got.OpenInterest.Ranges != h.openR ||
		got.ExpiredUnsettled.Ranges != h.expiredR || got.TVL.Ranges != h.tvlR {
		t.Errorf("counts: open interest %d options in %d ranges, expired %d in %d, tvl %d ranges; the chain: %d in %d, %d in %d, %d",
			got.OpenInterest.Options, got.OpenInterest.Ranges, got.ExpiredUnsettled.Options, got.ExpiredUnsettled.Ranges, got.TVL.Ranges,
			h.openN, h.openR, h.expiredN, h.expiredR, h.tvlR)
	}
}

// checkHoldingsAtHead asks the market's statistics over the day before the
// head (to's offset n keeps each step's answer apart from every earlier
// one's cache entry), requires the answer at the indexed head, and holds
// its open interest, expired options and TVL to the getters at that block.
func checkHoldingsAtHead(t *testing.T, a *app.App, p *pt.Protocol, n int, ranges []pt.Range) {
	t.Helper()
	now := int64(p.Chain.Now())
	got, at := askStats(t, a, p, [2]int64{now - 86400, now + 1 + int64(n)})
	if head := p.Chain.BlockNumber(); at != head {
		t.Fatalf("statistics at block %d, the indexed head is %d", at, head)
	}
	holdingsAt(t, p, at, ranges).check(t, p, got)
}
