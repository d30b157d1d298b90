package pipeline

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
)

// chainPos is a log's place in the chain.
type chainPos struct {
	block uint64
	index uint
	key   string // what names the record in the gateway's answer
}

// newestFirst orders logs by block, then log index, newest first: the
// order every list must have.
func newestFirst(ps []chainPos) []string {
	slices.SortFunc(ps, func(a, b chainPos) int {
		if a.block != b.block {
			return -cmpU(a.block, b.block)
		}
		return -cmpU(uint64(a.index), uint64(b.index))
	})
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.key
	}
	return out
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// logsNamed are the receipts' logs of event name (decoded by the
// protocol's ABIs), each keyed by key.
func logsNamed(p *pt.Protocol, rcs []*types.Receipt, name string, key func(pt.Event) string) []chainPos {
	var out []chainPos
	for _, rc := range rcs {
		for _, e := range p.Events(rc) {
			if e.Name == name {
				out = append(out, chainPos{rc.BlockNumber.Uint64(), e.Log.Index, key(e)})
			}
		}
	}
	return out
}

// Every list the gateway serves is newest first by block and log index,
// records of one block (one timestamp) included: a deposit into twelve
// ranges in one transaction (its logs numbered with one and two digits)
// and three more in the next block, purchases, exercises, burns and
// settlements several to a block. A list ordered by timestamp alone leaves a block's records
// in Graph Node's tie order, by id (transaction hash, then the log index
// as text), which is not the chain's.
func TestListsInChainOrder(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	mc := p.DeployMulticall3()
	ix := New(t, p)
	a, _ := liveGateway(t, p, ix, func(ch *config.Chain) { ch.Multicall3 = mc })
	gw := a.Server
	_, tick := p.Slot0(p.Pool)
	sp := p.TickSpacing
	base := tick - tick%sp
	lp, buyer, trader := p.Users[0], p.Users[1], p.Users[2]
	rng := func(k int) pt.Range {
		return pt.Range{Handler: p.Handler, Pool: p.Pool, TickLower: base + k*sp, TickUpper: base + (k+1)*sp}
	}
	get := func(path, query string) []map[string]any {
		t.Helper()
		ix.Sync()
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path+"?chainId=42161&first=100&skip=0&"+query, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s?%s: %d %s", path, query, rec.Code, rec.Body)
		}
		var out []map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	keys := func(list []map[string]any, key func(map[string]any) string) []string {
		out := make([]string, len(list))
		for i, r := range list {
			out[i] = key(r)
		}
		return out
	}
	same := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s out of chain order:\n got %v\nwant %v", what, got, want)
		}
	}
	rangeKey := func(r map[string]any) string { return fmt.Sprintf("%v-%v", str(r["txHash"]), r["tickLower"]) }

	// Deposits: twelve ranges in one multicall, then three in one block.
	var d liquidity.PreparedDeposit
	ix.Sync() // the markets a deposit can serve come from the subgraph
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fmt.Sprintf("%s?chainId=42161&handler=%s&pool=%s&hook=%s&tickLower=%d&tickUpper=%d&amount=%s&user=%s",
		gateway.PathDepositPrepare, p.Handler.Hex(), p.Pool.Hex(), common.Address{}.Hex(), base+10*sp, base+22*sp, e18(12), lp.Addr.Hex()), nil))
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &d) != nil || len(d.Ranges) != 12 {
		t.Fatalf("deposit prepare: %d %s", rec.Code, rec.Body)
	}
	multi, err := p.Chain.SendRaw(lp, common.HexToAddress(d.Tx.To), common.FromHex(d.Tx.Data), "multicall")
	if err != nil {
		t.Fatal(err)
	}
	deposits := append([]*types.Receipt{multi}, p.Chain.Block(func() {
		for k := 30; k < 33; k++ {
			if _, _, err := p.Deposit(lp, rng(k), e18(1)); err != nil {
				t.Fatal(err)
			}
		}
	})...)
	byRange := func(e pt.Event) string {
		return fmt.Sprintf("%s-%d", strings.ToLower(e.Log.TxHash.Hex()), e.Args["tickLower"].(*big.Int).Int64())
	}
	same("deposit history", keys(get(gateway.PathDepositHistory, "user="+lp.Addr.Hex()), rangeKey),
		newestFirst(logsNamed(p, deposits, "LogMintedPosition", byRange)))
	// Positions: each opened by the share transfer of its first mint.
	transfer := crypto.Keccak256Hash([]byte("Transfer(address,address,address,uint256,uint256)"))
	var opened []chainPos
	ticks := map[string]int{} // token id -> tickLower
	for k := 10; k < 33; k++ {
		ticks[p.TokenID(rng(k)).String()] = rng(k).TickLower
	}
	for _, rc := range deposits {
		for _, lg := range rc.Logs {
			if lg.Address == p.Handler && len(lg.Topics) == 4 && lg.Topics[0] == transfer {
				opened = append(opened, chainPos{rc.BlockNumber.Uint64(), lg.Index, fmt.Sprint(ticks[lg.Topics[3].Big().String()])})
			}
		}
	}
	same("deposit positions", keys(get(gateway.PathDepositPositions, "user="+lp.Addr.Hex()), func(r map[string]any) string { return fmt.Sprint(r["tickLower"]) }),
		newestFirst(opened))

	// Purchases: seven in one block, of calls on seven of the ranges (the
	// first three exercised below, the other four settled).
	used := big.NewInt(1e15)
	option := func(k int) pt.Option {
		r := rng(k)
		return pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: r, Liquidity: used}}}
	}
	mints := p.Chain.Block(func() {
		for k := 10; k < 17; k++ {
			if _, _, err := p.Buy(buyer, option(k)); err != nil {
				t.Fatal(err)
			}
		}
	})
	byTx := func(e pt.Event) string { return strings.ToLower(e.Log.TxHash.Hex()) }
	market := "&optionMarket=" + p.Market.Hex() + "&user=" + buyer.Addr.Hex()
	same("purchase history", keys(get(gateway.PathPurchaseHistory, market), func(r map[string]any) string { return str(r["txHash"]) }),
		newestFirst(logsNamed(p, mints, "LogMintOption", byTx)))
	byID := func(e pt.Event) string { return e.Args["tokenId"].(*big.Int).String() }
	same("purchase positions", keys(get(gateway.PathPurchasePositions, market), func(r map[string]any) string { return str(r["optionId"]) }),
		newestFirst(logsNamed(p, mints, "LogMintOption", byID)))

	// Exercises: the price moves through the ranges; three in one block.
	if _, err := p.SwapToTick(trader, p.Fee, base+40*sp); err != nil {
		t.Fatal(err)
	}
	exercises := p.Chain.Block(func() {
		for _, rc := range mints[:3] {
			id := p.Find(rc, "LogMintOption").Args["tokenId"].(*big.Int)
			if _, err := p.Exercise(buyer, id, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(p.Fee, big.NewInt(0)), Liquidity: used}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	same("exercise history", keys(get(gateway.PathExerciseHistory, market), func(r map[string]any) string { return str(r["txHash"]) }),
		newestFirst(logsNamed(p, exercises, "LogExerciseOption", byTx)))

	// Burns: three ranges no option used, in one block.
	burns := p.Chain.Block(func() {
		for k := 19; k < 22; k++ {
			shares := p.Chain.Call(p.Handler, pt.HandlerV2.ABI, "balanceOf", lp.Addr, p.TokenID(rng(k)))[0].(*big.Int)
			if _, err := p.Withdraw(lp, rng(k), new(big.Int).Sub(shares, big.NewInt(1))); err != nil {
				t.Fatal(err)
			}
		}
	})
	same("withdraw history", keys(get(gateway.PathWithdrawHistory, "user="+lp.Addr.Hex()), rangeKey),
		newestFirst(logsNamed(p, burns, "LogBurnedPosition", byRange)))
	// Settlements: the four options left, expired, in one block.
	p.Chain.AdjustTime(2 * time.Hour)
	settler := p.Users[3]
	p.MakeSettler(settler.Addr, true)
	settlements := p.Chain.Block(func() {
		for _, rc := range mints[3:] {
			id := p.Find(rc, "LogMintOption").Args["tokenId"].(*big.Int)
			legs := []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(p.Fee, big.NewInt(0)), Liquidity: used}}
			if _, err := p.Settle(settler, id, legs); err != nil {
				t.Fatal(err)
			}
		}
	})
	same("settlement history", keys(get(gateway.PathSettlements, "user="+buyer.Addr.Hex()), func(r map[string]any) string { return str(r["txHash"]) }),
		newestFirst(logsNamed(p, settlements, "LogSettleOption", byTx)))
	for _, rcs := range [][]*types.Receipt{deposits[1:], mints, exercises, burns, settlements} {
		for _, rc := range rcs {
			if rc.Status != types.ReceiptStatusSuccessful || rc.BlockNumber.Cmp(rcs[0].BlockNumber) != 0 {
				t.Fatalf("setup: a transaction of a one-block batch failed or landed in another block")
			}
		}
	}
}
