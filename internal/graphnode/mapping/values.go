package mapping

import (
	"fmt"
	"reflect"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// The store's value model is the Graph Node emulator's: one Go model of the
// entities for the mappings, the emulator, the indexer and the tests.
type (
	Kind   = graphnode.Kind
	Value  = graphnode.Value
	Entity = graphnode.Entity
)

// The kinds of stored values, numbered as Graph Node's StoreValueKind.
const (
	KindString     = graphnode.KindString
	KindInt        = graphnode.KindInt
	KindBigDecimal = graphnode.KindBigDecimal
	KindBool       = graphnode.KindBool
	KindArray      = graphnode.KindArray
	KindNull       = graphnode.KindNull
	KindBytes      = graphnode.KindBytes
	KindBigInt     = graphnode.KindBigInt
	KindInt8       = graphnode.KindInt8
	KindTimestamp  = graphnode.KindTimestamp
)

// readEntity reads a graph-ts Entity (TypedMap<string, Value>: a pointer to
// an Array of TypedMapEntry{key, value}).
func (h *Host) readEntity(p uint32) Entity {
	hp := h.heap
	entries := hp.readPtrArray(hp.u32(p))
	e := make(Entity, len(entries))
	for _, entry := range entries {
		key := hp.readString(hp.u32(entry))
		e[key] = h.readValue(hp.u32(entry + 4))
	}
	return e
}

func (h *Host) readValue(p uint32) Value {
	hp := h.heap
	kind, payload := hp.readEnum(p)
	ptr := uint32(payload)
	switch Kind(kind) {
	case KindString:
		return Value{Kind: KindString, Str: hp.readString(ptr)}
	case KindInt:
		return Value{Kind: KindInt, Int: int64(int32(uint32(payload)))}
	case KindInt8, KindTimestamp:
		return Value{Kind: Kind(kind), Int: int64(payload)}
	case KindBool:
		return Value{Kind: KindBool, Bool: payload != 0}
	case KindBytes:
		return Value{Kind: KindBytes, Bytes: hp.readBytes(ptr)}
	case KindBigInt:
		return Value{Kind: KindBigInt, Big: hp.readBigInt(ptr)}
	case KindBigDecimal:
		return Value{Kind: KindBigDecimal, Big: hp.readBigInt(hp.u32(ptr)), Exp: hp.readBigInt(hp.u32(ptr + 4))}
	case KindArray:
		var arr []Value
		for _, el := range hp.readPtrArray(ptr) {
			arr = append(arr, h.readValue(el))
		}
		return Value{Kind: KindArray, Array: arr}
	case KindNull:
		return Value{Kind: KindNull}
	}
	h.fail("store value of unknown kind %d", kind)
	return Value{}
}

func (h *Host) newValue(v Value) uint32 {
	hp := h.heap
	var payload uint64
	switch v.Kind {
	case KindString:
		payload = uint64(hp.newString(v.Str))
	case KindInt:
		payload = uint64(uint32(int32(v.Int)))
	case KindInt8, KindTimestamp:
		payload = uint64(v.Int)
	case KindBool:
		if v.Bool {
			payload = 1
		}
	case KindBytes:
		payload = uint64(hp.newBytes(v.Bytes))
	case KindBigInt:
		payload = uint64(hp.newBigInt(v.Big))
	case KindBigDecimal:
		payload = uint64(hp.newStruct(12, hp.newBigInt(v.Big), hp.newBigInt(v.Exp)))
	case KindArray:
		els := make([]uint32, len(v.Array))
		for i, el := range v.Array {
			els[i] = h.newValue(el)
		}
		payload = uint64(hp.newPtrArray(tidArrayStoreValue, els))
	}
	return hp.newEnum(tidStoreValue, uint32(v.Kind), payload)
}

func (h *Host) newEntity(e Entity) uint32 {
	hp := h.heap
	var entries []uint32
	for _, k := range sortedKeys(e) {
		entries = append(entries, hp.newStruct(tidTypedMapEntryStore, hp.newString(k), h.newValue(e[k])))
	}
	return hp.newStruct(tidTypedMapStore, hp.newPtrArray(tidArrayTypedMapEntryStore, entries))
}

func sortedKeys(e Entity) []string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// ethereumCall runs a SmartContractCall {contractName, contractAddress,
// functionName, functionSignature, functionArgs}: the function is looked up
// in the named ABI and must have the given signature; the answer is the
// decoded outputs, or null when the call reverts (graph-ts's try_ calls).
func (h *Host) ethereumCall(a []uint64) uint64 {
	hp := h.heap
	p := uint32(a[0])
	contract := hp.readString(hp.u32(p))
	address := common.BytesToAddress(hp.readBytes(hp.u32(p + 4)))
	fnName := hp.readString(hp.u32(p + 8))
	sig := hp.readString(hp.u32(p + 12))
	parsed, ok := h.abis[contract]
	if !ok {
		h.fail("ethereum.call: Could not find ABI for contract \"%s\", try adding it to the 'abis' section of the subgraph manifest", contract)
	}
	method, ok := parsed.Methods[fnName]
	if !ok {
		h.fail("ethereum.call: %s has no function %s", contract, fnName)
	}
	if want := signature(method); want != sig {
		h.fail("ethereum.call: signature %s does not match the ABI's %s", sig, want)
	}
	argPtrs := hp.readPtrArray(hp.u32(p + 16))
	if len(argPtrs) != len(method.Inputs) {
		h.fail("ethereum.call: %s takes %d arguments, got %d", fnName, len(method.Inputs), len(argPtrs))
	}
	args := make([]any, len(argPtrs))
	for i, ap := range argPtrs {
		args[i] = h.goValue(method.Inputs[i].Type, ap)
	}
	packed, err := method.Inputs.Pack(args...)
	if err != nil {
		h.fail("ethereum.call: encode %s: %v", fnName, err)
	}
	if h.call == nil {
		h.fail("ethereum.call %s.%s but the host was given no Call", contract, fnName)
	}
	ret, reverted, err := h.call(h.ctx, address, append(append([]byte{}, method.ID...), packed...), h.block)
	if err != nil {
		panic(hostError{&NodeError{fmt.Errorf("%s.%s at %s: %w", contract, fnName, address.Hex(), err)}})
	}
	if reverted {
		return 0
	}
	outs, err := method.Outputs.Unpack(ret)
	if err != nil {
		// Graph Node counts an answer that does not decode against the
		// declared outputs as a revert (a contract of another kind)
		return 0
	}
	ptrs := make([]uint32, len(outs))
	for i, o := range outs {
		ptr, err := h.ethValue(method.Outputs[i].Type, o)
		if err != nil {
			h.fail("ethereum.call: %v", err)
		}
		ptrs[i] = ptr
	}
	return uint64(hp.newPtrArray(tidArrayEthereumValue, ptrs))
}

// signature is graph-ts's functionSignature: name(inputs):(outputs).
func signature(m abi.Method) string {
	s := m.Sig + ":("
	for i, o := range m.Outputs {
		if i > 0 {
			s += ","
		}
		s += o.Type.String()
	}
	return s + ")"
}

// goValue turns an ethereum.Value into the Go value go-ethereum packs for t.
func (h *Host) goValue(t abi.Type, p uint32) any {
	hp := h.heap
	kind, payload := hp.readEnum(p)
	switch t.T {
	case abi.AddressTy:
		if kind != evAddress {
			h.fail("argument of kind %d for an address", kind)
		}
		return common.BytesToAddress(hp.readBytes(uint32(payload)))
	case abi.BoolTy:
		return payload != 0
	case abi.IntTy, abi.UintTy:
		if kind != evInt && kind != evUint {
			h.fail("argument of kind %d for %s", kind, t)
		}
		x := hp.readBigInt(uint32(payload))
		if t.Size > 64 {
			return x
		}
		v := reflect.New(t.GetType()).Elem()
		if t.T == abi.IntTy {
			v.SetInt(x.Int64())
		} else {
			v.SetUint(x.Uint64())
		}
		return v.Interface()
	}
	h.fail("argument type %s not supported by this host", t)
	return nil
}
