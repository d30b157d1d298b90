package trade

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// learnedSubgraph answers the learned swappers it holds; any other read
// panics (the nil embedded interface): choosing a swapper reads nothing
// else.
type learnedSubgraph struct {
	vocab.Subgraph
	list []subgraph.Swapper
}

func (s learnedSubgraph) Swappers(context.Context, int) ([]subgraph.Swapper, subgraph.Meta, error) {
	return s.list, subgraph.Meta{}, nil
}

// chainWith is a chain with n configured uniswap-v3 swappers and one
// learned swapRouter swapper at learned (a contract anyone may deploy and
// exercise through once).
func chainWith(n int, learned common.Address) *vocab.Upstreams {
	ch := &config.Chain{ID: 8453, Swappers: map[string]*config.Swapper{},
		Handlers: map[common.Address]config.Handler{common.HexToAddress("0x01"): {Name: "uniswap"}}}
	up := &vocab.Upstreams{Config: ch, Quoters: map[string]swap.Quoter{}, Learned: &swap.Learned{},
		Subgraph: learnedSubgraph{list: []subgraph.Swapper{{Address: subgraph.Address(learned), Kind: subgraph.SwapperKindSwapRouter, FirstExercise: "0xab-1"}}}}
	for i := range n {
		id := fmt.Sprintf("uni-v3-%d", i)
		ch.Swappers[id] = &config.Swapper{Kind: config.SwapperUniswapV3, Address: common.BigToAddress(big.NewInt(int64(0x100 + i)))}
		up.Quoters[id] = &swap.UniV3{Contracts: swap.Contracts{Address: ch.Swappers[id].Address}}
	}
	return up
}

// A learned swapRouter swapper can pay more than any configured one in
// the simulation auto compares (it can tell eth_call's gas price 0 from
// the real transaction) and keep the profit when sent: auto and direct
// never prepare through it, whatever it would pay, so its simulated
// payout is never compared. It stays listed, with its note, and its
// address chooses it; on a chain with no configured swapper auto and
// direct are a 400 naming it. auto prepares through at most
// MaxAutoSwappers configured ones.
func TestAutoAndDirectNeverPickALearnedSwapper(t *testing.T) {
	learned := common.HexToAddress("0x5eAFd1e2Dd6ad1bBCcC8B6Cd8f06b6c5a4f6F0aD")
	up := chainWith(1, learned)
	opts := swapperOptions(context.Background(), up)
	if len(opts) != 2 || opts[1].Source != SourceLearned || !opts[1].Usable || opts[1].Note == "" || opts[1].direct {
		t.Fatalf("options %+v, want uni-v3-0 then the learned swapper, usable, with a note, not direct", opts)
	}
	for _, id := range []string{SwapperAuto, SwapperDirect, "uniswap"} {
		got, err := pickSwappers(up, id, opts)
		if err != nil || len(got) != 1 || got[0].ID != "uni-v3-0" {
			t.Fatalf("%s picked %+v, %v; want only the configured uni-v3-0", id, got, err)
		}
	}
	if got, err := pickSwappers(up, strings.ToLower(learned.Hex()), opts); err != nil || len(got) != 1 || got[0].ID != learned.Hex() {
		t.Fatalf("by address: %+v, %v", got, err)
	}

	up = chainWith(0, learned)
	opts = swapperOptions(context.Background(), up)
	for _, id := range []string{SwapperAuto, SwapperDirect, "uniswap"} {
		got, err := pickSwappers(up, id, opts)
		e := problem.As(err)
		if err == nil || e.Kind() != problem.KindInvalidArgument || !strings.Contains(e.Message, learned.Hex()) {
			t.Fatalf("%s without a configured swapper: %+v, %v; want a 400 naming %s", id, got, err, learned.Hex())
		}
	}

	up = chainWith(MaxAutoSwappers+3, learned)
	got, err := pickSwappers(up, SwapperAuto, swapperOptions(context.Background(), up))
	if err != nil || len(got) != MaxAutoSwappers {
		t.Fatalf("auto over %d configured swappers prepares through %d (%v), want %d", MaxAutoSwappers+3, len(got), err, MaxAutoSwappers)
	}
	for _, o := range got {
		if o.Source != SourceConfigured {
			t.Fatalf("auto picked %+v", o)
		}
	}
}
