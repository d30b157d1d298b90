package chain

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// A small market on the fake node: WETH/USDC, pool tick spacing 10.
var (
	tMarket = common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744")
	tPool   = common.HexToAddress("0xC6962004f452bE9203591991D15f6b388e09E8D0")
	tWETH   = common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1")
	tUSDC   = common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
)

func testNode(t testing.TB) *chaintest.Node {
	n := chaintest.NewNode(t)
	n.Markets[tMarket] = &chaintest.Market{Name: "Dopex V2 Option Market V2", CallAsset: tWETH, PutAsset: tUSDC, PrimePool: tPool, Version: 2}
	sqrt, _ := new(big.Int).SetString("4339505179874779489431521", 10)
	n.Pools[tPool] = &chaintest.Pool{Token0: tWETH, Token1: tUSDC, Fee: 500, TickSpacing: 10, SqrtPriceX96: sqrt, Tick: -196256}
	n.Tokens[tWETH] = &chaintest.Token{Decimals: 18, Symbol: "WETH"}
	n.Tokens[tUSDC] = &chaintest.Token{Decimals: 6, Symbol: "USDC"}
	return n
}

type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func testReader(t *testing.T, n *chaintest.Node) *Reader {
	t.Helper()
	c, err := rpc.DialOptions(context.Background(), "http://node.invalid", rpc.WithHTTPClient(&http.Client{Transport: inProcess{n}}))
	if err != nil {
		t.Fatal(err)
	}
	return newTestReader(t, c, n.Multicall3)
}

// A market's first read gives the same answer as one ChainedRead and, on
// a node that refuses code without `to`, as Multicall3 rounds built from
// the same (untouched) calls: one round trip, or two (the pool's and the
// assets' reads wait for the market's answers).
func TestColdReadChainedOrInRounds(t *testing.T) {
	want := MarketInfo{Market: tMarket, CallAsset: Token{tWETH, 18, "WETH"}, PutAsset: Token{tUSDC, 6, "USDC"}, Pool: tPool,
		Token0: tWETH, Token1: tUSDC, Fee: 500, TickSpacing: 10}
	for _, refuse := range []bool{false, true} {
		n := testNode(t)
		n.NoCreateCalls = refuse
		r := testReader(t, n)
		info, st, err := r.MarketSnapshot(context.Background(), tMarket)
		if err != nil {
			t.Fatalf("refuse %v: %v", refuse, err)
		}
		if !reflect.DeepEqual(*info, want) || st.Tick != -196256 || st.SqrtPriceX96.String() != "4339505179874779489431521" {
			t.Errorf("refuse %v: %+v %+v", refuse, info, st)
		}
		rounds := int64(1)
		if refuse {
			rounds = 3 // the refused ChainedRead, then two Multicall3 rounds
		}
		if n.Requests() != rounds {
			t.Errorf("refuse %v: %d round trips, want %d", refuse, n.Requests(), rounds)
		}
	}
}

// The fallback runs on calls exactly as marketReads builds them (nil
// TargetFrom for fixed targets), follows chains deeper than one, and skips
// what ChainedRead skips.
func TestInRoundsOnFreshCalls(t *testing.T) {
	n := testNode(t)
	r := testReader(t, n)
	p, m := contracts.Pool, contracts.OptionMarketV2
	calls := []contracts.ChainedCall{
		{Target: tMarket, Data: pack(m, "primePool")},
		{TargetFrom: big.NewInt(1), Data: pack(p, "token0")},               // the pool's token0 ...
		{TargetFrom: big.NewInt(2), Data: pack(contracts.ERC20, "symbol")}, // ... and its symbol: two deep
		{Target: common.Address{0xde, 0xad}, Data: pack(m, "primePool")},   // no code: ok, no data
		{TargetFrom: big.NewInt(4), Data: pack(p, "token0")},               // its source has no word: skipped
	}
	res, err := r.chainedReadInRounds(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].TargetFrom != nil {
		t.Fatal("the fallback wrote into its caller's calls")
	}
	sym, _ := unpackOne[string](contracts.ERC20, "symbol", res[2].Data)
	if !res[0].OK || !res[1].OK || !res[2].OK || sym != "WETH" || !res[3].OK || len(res[3].Data) != 0 || res[4].OK || len(res[4].Data) != 0 {
		t.Fatalf("%+v", res)
	}
	if n.Requests() != 3 {
		t.Errorf("%d rounds, want 3 (one per generation)", n.Requests())
	}
}

// Failures are told apart by which read failed: the market's own reads
// (not a market), the pool's or an asset's (a market this gateway cannot
// serve), or an answer that does not decode (the node's fault).
func TestColdReadFailuresByRead(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(n *chaintest.Node)
		code   *problem.Code
	}{
		{"no market", func(n *chaintest.Node) { delete(n.Markets, tMarket) }, problem.MarketNotFound},
		{"pool without code", func(n *chaintest.Node) { delete(n.Pools, tPool) }, problem.MarketUnsupported},
		{"asset without code", func(n *chaintest.Node) { delete(n.Tokens, tUSDC) }, problem.MarketUnsupported},
		{"pool of other tokens", func(n *chaintest.Node) { n.Pools[tPool].Token1 = common.Address{7} }, problem.RPCError},
		{"zero tick spacing", func(n *chaintest.Node) { n.Pools[tPool].TickSpacing = 0 }, problem.RPCError},
	} {
		for _, refuse := range []bool{false, true} {
			n := testNode(t)
			c.break_(n)
			n.NoCreateCalls = refuse
			_, _, err := testReader(t, n).MarketSnapshot(context.Background(), tMarket)
			var p *problem.Error
			if !errors.As(err, &p) || p.Code != c.code {
				t.Errorf("%s (refuse %v): %v, want %s", c.name, refuse, err, c.code)
			}
		}
	}
}

// Every read names an earlier read as its source, and every read decodes.
func TestMarketReadList(t *testing.T) {
	seen := map[string]bool{}
	for _, rd := range marketReadList {
		if seen[rd.name] {
			t.Errorf("%s declared twice", rd.name)
		}
		if rd.from != "" && !seen[rd.from] {
			t.Errorf("%s reads from %s, not an earlier read", rd.name, rd.from)
		}
		seen[rd.name] = true
	}
	if len(marketReads(tMarket)) != len(marketReadList) {
		t.Fatal("marketReads and marketReadList differ in length")
	}
}
