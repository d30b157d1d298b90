package pipeline

import (
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// profit is the token an exercise pays: the put asset for a call, the call
// asset for a put.
func profit(p *pt.Protocol, isCall bool) common.Address {
	if isCall {
		return p.PutAsset
	}
	return p.CallAsset
}

// laterPuts are three puts bought for the buyer on fresh out-of-the-money
// ranges, before the price swings through them.
type laterPuts struct {
	ranges    []pt.Range
	ids, liqs []*big.Int
	mints     []*types.Receipt
}

func buyLaterPuts(t *testing.T, p *pt.Protocol, ranges ...pt.Range) laterPuts {
	t.Helper()
	lp, buyer := p.Users[0], p.Users[1]
	out := laterPuts{ranges: ranges}
	for _, r := range ranges {
		_, l, err := p.Deposit(lp, r, e18(1))
		if err != nil {
			t.Fatal(err)
		}
		id, rc, err := p.Buy(buyer, pt.Option{IsCall: false, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: r, Liquidity: l}}})
		if err != nil {
			t.Fatal(err)
		}
		out.ids, out.liqs, out.mints = append(out.ids, id), append(out.liqs, l), append(out.mints, rc)
	}
	return out
}

// keeperAndWallet, once the price has swung through the later puts: has
// the auto-exercise contract (a keeper keeping a 5% executor fee for feeTo)
// exercise the first for its owner; moves the second to a smart wallet
// whose owner's key has the wallet exercise it; lets the third expire and
// settles it. The Exercise entities name the contract the market paid (the
// keeper contract, the wallet) and what reached the owner.
func keeperAndWallet(t *testing.T, p *pt.Protocol, ix *Indexer, puts laterPuts) (keeper, wallet *types.Receipt) {
	t.Helper()
	lp, buyer, trader := p.Users[0], p.Users[1], p.Users[2]
	ids, liqs, ranges := puts.ids, puts.liqs, puts.ranges
	swap := pt.UniV3SwapData(p.Fee, big.NewInt(0))
	legs := func(i int) []pt.ExerciseLeg {
		return []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: liqs[i]}}
	}

	feeTo := common.HexToAddress("0x000000000000000000000000000000000000fee1")
	p.Chain.MustSend(p.Owner, p.AutoExercise, pt.AutoExercise.ABI, "updateFeeTo", feeTo)
	p.Chain.MustSend(p.Owner, p.AutoExercise, pt.AutoExercise.ABI, "updateTimeForSettle", big.NewInt(7200))
	if _, err := p.Delegate(buyer, p.AutoExercise, true); err != nil {
		t.Fatal(err)
	}
	keeper, err := p.AutoExerciseOption(ids[0], big.NewInt(50_000), legs(0))
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkExercise(t, p, ix, keeper, p.Market, p.CallAsset, p.AutoExercise)
	x := ix.Store.Get("Exercise", hashID(keeper, p.Find(keeper, "LogExerciseOption")))
	fee := balanceAt(t, p, p.CallAsset, feeTo, keeper.BlockNumber)
	if fee.Sign() == 0 || new(big.Int).Add(x["profitToOwner"].Big, fee).Cmp(x["totalProfit"].Big) != 0 || !x["delegated"].Bool {
		t.Errorf("keeper exercise: profitToOwner %s + fee %s != totalProfit %s", x["profitToOwner"].Big, fee, x["totalProfit"].Big)
	}

	w := p.DeployWallet(trader)
	if _, err := p.Transfer(buyer, w, ids[1]); err != nil {
		t.Fatal(err)
	}
	wallet, err = p.WalletExercise(trader, w, p.Market, ids[1], legs(1))
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkExercise(t, p, ix, wallet, p.Market, p.CallAsset, w)
	if x := ix.Store.Get("Exercise", hashID(wallet, p.Find(wallet, "LogExerciseOption"))); x["delegated"].Bool || x["profitToOwner"].Big.Cmp(x["totalProfit"].Big) != 0 {
		t.Errorf("wallet exercise: delegated %v, profitToOwner %s of %s", x["delegated"].Bool, x["profitToOwner"].Big, x["totalProfit"].Big)
	}

	// the third, out of the money, expires unexercised and is settled
	p.Chain.AdjustTime(2 * time.Hour)
	if _, err := p.Settle(lp, ids[2], legs(2)); err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkOption(t, p, ix, ids[2], "Settled")
	checkStrikes(t, p, ix, ranges)
	return keeper, wallet
}
