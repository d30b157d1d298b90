package mapping

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"

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
	entries := hp.ptrArray(hp.u32(p))
	e := make(Entity, len(entries)/4)
	for i := 0; i < len(entries); i += 4 {
		// a view of the module's memory: reading the entity allocates
		// nothing there (no grow), so it stays valid throughout
		entry := binary.LittleEndian.Uint32(entries[i:])
		key := hp.readCachedString(hp.u32(entry))
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
		return Value{Kind: KindString, Str: hp.readCachedString(ptr)}
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
		els := hp.ptrArray(ptr) // a view: reading allocates nothing in the module
		var arr []Value
		if len(els) > 0 {
			arr = make([]Value, 0, len(els)/4)
		}
		for i := 0; i < len(els); i += 4 {
			arr = append(arr, h.readValue(binary.LittleEndian.Uint32(els[i:])))
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

// newEntity writes e, an entity of type typ, with its fields in sorted
// order.
func (h *Host) newEntity(typ string, e Entity) uint32 {
	hp := h.heap
	entries := h.entries[:0]
	for _, k := range h.keyOrder(typ, e) {
		entries = append(entries, hp.newStruct(tidTypedMapEntryStore, hp.newString(k), h.newValue(e[k])))
	}
	h.entries = entries
	return hp.newStruct(tidTypedMapStore, hp.newPtrArray(tidArrayTypedMapEntryStore, entries))
}

// maxTypes bounds the entity types keyOrder keeps an order for (the
// schema's are far fewer; the bound is for whatever a mapping asks).
const maxTypes = 1024

// keyOrder is e's fields sorted: the entities of a type mostly have the
// same fields, so the order last sorted for typ is kept and used again
// when e has exactly those fields (checked: as many, each present).
func (h *Host) keyOrder(typ string, e Entity) []string {
	if keys, ok := h.order[typ]; ok && len(keys) == len(e) {
		same := true
		for _, k := range keys {
			if _, ok := e[k]; !ok {
				same = false
				break
			}
		}
		if same {
			return keys
		}
	}
	keys := sortedKeys(e)
	if len(h.order) >= maxTypes {
		clear(h.order)
	}
	h.order[typ] = keys
	return keys
}

func sortedKeys(e Entity) []string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ethereumCall runs a SmartContractCall {contractName, contractAddress,
// functionName, functionSignature, functionArgs}: the function is looked up
// in the named ABI and must have the given signature; the answer is the
// decoded outputs, or null when the call reverts (graph-ts's try_ calls).
func (h *Host) ethereumCall(a args) uint64 {
	hp := h.heap
	p := uint32(a[0])
	contract := hp.readCachedString(hp.u32(p))
	address := common.BytesToAddress(hp.viewBytes(hp.u32(p + 4)))
	fnName := hp.readCachedString(hp.u32(p + 8))
	sig := hp.readCachedString(hp.u32(p + 12))
	parsed, ok := h.abis[contract]
	if !ok {
		h.fail("ethereum.call: Could not find ABI for contract \"%s\", try adding it to the 'abis' section of the subgraph manifest", contract)
	}
	method, ok := parsed.Methods[fnName]
	if !ok {
		h.fail("ethereum.call: %s has no function %s", contract, fnName)
	}
	if want := h.signature(contract, method); want != sig {
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
	return uint64(h.callOutputs(method.Outputs, ret))
}

// callOutputs writes an ethereum.call's answer decoded as outputs, the
// words read by the host itself when every output is a word type and
// each word is one go-ethereum accepts, else as go-ethereum decodes them;
// 0 (null) for an answer that does not decode: Graph Node counts it as a
// revert (a contract of another kind).
func (h *Host) callOutputs(outputs abi.Arguments, ret []byte) uint32 {
	hp := h.heap
	var buf [33]byte
	fast := len(ret) >= 32*len(outputs)
	for i := 0; fast && i < len(outputs); i++ {
		_, _, fast = wordValue(outputs[i].Type, ret[32*i:32*i+32], &buf)
	}
	if !fast {
		return h.callOutputsABI(outputs, ret)
	}
	ptrs := make([]uint32, len(outputs))
	for i, o := range outputs {
		ptrs[i] = h.newWordValue(wordValue(o.Type, ret[32*i:32*i+32], &buf))
	}
	return hp.newPtrArray(tidArrayEthereumValue, ptrs)
}

// callOutputsABI is callOutputs through go-ethereum's decoding.
func (h *Host) callOutputsABI(outputs abi.Arguments, ret []byte) uint32 {
	hp := h.heap
	outs, err := outputs.Unpack(ret)
	if err != nil {
		return 0
	}
	ptrs := make([]uint32, len(outs))
	for i, o := range outs {
		ptr, err := h.ethValue(outputs[i].Type, o)
		if err != nil {
			h.fail("ethereum.call: %v", err)
		}
		ptrs[i] = ptr
	}
	return hp.newPtrArray(tidArrayEthereumValue, ptrs)
}

// signature is signatureOf(m), made once per contract and function.
func (h *Host) signature(contract string, m abi.Method) string {
	k := [2]string{contract, m.Name}
	s, ok := h.sigs[k]
	if !ok {
		s = signatureOf(m)
		if len(h.sigs) >= maxTypes {
			clear(h.sigs)
		}
		h.sigs[k] = s
	}
	return s
}

// signatureOf is graph-ts's functionSignature: name(inputs):(outputs).
func signatureOf(m abi.Method) string {
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
