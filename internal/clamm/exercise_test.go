package clamm

import (
	"encoding/json"
	"math/big"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// calldata.json is encoded by ethers' ABI coder (gen.mjs).
func TestExerciseCalldataMatchesEthers(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../testdata/vectors/calldata.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Calldata []struct {
			OptionID  string   `json:"optionId"`
			Swappers  []string `json:"swappers"`
			SwapData  []string `json:"swapData"`
			Liquidity []string `json:"liquidity"`
			Calldata  string   `json:"calldata"`
		} `json:"calldata"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Calldata) < 2 {
		t.Fatal("calldata.json has too few cases")
	}
	for i, c := range v.Calldata {
		p := ExerciseParams{OptionID: bi(t, c.OptionID)}
		for j := range c.Swappers {
			p.Swapper = append(p.Swapper, common.HexToAddress(c.Swappers[j]))
			p.SwapData = append(p.SwapData, common.FromHex(c.SwapData[j]))
			p.LiquidityToExercise = append(p.LiquidityToExercise, bi(t, c.Liquidity[j]))
		}
		got, err := ExerciseCalldata(p)
		if err != nil {
			t.Fatal(err)
		}
		if hexutil.Encode(got) != c.Calldata {
			t.Errorf("case %d:\n got %s\nwant %s", i, hexutil.Encode(got), c.Calldata)
		}
		// And it decodes back with the contract's ABI.
		method := contracts.OptionMarketV2.Methods["exerciseOption"]
		args, err := method.Inputs.Unpack(got[4:])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(args[0])
		var back struct {
			OptionID            *big.Int         `json:"optionId"`
			Swapper             []common.Address `json:"swapper"`
			SwapData            [][]byte         `json:"swapData"`
			LiquidityToExercise []*big.Int       `json:"liquidityToExercise"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.OptionID.Cmp(p.OptionID) != 0 || len(back.Swapper) != len(p.Swapper) || back.LiquidityToExercise[0].Cmp(p.LiquidityToExercise[0]) != 0 {
			t.Errorf("case %d decodes to %s", i, b)
		}
	}
}

// The issue's case, spelled out: optionId 1, one leg, uni-v3 swapper,
// swapData abi.encode(uint24 500, uint256 0), liquidity 1000.
func TestExerciseCalldataIssueCase(t *testing.T) {
	t.Parallel()
	sd, err := UniV3SwapData(500, big.NewInt(0))
	if err != nil {
		t.Fatal(err)
	}
	want := "0x" + "00000000000000000000000000000000000000000000000000000000000001f4" + "0000000000000000000000000000000000000000000000000000000000000000"
	if hexutil.Encode(sd) != want {
		t.Fatalf("swapData %x", sd)
	}
	got, err := ExerciseCalldata(ExerciseParams{
		OptionID: big.NewInt(1), Swapper: []common.Address{common.HexToAddress("0x985A3f3D6822F037968d48Aa3F7D7d990D72F333")},
		SwapData: [][]byte{sd}, LiquidityToExercise: []*big.Int{big.NewInt(1000)},
	})
	if err != nil {
		t.Fatal(err)
	}
	words := []string{
		"0000000000000000000000000000000000000000000000000000000000000020", // offset of the tuple
		"0000000000000000000000000000000000000000000000000000000000000001", // optionId
		"0000000000000000000000000000000000000000000000000000000000000080", // offset of swapper[]
		"00000000000000000000000000000000000000000000000000000000000000c0", // offset of swapData[]
		"0000000000000000000000000000000000000000000000000000000000000160", // offset of liquidityToExercise[]
		"0000000000000000000000000000000000000000000000000000000000000001", // swapper.length
		"000000000000000000000000985a3f3d6822f037968d48aa3f7d7d990d72f333",
		"0000000000000000000000000000000000000000000000000000000000000001", // swapData.length
		"0000000000000000000000000000000000000000000000000000000000000020", // offset of swapData[0]
		"0000000000000000000000000000000000000000000000000000000000000040", // swapData[0].length
		"00000000000000000000000000000000000000000000000000000000000001f4", // fee 500
		"0000000000000000000000000000000000000000000000000000000000000000", // amountOutMinimum 0
		"0000000000000000000000000000000000000000000000000000000000000001", // liquidityToExercise.length
		"00000000000000000000000000000000000000000000000000000000000003e8", // 1000
	}
	expect := "0x32f530a7"
	for _, w := range words {
		expect += w
	}
	if hexutil.Encode(got) != expect {
		t.Fatalf("\n got %s\nwant %s", hexutil.Encode(got), expect)
	}
}

// domain.md's worked example: LPs need 10000, the swap gives 10500, slippage 1%.
func TestSlippageWorkedExample(t *testing.T) {
	t.Parallel()
	s, err := ParseSlippage("1", 50)
	if err != nil {
		t.Fatal(err)
	}
	out, req := big.NewInt(10500), big.NewInt(10000)
	profit := new(big.Int).Sub(out, req)
	minProfit := new(big.Int).Sub(s.MinOut(out), req)
	if profit.Int64() != 500 || minProfit.Int64() != 395 {
		t.Fatalf("profit %s minProfit %s", profit, minProfit)
	}
}

func TestParseSlippage(t *testing.T) {
	t.Parallel()
	for in, minOut := range map[string]int64{"1": 990000, "0.5": 995000, "50": 500000, "0.000001": 999999, "2.25": 977500} {
		s, err := ParseSlippage(in, 50)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := s.MinOut(big.NewInt(1000000)); got.Int64() != minOut {
			t.Errorf("%s: minOut %s, want %d", in, got, minOut)
		}
	}
	for _, bad := range []string{"", "0", "0.0", "50.000001", "51", "-1", "1e1", ".5", "5.", "1.0000001", "abc", "1,5", " 1", "NaN", "Inf", "99999999", "0010"} {
		if _, err := ParseSlippage(bad, 50); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSlippageString(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"1": "1", "1.0": "1", "0.50": "0.5", "2.25": "2.25", "0.000001": "0.000001", "050": "50", "10.010": "10.01"} {
		s, err := ParseSlippage(in, 50)
		if err != nil || s.String() != want {
			t.Errorf("%s: %q %v, want %s", in, s.String(), err, want)
		}
	}
}

func TestExerciseLegSides(t *testing.T) {
	t.Parallel()
	l := big.NewInt(1_000_000_000_000_000_000)
	a0, a1, _ := RangeAmounts(-196250, -196240, l)
	call, _ := ExerciseLeg(-196250, -196240, l, true)
	put, _ := ExerciseLeg(-196250, -196240, l, false)
	if call.AmountToSwap.Cmp(a0) != 0 || call.AmountReq.Cmp(a1) != 0 || put.AmountToSwap.Cmp(a1) != 0 || put.AmountReq.Cmp(a0) != 0 {
		t.Fatal("legs do not pick the sides of RangeAmounts")
	}
}
