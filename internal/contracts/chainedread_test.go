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
