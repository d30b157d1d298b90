package contracts

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// ChainedReadCode is the compiled creation code followed by the ABI-encoded
// calls, and the fakes' decoder recovers exactly those calls; the output
// codec round-trips a failed call's empty data. (The code itself runs on a
// real EVM in internal/evmtest.)
func TestChainedReadCodec(t *testing.T) {
	t.Parallel()
	if len(ChainedRead.Bytecode) == 0 || ChainedRead.ABI.Constructor.Inputs[0].Type.String() != "(uint256,address,bytes)[]" {
		t.Fatalf("artifact: %d bytes of code, constructor %v", len(ChainedRead.Bytecode), ChainedRead.ABI.Constructor.Inputs)
	}
	calls := []ChainedCall{
		{Target: common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744"), Data: []byte{0x27, 0x1a, 0xb5, 0x17}},
		{TargetFrom: big.NewInt(1), Data: []byte{0x38, 0x50, 0xc7, 0xbd}},
	}
	code, err := ChainedReadCode(calls)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(code, ChainedRead.Bytecode) {
		t.Fatal("the call data does not start with the creation code")
	}
	back, ok := UnpackChainedReadCode(code)
	if !ok || len(back) != 2 || back[0].Target != calls[0].Target || back[0].TargetFrom.Sign() != 0 ||
		back[1].TargetFrom.Int64() != 1 || !bytes.Equal(back[1].Data, calls[1].Data) {
		t.Fatalf("decoded %v, %+v", ok, back)
	}
	if _, ok := UnpackChainedReadCode(calls[1].Data); ok {
		t.Fatal("plain call data read as a ChainedRead")
	}
	out, err := PackChainedReadOutput([]bool{true, false}, [][]byte{{9}, {}})
	if err != nil {
		t.Fatal(err)
	}
	oks, rets, err := UnpackChainedRead(out)
	if err != nil || len(oks) != 2 || !oks[0] || oks[1] || !bytes.Equal(rets[0], []byte{9}) || len(rets[1]) != 0 {
		t.Fatalf("%v %v %v", oks, rets, err)
	}
}

// TargetAt follows sol/ChainedRead.sol: a fixed target as given; a derived
// one from the first word of an earlier successful answer, skipped when that
// answer failed, is shorter than a word, or is not earlier.
func TestChainedCallTargetAt(t *testing.T) {
	t.Parallel()
	pool := common.HexToAddress("0xC6962004f452bE9203591991D15f6b388e09E8D0")
	word := common.LeftPadBytes(pool[:], 32)
	ok := []bool{true, false, true}
	ret := [][]byte{append(word, 1, 2), word, word[:31]}
	fixed := ChainedCall{Target: pool}
	if a, run := fixed.TargetAt(0, ok, ret); !run || a != pool {
		t.Fatalf("fixed: %s %v", a.Hex(), run)
	}
	for _, c := range []struct {
		from, at int
		run      bool
	}{{1, 3, true}, {2, 3, false}, {3, 3, false}, {1, 0, false}, {3, 2, false}} {
		a, run := ChainedCall{TargetFrom: big.NewInt(int64(c.from))}.TargetAt(c.at, ok, ret)
		if run != c.run || (run && a != pool) {
			t.Errorf("from %d at %d: %s %v, want run %v", c.from, c.at, a.Hex(), run, c.run)
		}
	}
}

// ChainedReadCode packs a nil TargetFrom as a fixed target without writing
// into its caller's slice: the caller's calls stay as built, so code that
// reads them afterwards (the Multicall3 fallback) sees what it built.
func TestChainedReadCodeLeavesCallsAlone(t *testing.T) {
	t.Parallel()
	calls := []ChainedCall{{Target: common.Address{1}, Data: []byte{1}}, {TargetFrom: big.NewInt(1), Data: []byte{2}}}
	if _, err := ChainedReadCode(calls); err != nil {
		t.Fatal(err)
	}
	if calls[0].TargetFrom != nil {
		t.Fatalf("ChainedReadCode set the caller's TargetFrom to %v", calls[0].TargetFrom)
	}
	for _, c := range []struct {
		from *big.Int
		want int
	}{{nil, -1}, {big.NewInt(0), -1}, {big.NewInt(1), 0}, {big.NewInt(12), 11}, {new(big.Int).Lsh(big.NewInt(1), 200), 1<<31 - 1}} {
		if got := (ChainedCall{TargetFrom: c.from}).Source(); got != c.want {
			t.Errorf("Source of TargetFrom %v: %d, want %d", c.from, got, c.want)
		}
	}
}
