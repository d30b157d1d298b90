package liquidity

import (
	"math/big"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

func b(n int64) *big.Int { return big.NewInt(n) }

// The figures of a holding, worked by hand from the handler's rules:
// shares 300 of 600, total 1000, used 700, a donation of 100 at block 50
// locked for 100 blocks, read at block 75: 75 still locked, the shares
// worth ceil(300 * (1000 + 1 - 75) / 600) = 463, of which the free 300
// can be burnt and 163 options hold; principal 400 earned 63.
func TestHoldingFiguresByHand(t *testing.T) {
	p := chain.Holding{Shares: b(300), LockedBlockDuration: 100, Range: chain.HoldingRange{
		TotalLiquidity: b(1000), TotalSupply: b(600), LiquidityUsed: b(700), LastDonation: 50, DonatedLiquidity: b(100)}}
	for _, c := range []struct {
		block                                     uint64
		assets, withdrawable, locked, earned, pri int64
	}{
		{75, 463, 300, 163, 63, 400},
		{50, 451, 300, 151, 51, 400},   // 100 locked: ceil(300 * 901 / 600) = 451 (450.5 up)
		{150, 501, 300, 201, 101, 400}, // lock over: ceil(300 * 1001 / 600) = 501 (500.5 up)
		{150, 501, 300, 201, 0, 600},   // principal above the worth: nothing earned
	} {
		f := holdingFigures(p, c.block, b(c.pri))
		got := []int64{f.assets.Int64(), f.withdrawable.Int64(), f.locked.Int64(), f.earned.Int64()}
		want := []int64{c.assets, c.withdrawable, c.locked, c.earned}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("block %d principal %d: assets, withdrawable, locked, earned %v, want %v", c.block, c.pri, got, want)
				break
			}
		}
	}
	// No principal known (the subgraph has not seen the shares): nothing earned.
	if f := holdingFigures(p, 150, nil); f.earned.Sign() != 0 || f.principal.Cmp(f.assets) != 0 {
		t.Errorf("unknown principal: %v / %v", f.principal, f.earned)
	}
}

// The subgraph's principal follows the chain's share count pro rata.
func TestPrincipalAtTheChainsShares(t *testing.T) {
	h := subgraph.LPHolding{Shares: subgraph.BigInt{Int: b(200)}, Principal: subgraph.BigInt{Int: b(90)}}
	for _, c := range []struct {
		shares int64
		want   *big.Int
	}{{200, b(90)}, {100, b(45)}, {300, b(135)}, {3, b(1)}} {
		if got := principalAt(h, b(c.shares)); got.Cmp(c.want) != 0 {
			t.Errorf("shares %d: principal %s, want %s", c.shares, got, c.want)
		}
	}
	h.Shares.Int = b(0)
	if got := principalAt(h, b(5)); got != nil {
		t.Errorf("shares unseen by the subgraph: %s, want nil", got)
	}
}

// Reserved liquidity: nothing before lastReserve + cooldown, then at most
// the range's free liquidity (total + reserved - used).
func TestReservedWithdrawableByHand(t *testing.T) {
	amount := func(l *big.Int) LPAmount { return LPAmount{Liquidity: l.String()} }
	p := chain.Holding{V2: true, Reserved: b(50), LastReserve: 1000, ReserveCooldown: 600,
		Range: chain.HoldingRange{TotalLiquidity: b(1000), ReservedLiquidity: b(50), LiquidityUsed: b(700)}}
	for _, c := range []struct {
		now  uint64
		used int64
		want string
	}{{1599, 700, "0"}, {1600, 700, "50"}, {1600, 1040, "10"}, {9999, 1100, "0"}} {
		p.Range.LiquidityUsed = b(c.used)
		r := reservedOf(p, c.now, amount)
		if r.Withdrawable.Liquidity != c.want || *r.WithdrawableAt != "1600" || *r.LastReserve != "1000" || r.Liquidity != "50" {
			t.Errorf("now %d used %d: %+v, want withdrawable %s", c.now, c.used, r, c.want)
		}
	}
	p.Reserved = b(0)
	if r := reservedOf(p, 9999, amount); r.LastReserve != nil || r.WithdrawableAt != nil || r.Withdrawable.Liquidity != "0" {
		t.Errorf("nothing reserved: %+v", r)
	}
}
