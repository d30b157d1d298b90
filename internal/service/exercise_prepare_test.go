package service_test

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

type prepareVectors struct {
	Prepares []struct {
		Scenario  string              `json:"scenario"`
		ChainID   uint64              `json:"chainId"`
		Market    string              `json:"market"`
		OptionID  string              `json:"optionId"`
		Slippage  string              `json:"slippage"`
		Profit    string              `json:"profit"`
		MinProfit string              `json:"minProfit"`
		Legs      []trade.PreparedLeg `json:"legs"`
	} `json:"prepares"`
}

func slippage(t *testing.T, s string) clamm.Slippage {
	t.Helper()
	v, err := clamm.ParseSlippage(s, 50)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// For calls and puts on a normal and an inverted market, with both
// swappers: profit is exactly the sum of (quote - amountReq), minProfit
// applies the slippage, leg by leg as gen.mjs computed them with the SDK.
func TestPrepareMatchesIndependentVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "testdata/vectors/prepare.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v prepareVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range v.Prepares {
		scs, err := scenario.Load(filepath.Join(root, c.Scenario))
		if err != nil {
			t.Fatal(err)
		}
		svc, _ := newService(t, scs[0])
		id, _ := new(big.Int).SetString(c.OptionID, 10)
		swappers := []string{"uni-v3"}
		if c.ChainID == 42161 {
			swappers = append(swappers, "1inch")
		}
		for _, sw := range swappers {
			got, err := svc.ExercisePrepare(context.Background(), trade.PrepareRequest{
				ChainID: c.ChainID, Market: common.HexToAddress(c.Market), OptionID: id, SwapperID: sw, Slippage: slippage(t, c.Slippage),
			})
			if err != nil {
				t.Fatalf("%s option %s via %s: %v", c.Scenario, c.OptionID, sw, err)
			}
			if got.Profit != c.Profit || got.MinProfit != c.MinProfit {
				t.Errorf("%s option %s via %s: profit %s min %s, want %s %s", c.Scenario, c.OptionID, sw, got.Profit, got.MinProfit, c.Profit, c.MinProfit)
			}
			if got.SimulatedProfit != c.Profit {
				t.Errorf("simulated profit %s, want %s", got.SimulatedProfit, c.Profit)
			}
			for i, want := range c.Legs {
				// the vectors leave the quote out: what the prepare pays is
				// the sequence's simulation, not the quote of a leg alone
				g := got.Legs[i]
				if g.QuoteSource == "" || (g.QuotedOut == nil) != (g.QuoteSource == "simulation") {
					t.Errorf("leg %d: quotedOut %v from %q", i, g.QuotedOut, g.QuoteSource)
				}
				g.QuotedOut, g.QuoteSource = nil, ""
				if g != want {
					t.Errorf("leg %d: %+v, want %+v", i, got.Legs[i], want)
				}
			}
			checkTx(t, got, len(c.Legs))
			seen[c.Scenario+map[bool]string{true: "call", false: "put"}[strings.Contains(got.ProfitToken.Symbol, "USD")]] = true
		}
	}
	if len(seen) != 4 {
		t.Fatalf("cases cover %v; want call and put on both markets", seen)
	}
}

// checkTx decodes tx.data with the market ABI and checks it against the answer.
func checkTx(t *testing.T, p trade.Prepared, legs int) {
	t.Helper()
	data := common.FromHex(p.Tx.Data)
	if len(data) < 4 || hexutil.Encode(data[:4]) != "0x32f530a7" {
		t.Fatalf("calldata %s", p.Tx.Data)
	}
	args, err := contracts.OptionMarketV2.Methods["exerciseOption"].Inputs.Unpack(data[4:])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(args[0])
	var params struct {
		Swapper  []common.Address `json:"swapper"`
		SwapData [][]byte         `json:"swapData"`
	}
	_ = json.Unmarshal(b, &params)
	if len(params.Swapper) != legs || len(p.Swappers) != legs || len(p.SwapData) != legs {
		t.Fatalf("legs: calldata %d, swappers %d, swapData %d, want %d", len(params.Swapper), len(p.Swappers), len(p.SwapData), legs)
	}
	for i := range params.Swapper {
		if params.Swapper[i].Hex() != p.Swappers[i] || hexutil.Encode(params.SwapData[i]) != p.SwapData[i] {
			t.Errorf("leg %d: calldata and answer disagree", i)
		}
	}
}

func TestPrepareRefusals(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc, f := newService(t, scs[0])
	market := scs[0].Market.Address
	for _, c := range []struct {
		id   int64
		code *problem.Code
	}{
		{112, problem.OptionExpired},
		{113, problem.OptionNotInTheMoney},
		{101, problem.OptionFullyExercised},
		{999, problem.OptionNotFound},
	} {
		_, err := svc.ExercisePrepare(context.Background(), trade.PrepareRequest{ChainID: 42161, Market: market, OptionID: big.NewInt(c.id), SwapperID: "uni-v3", Slippage: slippage(t, "1")})
		if p := problem.As(err); p.Code != c.code {
			t.Errorf("option %d: %v, want %s", c.id, err, c.code)
		}
	}
	// A V1 market is refused, told apart by its 5-field opTickMap.
	f.Node.Markets[market].Version = 1
	f.Node.Markets[market].Name = "Dopex V2 Option Market"
	_, err = svc.ExercisePrepare(context.Background(), trade.PrepareRequest{ChainID: 42161, Market: market, OptionID: big.NewInt(110), SwapperID: "uni-v3", Slippage: slippage(t, "1")})
	if p := problem.As(err); p.Code != problem.MarketV1Unsupported {
		t.Errorf("V1 market: %v", err)
	}
	// An OptionMarketOTMFE (opData with the expiry second, no
	// exerciseOption) is 422 MARKET_UNSUPPORTED saying what was found, not
	// a wrong OPTION_EXPIRED read from the tick words.
	f.Node.Markets[market].Version = chaintest.VersionOTMFE
	_, err = svc.ExercisePrepare(context.Background(), trade.PrepareRequest{ChainID: 42161, Market: market, OptionID: big.NewInt(110), SwapperID: "uni-v3", Slippage: slippage(t, "1")})
	if p := problem.As(err); p.Code != problem.MarketUnsupported || p.Kind() != problem.KindUnprocessable || !strings.Contains(p.Message, "OptionMarketOTMFE") || p.Param != "optionMarket" {
		t.Errorf("OTMFE market: %v", err)
	}
}

// The worked numbers through the real uni-v3 quoter code: a leg
// whose LPs are owed exactly 10000, quoted at 10500, slippage 1%.
func TestPrepareWorkedExample(t *testing.T) {
	// A call on a WETH(token0)/USDC market owes the LPs amount1(L).
	// Pick L so that amount1(L) over [-276330, -276320] is exactly 10000.
	lo, hi := -276330, -276320
	sa, _ := clamm.SqrtRatioAtTick(lo)
	sb, _ := clamm.SqrtRatioAtTick(hi)
	d := new(big.Int).Sub(sb, sa)
	l := new(big.Int).Lsh(big.NewInt(10000), 96)
	l.Add(l, new(big.Int).Sub(d, big.NewInt(1))).Quo(l, d) // ceil(10000 * 2^96 / d)
	if leg, _ := clamm.ExerciseLeg(lo, hi, l, true); leg.AmountReq.Int64() != 10000 {
		t.Fatalf("amountReq %s", leg.AmountReq)
	}
	weth, usdc := common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"), common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	market := common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744")
	owner := common.HexToAddress("0xA11CE00000000000000000000000000000000001")
	cfg := config.Default()
	up := &vocab.Upstreams{
		Config: cfg.Chains[42161],
		Chain: stubChain{
			info: &chain.MarketInfo{Market: market, CallAsset: chain.Token{Address: weth, Decimals: 18, Symbol: "WETH"},
				PutAsset: chain.Token{Address: usdc, Decimals: 6, Symbol: "USDC"}, Token0: weth, Token1: usdc, Fee: 500, TickSpacing: 10},
			pos: &chain.Position{Owner: owner, Version: chain.MarketV2, BlockTimestamp: big.NewInt(100),
				Data: chain.OptionData{OpTickArrayLen: 1, TickLower: lo, TickUpper: hi, Expiry: big.NewInt(200), IsCall: true},
				Legs: []chain.OptionLeg{{TickLower: lo, TickUpper: hi, LiquidityToUse: l}}},
		},
		Quoters: map[string]swap.Quoter{"uni-v3": &swap.UniV3{RPC: fixedQuote{big.NewInt(10500)}, Quoter: common.HexToAddress("0x61fFE014bA17989E743c5F6cB21bF9697530B21e"),
			Timeout: time.Minute, Contracts: swap.Contracts{Address: cfg.Chains[42161].Swappers["uni-v3"].Address}}},
	}
	svc := service.New(map[uint64]*vocab.Upstreams{42161: up})
	got, err := svc.ExercisePrepare(context.Background(), trade.PrepareRequest{ChainID: 42161, Market: market, OptionID: big.NewInt(1), SwapperID: "uni-v3", Slippage: slippage(t, "1")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Profit != "500" || got.MinProfit != "395" || got.Legs[0].AmountOut != "10500" || got.Legs[0].MinAmountOut != "10395" {
		t.Fatalf("profit %s minProfit %s, want 500 395", got.Profit, got.MinProfit)
	}
	want, _ := clamm.UniV3SwapData(500, big.NewInt(10395))
	if got.SwapData[0] != hexutil.Encode(want) {
		t.Fatalf("swapData %s", got.SwapData[0])
	}
}

// stubChain is a node holding one market and one option: all the worked
// example asks of the chain.
type stubChain struct {
	vocab.Chain
	info *chain.MarketInfo
	pos  *chain.Position
}

func (s stubChain) Market(context.Context, common.Address) (*chain.MarketInfo, error) {
	return s.info, nil
}
func (s stubChain) MarketSnapshot(context.Context, common.Address) (*chain.MarketInfo, chain.PoolState, error) {
	return s.info, chain.PoolState{}, nil
}

func (s stubChain) Position(context.Context, common.Address, *big.Int) (*chain.Position, error) {
	return s.pos, nil
}
func (s stubChain) Positions(_ context.Context, _ common.Address, ids []*big.Int) ([]chain.PositionResult, error) {
	out := make([]chain.PositionResult, len(ids))
	for i := range out {
		out[i].Position = s.pos
	}
	return out, nil
}

// SimulateSequence is the market of the worked example: the one leg's swap
// delivers 10500 against 10000 owed.
func (s stubChain) SimulateSequence(context.Context, common.Address, common.Address, clamm.ExerciseParams) ([]chain.LegOutcome, error) {
	return []chain.LegOutcome{{Exercised: true, Delta: big.NewInt(500)}}, nil
}
func (s stubChain) SimulateExercise(context.Context, common.Address, common.Address, []byte) (*big.Int, error) {
	return big.NewInt(500), nil
}

// fixedQuote answers every quoteExactInputSingle in a batch with amountOut.
type fixedQuote struct{ amountOut *big.Int }

func (f fixedQuote) BatchCallContext(_ context.Context, b []rpc.BatchElem) error {
	for i := range b {
		out, err := contracts.QuoterV2.Methods["quoteExactInputSingle"].Outputs.Pack(f.amountOut, new(big.Int), uint32(0), new(big.Int))
		if err != nil {
			return err
		}
		*(b[i].Result.(*hexutil.Bytes)) = out
	}
	return nil
}

// The 1inch key comes from the environment variable the config names and
// travels only as a bearer token.
func TestOneInchKeyFromEnvironment(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	ch := cfg.Chains[42161]
	f := scenario.NewFakesFor(t, ch, scs[0])
	a, err := app.New(app.Options{Config: cfg, Transports: map[uint64]upstream.Transports{42161: f.Transports()},
		Getenv: func(k string) string { return map[string]string{"CLAMM_1INCH_API_KEY": "k-123"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	svc := a.Service
	if _, err := svc.ExercisePrepare(context.Background(), trade.PrepareRequest{ChainID: 42161, Market: scs[0].Market.Address,
		OptionID: big.NewInt(110), SwapperID: "1inch", Slippage: slippage(t, "1")}); err != nil {
		t.Fatal(err)
	}
	if got := f.OneInch.LastAuthorization(); got != "Bearer k-123" {
		t.Fatalf("Authorization %q", got)
	}
}
