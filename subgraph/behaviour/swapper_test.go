package behaviour_test

import (
	"bytes"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping/mappingtest"
)

// callsABI are the calls an exercise transaction wraps: the market's
// exerciseOption and multicall, Multicall3's aggregate3 (their real
// signatures, selectors 0x32f530a7, 0xac9650d8, 0x82ad56cb).
const callsABI = `[
 {"type":"function","name":"exerciseOption","inputs":[{"name":"p","type":"tuple","components":[
   {"name":"optionId","type":"uint256"},{"name":"swapper","type":"address[]"},{"name":"swapData","type":"bytes[]"},{"name":"liquidityToExercise","type":"uint256[]"}]}]},
 {"type":"function","name":"multicall","inputs":[{"name":"data","type":"bytes[]"}]},
 {"type":"function","name":"aggregate3","inputs":[{"name":"calls","type":"tuple[]","components":[
   {"name":"target","type":"address"},{"name":"allowFailure","type":"bool"},{"name":"callData","type":"bytes"}]}]}
]`

type exerciseParams struct {
	OptionId            *big.Int
	Swapper             []common.Address
	SwapData            [][]byte
	LiquidityToExercise []*big.Int
}

type call3 struct {
	Target       common.Address
	AllowFailure bool
	CallData     []byte
}

// The swappers of an exercise, decoded from its transaction's input
// through Multicall3's aggregate3 and the market's multicall: the
// exercised legs' swappers (not a leg of zero liquidity, nor another
// option's exercise in the same multicall), each asked once what it is:
// a SwapRouterSwapper answers sr(), a OneInchSwapper oneInchRouter().
func TestExerciseSwappersFromInput(t *testing.T) {
	calls := &marketCalls{t: t, data: map[string]opData{}}
	router := common.HexToAddress("0xE592427A0AEce92De3Edee1F18E0157C05861564")
	inch := common.HexToAddress("0x1111111254EEB25477B68fb85Ed929f73A960582")
	swA, swB := common.HexToAddress("0x5A00000000000000000000000000000000000001"), common.HexToAddress("0x5B00000000000000000000000000000000000002")
	swC, swD := common.HexToAddress("0x5C00000000000000000000000000000000000003"), common.HexToAddress("0x5D00000000000000000000000000000000000004")
	sw, err := mapping.ABI("Swapper")
	if err != nil {
		t.Fatal(err)
	}
	probes := map[common.Address]int{}
	answer := func(to common.Address, data []byte, block uint64) ([]byte, bool, error) {
		if to == swA || to == swB || to == swC || to == swD {
			probes[to]++
			switch {
			case to == swA && bytes.Equal(data[:4], sw.Methods["sr"].ID):
				out, err := sw.Methods["sr"].Outputs.Pack(router)
				return out, false, err
			case to == swB && bytes.Equal(data[:4], sw.Methods["oneInchRouter"].ID):
				out, err := sw.Methods["oneInchRouter"].Outputs.Pack(inch)
				return out, false, err
			}
			return nil, true, nil
		}
		return calls.call(to, data, block)
	}
	c := optionSeven(t, calls, answer)

	a, err := abi.JSON(strings.NewReader(callsABI))
	if err != nil {
		t.Fatal(err)
	}
	fee := common.LeftPadBytes(big.NewInt(500).Bytes(), 32)
	mine, err := a.Pack("exerciseOption", exerciseParams{OptionId: big.NewInt(7), Swapper: []common.Address{swA, swB, swC},
		SwapData: [][]byte{append(fee, make([]byte, 32)...), {0x12, 0xaa}, {}}, LiquidityToExercise: []*big.Int{big.NewInt(4e11), big.NewInt(1e11), big.NewInt(0)}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := a.Pack("exerciseOption", exerciseParams{OptionId: big.NewInt(8), Swapper: []common.Address{swD},
		SwapData: [][]byte{{}}, LiquidityToExercise: []*big.Int{big.NewInt(1)}})
	if err != nil {
		t.Fatal(err)
	}
	multi, err := a.Pack("multicall", [][]byte{other, mine})
	if err != nil {
		t.Fatal(err)
	}
	c.Next(3001, 1_700_000_100, autoExer)
	if c.Tx.Input, err = a.Pack("aggregate3", []call3{{Target: marketV2, CallData: multi}}); err != nil {
		t.Fatal(err)
	}
	c.Emit("OptionMarketV2_0x501b", mV2, "LogExerciseOption(address,uint256,uint256,uint256)", "handleExerciseOption", marketV2,
		alice, big.NewInt(7), big.NewInt(5), big.NewInt(6))

	xid := strings.ToLower(c.Tx.Hash.Hex()) + "-0"
	want := map[common.Address]struct {
		kind   string
		router common.Address
		word   int64 // -1: none
	}{swA: {"swapRouter", router, 500}, swB: {"oneInch", inch, -1}}
	for a, w := range want {
		s := c.Store.Get("Swapper", strings.ToLower(a.Hex()))
		if s == nil || s["kind"].Str != w.kind || !bytes.Equal(s["router"].Bytes, w.router.Bytes()) || s["firstExercise"].Str != xid {
			t.Fatalf("swapper %s: %+v", a, s)
		}
		if got := s["swapDataWord"].Big; (w.word < 0) != (got == nil) || got != nil && got.Int64() != w.word {
			t.Errorf("swapper %s swapDataWord %v, want %d", a, got, w.word)
		}
		if x := c.Store.Get("ExerciseSwapper", xid+"-"+strings.ToLower(a.Hex())); x == nil || x["legs"].Int != 1 || x["exercise"].Str != xid {
			t.Errorf("exercise swapper %s: %+v", a, x)
		}
	}
	if n := len(c.Store.All("Swapper")); n != 2 {
		t.Errorf("%d swappers, want 2 (a leg of no liquidity, another option's exercise: none)", n)
	}
	if probes[swC] != 0 || probes[swD] != 0 {
		t.Errorf("probed swappers not exercised: %v", probes)
	}
}

// optionSeven is a chain where alice holds option 7 of marketV2, three
// legs, minted at block 3000; answer serves its calls.
func optionSeven(t *testing.T, calls *marketCalls, answer mappingtest.Call) *mappingtest.Chain {
	t.Helper()
	c := mappingtest.New(t, answer)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogOptionsMarketInitialized(address,address,address,address,address)",
		"handleMarketInitializedV2", marketV2, wethUSDC, pricing, feeTo, weth, usdc)
	c.Next(3000, 1_700_000_000, alice)
	calls.data[optID(marketV2, 7)] = opData{legs: 3, tl: 199990, tu: 200010, expiry: 1_700_086_400, isCall: true}
	calls.ticks = map[string][]opTick{optID(marketV2, 7): {
		{uniHandler, wethUSDC, hook24h, 200000, 200010, 4e11}, {uniHandler, wethUSDC, hook24h, 199990, 200000, 1e11}, {uniHandler, wethUSDC, hook24h, 199990, 200010, 1e11}}}
	c.Emit("OptionMarketV2_0x501b", mV2, "Transfer(address,address,uint256)", "handleTransfer", marketV2, common.Address{}, alice, big.NewInt(7))
	c.Emit("OptionMarketV2_0x501b", mV2, mintV2Sig, "handleMintOptionV2", marketV2, alice, big.NewInt(7), true, big.NewInt(1), big.NewInt(2), big.NewInt(0))
	return c
}

// crafted is a swapper address of the bounded-decode test: 0xEE…, then i.
func crafted(i int) common.Address {
	return common.BytesToAddress(append([]byte{0xee}, common.LeftPadBytes(big.NewInt(int64(i)).Bytes(), 19)...))
}

// aliased is multicall(bytes[]) of n entries whose offsets all point at
// the one copy of child (hand-encoded: a Go ABI encoder writes a copy per
// entry, which is not what an attacker sends).
func aliased(child []byte, n int) []byte {
	word := func(v int) []byte { return common.LeftPadBytes(big.NewInt(int64(v)).Bytes(), 32) }
	out := append(common.FromHex("0xac9650d8"), word(32)...)
	out = append(out, word(n)...)
	for i := 0; i < n; i++ {
		out = append(out, word(32*n)...) // relative to the first offset word
	}
	out = append(out, word(len(child))...)
	return append(out, common.RightPadBytes(child, (len(child)+31)/32*32)...)
}

// The decode of an exercise's input is bounded per transaction (see
// subgraph/src/swapper.ts): four levels of multicall, each of 50 offsets
// aliasing one child (50^4 exerciseOption decodes before the bound), are
// decoded once per level; a multicall of 100 distinct exercises stops at
// the 64-call budget, ten exercises of ten legs at the 64-leg budget, and
// a swapper named by many legs is one ExerciseSwapper counting them.
func TestExerciseSwappersBounded(t *testing.T) {
	calls := &marketCalls{t: t, data: map[string]opData{}}
	probes := 0
	answer := func(to common.Address, data []byte, block uint64) ([]byte, bool, error) {
		if to[0] == 0xee {
			probes++
			return nil, true, nil // neither sr() nor oneInchRouter(): kind unknown
		}
		return calls.call(to, data, block)
	}
	c := optionSeven(t, calls, answer)
	a, err := abi.JSON(strings.NewReader(callsABI))
	if err != nil {
		t.Fatal(err)
	}
	exercise := func(sw []common.Address) []byte {
		p := exerciseParams{OptionId: big.NewInt(7), Swapper: sw}
		for range sw {
			p.SwapData = append(p.SwapData, []byte{})
			p.LiquidityToExercise = append(p.LiquidityToExercise, big.NewInt(1))
		}
		out, err := a.Pack("exerciseOption", p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	multicall := func(cs [][]byte) []byte {
		out, err := a.Pack("multicall", cs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var ten []common.Address
	for i := 0; i < 10; i++ {
		ten = append(ten, crafted(i))
	}
	nested := exercise(ten)
	for level := 0; level < 4; level++ {
		nested = aliased(nested, 50)
	}
	var hundred [][]byte
	for i := 0; i < 100; i++ {
		hundred = append(hundred, exercise([]common.Address{crafted(100 + i)}))
	}
	var tenByTen [][]byte // leg 0 of each: one shared swapper
	for i := 0; i < 10; i++ {
		sw := []common.Address{crafted(1000)}
		for j := 1; j < 10; j++ {
			sw = append(sw, crafted(1000+10*i+j))
		}
		tenByTen = append(tenByTen, exercise(sw))
	}
	cases := []struct {
		name  string
		input []byte
		legs  map[common.Address]int64 // every ExerciseSwapper expected
	}{
		{"4x50 aliased", nested, map[common.Address]int64{}},
		{"100 exercises", multicall(hundred), map[common.Address]int64{}},
		{"10x10 legs", multicall(tenByTen), map[common.Address]int64{crafted(1000): 7}},
	}
	for _, sw := range ten {
		cases[0].legs[sw] = 1 // decoded once, not 50^4 times
	}
	for i := 0; i < 63; i++ { // the multicall is the budget's first call
		cases[1].legs[crafted(100+i)] = 1
	}
	for i := 0; i < 7; i++ { // 64 legs: six exercises and four legs of the seventh
		for j := 1; j < 10 && 10*i+j < 64; j++ {
			cases[2].legs[crafted(1000+10*i+j)] = 1
		}
	}
	for i, tc := range cases {
		c.Next(uint64(3001+i), uint64(1_700_000_100+i), autoExer)
		c.Tx.Input = tc.input
		before := probes
		c.Emit("OptionMarketV2_0x501b", mV2, "LogExerciseOption(address,uint256,uint256,uint256)", "handleExerciseOption", marketV2,
			alice, big.NewInt(7), big.NewInt(5), big.NewInt(6))
		xid := strings.ToLower(c.Tx.Hash.Hex()) + "-0"
		n := 0
		for _, id := range c.Store.All("ExerciseSwapper") {
			if strings.HasPrefix(id, xid+"-") {
				n++
			}
		}
		if n != len(tc.legs) {
			t.Errorf("%s: %d exercise swappers, want %d", tc.name, n, len(tc.legs))
		}
		for sw, legs := range tc.legs {
			if x := c.Store.Get("ExerciseSwapper", xid+"-"+strings.ToLower(sw.Hex())); x == nil || x["legs"].Int != legs {
				t.Errorf("%s: exercise swapper %s: %+v, want %d legs", tc.name, sw, x, legs)
			}
		}
		if got := probes - before; got != 2*len(tc.legs) { // each new swapper asked sr() then oneInchRouter()
			t.Errorf("%s: %d probes, want %d", tc.name, got, 2*len(tc.legs))
		}
	}
}
