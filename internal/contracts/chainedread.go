package contracts

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// ChainedRead is sol/ChainedRead.sol as compiled by the pinned solc
// (internal/evmtest/testdata/compile.mjs; CI recompiles and diffs): its
// creation code runs a list of static calls, a call's target possibly the
// address an earlier call returned, and returns every result. It is never
// deployed: ChainedReadCode is sent as an eth_call without `to`.
var ChainedRead = mustArtifact(chainedReadJSON)

//go:embed sol/ChainedRead.json
var chainedReadJSON []byte

// ChainedCall is one call of a ChainedRead. With TargetFrom n > 0 the
// target is the address in the first word of call n-1's return data (the
// call is skipped, not ok, when that call failed or returned less than a
// word); with 0 it is Target.
type ChainedCall struct {
	TargetFrom *big.Int
	Target     common.Address
	Data       []byte
}

// TargetAt is the address call i of a ChainedRead calls, given the outcomes
// of the calls before it (ok and ret from index 0), or false when
// ChainedRead skips it: the rule of sol/ChainedRead.sol, for code that
// reproduces it without an EVM (the gateway's Multicall3 fallback, fakes).
func (c ChainedCall) TargetAt(i int, ok []bool, ret [][]byte) (common.Address, bool) {
	j := c.Source()
	if j < 0 {
		return c.Target, true
	}
	if j >= i || !ok[j] || len(ret[j]) < 32 {
		return common.Address{}, false
	}
	return common.BytesToAddress(ret[j][12:32]), true
}

// Source is the index of the call whose answer names this call's target,
// or -1 when the target is fixed. A TargetFrom too large to be an index
// gives an index no call has (ChainedRead skips such a call).
func (c ChainedCall) Source() int {
	if c.TargetFrom == nil || c.TargetFrom.Sign() == 0 {
		return -1
	}
	if !c.TargetFrom.IsInt64() || c.TargetFrom.Int64() > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(c.TargetFrom.Int64()) - 1
}

// ChainedReadCode is the eth_call data that runs calls. calls is not
// modified (a nil TargetFrom is packed as 0, a fixed target).
func ChainedReadCode(calls []ChainedCall) ([]byte, error) {
	packed := make([]ChainedCall, len(calls))
	for i, c := range calls {
		if c.TargetFrom == nil {
			c.TargetFrom = new(big.Int)
		}
		packed[i] = c
	}
	args, err := ChainedRead.ABI.Pack("", packed)
	if err != nil {
		return nil, fmt.Errorf("pack ChainedRead: %w", err)
	}
	return append(bytes.Clone(ChainedRead.Bytecode), args...), nil
}

// chainedReadOutputs is what the constructor returns: abi.encode(ok, ret).
var chainedReadOutputs = abi.Arguments{{Type: mustType("bool[]")}, {Type: mustType("bytes[]")}}

// UnpackChainedRead decodes a ChainedRead's output into each call's
// success and return data.
func UnpackChainedRead(out []byte) (ok []bool, ret [][]byte, err error) {
	vals, err := chainedReadOutputs.Unpack(out)
	if err != nil {
		return nil, nil, err
	}
	ok, ret = vals[0].([]bool), vals[1].([][]byte)
	if len(ok) != len(ret) {
		return nil, nil, fmt.Errorf("ChainedRead returned %d flags for %d results", len(ok), len(ret))
	}
	return ok, ret, nil
}

// PackChainedReadOutput encodes a ChainedRead's output (for fakes that
// answer it without an EVM).
func PackChainedReadOutput(ok []bool, ret [][]byte) ([]byte, error) {
	return chainedReadOutputs.Pack(ok, ret)
}

// UnpackChainedReadCode recovers the calls from ChainedReadCode's output,
// or reports that data is not a ChainedRead (for fakes).
func UnpackChainedReadCode(data []byte) ([]ChainedCall, bool) {
	if !bytes.HasPrefix(data, ChainedRead.Bytecode) {
		return nil, false
	}
	vals, err := ChainedRead.ABI.Constructor.Inputs.Unpack(data[len(ChainedRead.Bytecode):])
	if err != nil {
		return nil, false
	}
	raw := vals[0].([]struct {
		TargetFrom *big.Int       `json:"targetFrom"`
		Target     common.Address `json:"target"`
		Data       []byte         `json:"data"`
	})
	calls := make([]ChainedCall, len(raw))
	for i, c := range raw {
		calls[i] = ChainedCall{TargetFrom: c.TargetFrom, Target: c.Target, Data: c.Data}
	}
	return calls, true
}

// Artifact is a compiled contract: ABI and creation code.
type Artifact struct {
	ABI      abi.ABI
	Bytecode []byte
}

func mustArtifact(raw []byte) Artifact {
	var a struct {
		ABI      json.RawMessage `json:"abi"`
		Bytecode string          `json:"bytecode"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		panic("contracts: " + err.Error())
	}
	return Artifact{ABI: mustABI(string(a.ABI)), Bytecode: common.FromHex(a.Bytecode)}
}

func mustType(t string) abi.Type {
	typ, err := abi.NewType(t, "", nil)
	if err != nil {
		panic("contracts: " + err.Error())
	}
	return typ
}
