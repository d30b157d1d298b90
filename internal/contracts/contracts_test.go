package contracts

import (
	"encoding/hex"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// Selectors from domain.md section 3 and 5 (checked there against the
// deployed contracts); a wrong type in a fragment changes its selector.
func TestSelectors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		abi    abi.ABI
		method string
		want   string
	}{
		{OptionMarketV2, "exerciseOption", "32f530a7"},
		{OptionMarketV2, "opData", "5673a221"},
		{OptionMarketV2, "opTickMap", "a2b15e4c"},
		{OptionMarketV2, "ownerOf", "6352211e"},
		{OptionMarketV2, "callAsset", "61f812a4"},
		{OptionMarketV2, "putAsset", "c8de6e83"},
		{OptionMarketV2, "primePool", "271ab517"},
		{OptionMarketV2, "getCurrentPricePerCallAsset", "ab89fbaf"},
		{OptionMarketV2, "multicall", "ac9650d8"},
		{QuoterV2, "quoteExactInputSingle", "c6a5026a"},
		{Multicall3, "aggregate3", "82ad56cb"},
		{ArbSys, "arbBlockNumber", "a3b1b31d"}, // keccak256("arbBlockNumber()")
		{ERC20, "decimals", "313ce567"},
		{ERC20, "symbol", "95d89b41"},
		{Pool, "slot0", "3850c7bd"},
		{Pool, "tickSpacing", "d0c93a7c"},
		// ethers 5 Interface.getSighash (testdata/vectors' node_modules).
		{MarketPositionManager, "positionManager", "791b98bc"},
		{PositionManager, "whitelistedHandlersWithApp", "7f541a7e"},
		{Handler, "paused", "5c975abb"},
		{Handler, "tokenIds", "d58778d6"},
		{Hook, "onPositionUse", "7bd14bcd"},
		{Hook, "owner", "8da5cb5b"},
		// keccak256 of the real signatures (DopexV2OptionMarketV2.sol);
		// the auto-exerciser's four are in the dispatcher of the creation
		// code broadcast in DeployAutoExercise.s.sol/42161/run-1700361220.
		{OptionMarketDelegates, "exerciseDelegator", "3b2b4603"},
		{OptionMarketDelegates, "updateExerciseDelegate", "600b584b"},
		{OptionMarketDelegates, "settlers", "c70a900f"},
		{AutoExerciseTimeBased, "feeTo", "017e7e58"},
		{AutoExerciseTimeBased, "timeToSettle", "c8e90cec"},
		{AutoExerciseTimeBased, "MAX_EXECUTOR_FEE", "0e952532"},
		{AutoExerciseTimeBased, "EXECUTOR_FEE_PRECISION", "9905f0d8"},
		// keccak256 (js-sha3 0.8) of the signatures in stryke-xyz/clamm
		// 80766cc: UniswapV3SingleTickLiquidityHandlerV3, DopexV2PositionManagerV2.
		{HandlerV3Pools, "whitelistedPools", "67bea493"},
		{PositionManagerV2Reserve, "reserveLiquidity", "3bccc5ac"},
		{PositionManagerV2Reserve, "withdrawReserveLiquidity", "ceb76536"},
		// keccak256 (js-sha3 0.8, internal/evmtest/testdata's node_modules)
		// of stryke-xyz/clamm's swappers' getters and SwapRouter's factory().
		{Swapper, "sr", "df791d80"},
		{Swapper, "oneInchRouter", "ac3af208"},
		{SwapRouter, "factory", "c45a0155"},
	}
	for _, c := range cases {
		if got := hex.EncodeToString(c.abi.Methods[c.method].ID); got != c.want {
			t.Errorf("%s: selector %s, want %s", c.method, got, c.want)
		}
	}
	if id := V3Errors.Errors["UniswapV3SingleTickLiquidityHandlerV3__NotWhitelistedPool"].ID; hex.EncodeToString(id[:4]) != "ad4cc197" {
		t.Errorf("NotWhitelistedPool: selector %x", id[:4])
	}
}

func TestEventTopics(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"LogMintOption":     "733a06dcc0387bf816c34d99f254ceb937558fe9d4df66bbe70efa1b2aa1021f",
		"LogExerciseOption": "47283bcc199cd4d1c53508922f5a4d8a832a4fdf09854c82acf3ae49da4d446f",
	} {
		if got := hex.EncodeToString(OptionMarketV2.Events[name].ID.Bytes()); got != want {
			t.Errorf("%s: topic %s, want %s", name, got, want)
		}
	}
}

func TestMulticall3TimestampSelector(t *testing.T) {
	t.Parallel()
	if got := hex.EncodeToString(Multicall3.Methods["getCurrentBlockTimestamp"].ID); got != "0f28c97d" {
		t.Fatalf("selector %s", got)
	}
}

// The position manager's key for the Arbitrum Uniswap handler and the demo
// market, computed with ethers 5 (testdata/vectors' node_modules):
// keccak256(defaultAbiCoder.encode(['address','address'], [handler, market])).
func TestWhitelistKey(t *testing.T) {
	t.Parallel()
	got := WhitelistKey(common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116"), common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744"))
	if got.Hex() != "0x916f80d0c7dbe407ca9c4a7bc0e5f7f0db61a7e8643bbae868f9509e93012706" {
		t.Fatalf("key %s", got.Hex())
	}
	if len(Handler.Methods["tokenIds"].Outputs) != HandlerV2Words {
		t.Fatal("tokenIds outputs")
	}
}

// A probe's code decodes to what it was made of, and outcomes packed as
// the probe returns them decode to themselves (the fake node's answer is
// read as the EVM's would be).
func TestProbeCodeRoundTrip(t *testing.T) {
	steps := []ProbeStep{{Target: common.Address{1}, Data: []byte{1, 2}, Quote: []byte{3}}, {Target: common.Address{2}, Data: []byte{4}}}
	code, err := ProbeCode(steps, []common.Address{{7}, {8}}, common.Address{9}, big.NewInt(42))
	if err != nil {
		t.Fatal(err)
	}
	run, ok := UnpackProbeCode(code)
	if !ok || len(run.Steps) != 2 || run.Steps[0].Target != (common.Address{1}) || string(run.Steps[0].Quote) != string([]byte{3}) ||
		len(run.Steps[1].Quote) != 0 || run.ShareID.Int64() != 42 || run.ShareToken != (common.Address{9}) || len(run.Tokens) != 2 {
		t.Fatalf("%+v %v", run, ok)
	}
	outs := []ProbeOutcome{{OK: true, Return: []byte{5}, TokenDeltas: []*big.Int{big.NewInt(-3), big.NewInt(4)}, ShareDelta: big.NewInt(-9), Quoted: big.NewInt(11)},
		{OK: false, Return: []byte{6}, TokenDeltas: []*big.Int{big.NewInt(0), big.NewInt(0)}}}
	packed, err := PackProbe(outs)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnpackProbe(packed)
	if err != nil || len(back) != 2 || !back[0].OK || back[0].Quoted.Int64() != 11 || back[0].TokenDeltas[0].Int64() != -3 || back[1].OK || back[1].Return[0] != 6 {
		t.Fatalf("%+v %v", back, err)
	}
}
