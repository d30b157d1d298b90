// Package mappinghosttest is a test host for the options subgraph's compiled
// mappings: it runs the `.wasm` files `graph build` writes under
// subgraph/build on wazero and provides the Graph Node host functions those
// mappings import (store, BigInt arithmetic, type conversions, crypto,
// logging, data source creation, ethereum.call, abort), each as Graph Node
// (apiVersion 0.0.9, AssemblyScript 0.19 memory layout) defines it. It is a
// test package, not a Graph Node: one data source at a time, one in-memory
// store, triggers handed to it in the order the test chooses, no indexing,
// no GraphQL.
//
// An import the host lacks fails instantiation with its name, so a mapping
// that starts using a new host function cannot pass silently.
package mappinghosttest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Dir is the subgraph project directory (subgraph/ of this module).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// BuildHint says how to get back the build output the tests run, which is
// committed.
const BuildHint = "subgraph/build is committed: restore it (git checkout -- subgraph/build) or rebuild it (npm ci and npm run build in subgraph/)"

// Store is the entity store shared by every data source of one test: the
// Graph Node emulator's versioned store (internal/graphnode), so what the
// mappings write is what a query reads, block by block.
type Store = graphnode.Store

// NewStore returns an empty store of the schema the build used
// (subgraph/schema.graphql).
func NewStore() (*Store, error) {
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		return nil, err
	}
	return graphnode.NewStore(s), nil
}

// Call answers an ethereum.call: the contract, the calldata (selector and
// ABI-encoded arguments) and the block; reverted reports a revert.
type Call func(to common.Address, data []byte, block uint64) (ret []byte, reverted bool, err error)

// Log is one log.log of a mapping.
type Log struct {
	Level   int // 0 critical, 1 error, 2 warning, 3 info, 4 debug
	Message string
}

// Created is one dataSource.create.
type Created struct {
	Template string
	Params   []string
}

// Host runs one compiled data source's mapping.
type Host struct {
	store   *Store
	abis    map[string]abi.ABI
	call    Call
	mod     api.Module
	rt      wazero.Runtime
	heap    *heap
	ctx     context.Context
	block   uint64
	Logs    []Log
	Created []Created
	trap    error
}

// Options configures a Host.
type Options struct {
	// Call answers ethereum.call; nil makes any call a test failure.
	Call Call
	// ABIs are the names the data source lists under mapping.abis: as in
	// Graph Node, ethereum.call can bind only those.
	ABIs []string
}

// hostFuncs are the Graph Node functions this host provides, by import name.
var hostFuncs = map[string]func(h *Host, args []uint64) uint64{
	"abort":                         (*Host).abort,
	"store.get":                     (*Host).storeGet,
	"store.set":                     (*Host).storeSet,
	"store.remove":                  (*Host).storeRemove,
	"bigInt.plus":                   bigIntOp(func(a, b *big.Int) (*big.Int, error) { return new(big.Int).Add(a, b), nil }),
	"bigInt.minus":                  bigIntOp(func(a, b *big.Int) (*big.Int, error) { return new(big.Int).Sub(a, b), nil }),
	"bigInt.times":                  bigIntOp(func(a, b *big.Int) (*big.Int, error) { return new(big.Int).Mul(a, b), nil }),
	"bigInt.dividedBy":              bigIntOp(divTrunc),
	"bigInt.mod":                    bigIntOp(modTrunc),
	"typeConversion.bytesToHex":     (*Host).bytesToHex,
	"typeConversion.bigIntToString": (*Host).bigIntToString,
	"typeConversion.bigIntToHex":    (*Host).bigIntToHex,
	"typeConversion.stringToH160":   (*Host).stringToH160,
	"typeConversion.bytesToString":  (*Host).bytesToString,
	"bigDecimal.toString":           (*Host).bigDecimalToString,
	"crypto.keccak256":              (*Host).keccak256,
	"log.log":                       (*Host).log,
	"dataSource.create":             (*Host).dataSourceCreate,
	"ethereum.call":                 (*Host).ethereumCall,
}

// New compiles and instantiates the wasm at path against store, with the
// data source's ABIs (opt.ABIs, from subgraph/abis) for ethereum.call.
func New(ctx context.Context, path string, store *Store, opt Options) (*Host, error) {
	code, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing: %s", path, BuildHint)
	}
	if err != nil {
		return nil, err
	}
	abis, err := loadABIs()
	if err != nil {
		return nil, err
	}
	declared := map[string]abi.ABI{}
	for _, name := range opt.ABIs {
		a, ok := abis[name]
		if !ok {
			return nil, fmt.Errorf("the data source lists ABI %s, which subgraph/abis lacks", name)
		}
		declared[name] = a
	}
	h := &Host{store: store, abis: declared, call: opt.Call, ctx: ctx}
	rt := wazero.NewRuntime(ctx)
	h.rt = rt
	compiled, err := rt.CompileModule(ctx, code)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	byModule := map[string]wazero.HostModuleBuilder{}
	for _, imp := range compiled.ImportedFunctions() {
		modName, name, _ := imp.Import()
		fn, ok := hostFuncs[name]
		if !ok {
			rt.Close(ctx)
			return nil, fmt.Errorf("%s imports %s.%s, which this host does not provide", filepath.Base(path), modName, name)
		}
		b, ok := byModule[modName]
		if !ok {
			b = rt.NewHostModuleBuilder(modName)
			byModule[modName] = b
		}
		params, results := imp.ParamTypes(), imp.ResultTypes()
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			if h.trap != nil {
				panic(h.trap)
			}
			args := append([]uint64{}, stack[:len(params)]...)
			r := h.guard(name, func() uint64 { return fn(h, args) })
			if len(results) > 0 {
				stack[0] = r
			}
		}), params, results).Export(name)
	}
	for name, b := range byModule {
		if _, err := b.Instantiate(ctx); err != nil {
			rt.Close(ctx)
			return nil, fmt.Errorf("host module %s: %w", name, err)
		}
	}
	// wazero runs the module's _start on instantiation, as Graph Node does
	// for apiVersion >= 0.0.5.
	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName("mapping"))
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	h.mod = mod
	h.heap = &heap{
		mem: mod.Memory(), allocate: mod.ExportedFunction("allocate"), idOfType: mod.ExportedFunction("id_of_type"),
		typeIDs: map[uint32]uint32{}, call: h.invoke,
	}
	if h.heap.allocate == nil || h.heap.idOfType == nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("%s lacks the allocate or id_of_type export Graph Node needs", path)
	}
	return h, nil
}

// Close releases the runtime.
func (h *Host) Close() { h.rt.Close(h.ctx) }

// hostError aborts the running handler; Handle returns it.
type hostError struct{ err error }

func (h *Host) guard(name string, f func() uint64) (r uint64) {
	defer func() {
		if p := recover(); p != nil {
			if he, ok := p.(hostError); ok {
				h.trap = he.err
			} else {
				h.trap = fmt.Errorf("%s: %v", name, p)
			}
			panic(h.trap)
		}
	}()
	return f()
}

func (h *Host) fail(format string, args ...any) {
	panic(hostError{fmt.Errorf(format, args...)})
}

func (h *Host) invoke(fn api.Function, args ...uint64) []uint64 {
	r, err := fn.Call(h.ctx, args...)
	if err != nil {
		panic(hostError{err})
	}
	return r
}

func loadABIs() (map[string]abi.ABI, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "abis", "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]abi.ABI{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		a, err := abi.JSON(strings.NewReader(string(raw)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = a
	}
	return out, nil
}

// ABI returns one of the subgraph's ABIs by file name (without .json).
func ABI(name string) (abi.ABI, error) {
	abis, err := loadABIs()
	if err != nil {
		return abi.ABI{}, err
	}
	a, ok := abis[name]
	if !ok {
		return abi.ABI{}, fmt.Errorf("no ABI %s in subgraph/abis", name)
	}
	return a, nil
}

// Block and Tx are the trigger's block and transaction as Graph Node passes
// them to a mapping.
type Block struct {
	Number    uint64
	Timestamp uint64
	Hash      common.Hash
}

type Tx struct {
	Hash  common.Hash
	Index uint64
	From  common.Address
	To    *common.Address
	Input []byte
	// Receipt is passed to the handler as event.receipt; Graph Node passes
	// it only to handlers declared with `receipt: true` (EventHandler.Receipt),
	// and null to the others, which the caller mirrors by leaving it nil.
	Receipt *types.Receipt
}

// Handle runs handler for one log, decoded with the event of the ABI whose
// topic0 the log carries, as Graph Node decodes it with the data source's ABI.
func (h *Host) Handle(handler string, ev abi.Event, lg types.Log, b Block, tx Tx) (err error) {
	if len(lg.Topics) == 0 || lg.Topics[0] != ev.ID {
		return fmt.Errorf("log topic0 does not match %s", ev.Sig)
	}
	fn := h.mod.ExportedFunction(handler)
	if fn == nil {
		return fmt.Errorf("the mapping exports no %s", handler)
	}
	h.trap = nil
	h.block = b.Number
	defer func() {
		if p := recover(); p != nil {
			if he, ok := p.(hostError); ok {
				err = he.err
				return
			}
			panic(p)
		}
	}()
	ptr, err := h.newEvent(ev, lg, b, tx)
	if err != nil {
		return err
	}
	if _, err := fn.Call(h.ctx, uint64(ptr)); err != nil {
		if h.trap != nil {
			return h.trap
		}
		return fmt.Errorf("%s: %w", handler, err)
	}
	for _, l := range h.Logs {
		if l.Level == 0 {
			return fmt.Errorf("critical log: %s", l.Message)
		}
	}
	return nil
}

func (h *Host) newEvent(ev abi.Event, lg types.Log, b Block, tx Tx) (uint32, error) {
	hp := h.heap
	// parameters: indexed ones from the topics, the others from the data
	var params []uint32
	topic := 1
	data, err := ev.Inputs.NonIndexed().Unpack(lg.Data)
	if err != nil {
		return 0, fmt.Errorf("decode %s: %w", ev.Sig, err)
	}
	di := 0
	for _, in := range ev.Inputs {
		var v any
		if in.Indexed {
			if topic >= len(lg.Topics) {
				return 0, fmt.Errorf("%s: missing topic for %s", ev.Sig, in.Name)
			}
			m := map[string]any{}
			if err := abi.ParseTopicsIntoMap(m, abi.Arguments{in}, []common.Hash{lg.Topics[topic]}); err != nil {
				return 0, err
			}
			v = m[in.Name]
			topic++
		} else {
			v = data[di]
			di++
		}
		val, err := h.ethValue(in.Type, v)
		if err != nil {
			return 0, fmt.Errorf("%s.%s: %w", ev.Sig, in.Name, err)
		}
		params = append(params, hp.newStruct(tidEventParam, hp.newString(in.Name), val))
	}
	paramArr := hp.newPtrArray(tidArrayEventParam, params)
	big0 := hp.newBigInt(new(big.Int))
	hash := func(x common.Hash) uint32 { return hp.newBytes(x.Bytes()) }
	block := hp.newStruct(tidEthereumBlock,
		hash(b.Hash), hash(common.Hash{}), hash(common.Hash{}), hp.newBytes(make([]byte, 20)),
		hash(common.Hash{}), hash(common.Hash{}), hash(common.Hash{}),
		hp.newBigInt(new(big.Int).SetUint64(b.Number)), big0, big0,
		hp.newBigInt(new(big.Int).SetUint64(b.Timestamp)), big0, 0, 0, 0)
	var to uint32
	if tx.To != nil {
		to = hp.newBytes(tx.To.Bytes())
	}
	txp := hp.newStruct(tidEthereumTransaction,
		hash(tx.Hash), hp.newBigInt(new(big.Int).SetUint64(tx.Index)), hp.newBytes(tx.From.Bytes()), to,
		big0, big0, big0, hp.newBytes(tx.Input), big0)
	var receipt uint32
	if tx.Receipt != nil {
		receipt = h.newReceipt(tx.Receipt)
	}
	return hp.newStruct(tidEthereumEvent,
		hp.newBytes(lg.Address.Bytes()), hp.newBigInt(new(big.Int).SetUint64(uint64(lg.Index))), big0, 0,
		block, txp, paramArr, receipt), nil
}

// newReceipt writes an ethereum.TransactionReceipt with its logs (graph-ts
// field order; Log.blockNumber is Bytes there, as in Graph Node's AscEthereumLog).
func (h *Host) newReceipt(rc *types.Receipt) uint32 {
	hp := h.heap
	u := func(v uint64) uint32 { return hp.newBigInt(new(big.Int).SetUint64(v)) }
	logs := make([]uint32, len(rc.Logs))
	for i, lg := range rc.Logs {
		topics := make([]uint32, len(lg.Topics))
		for j, tp := range lg.Topics {
			topics[j] = hp.newBytes(tp.Bytes())
		}
		logs[i] = hp.newStruct(tidLog,
			hp.newBytes(lg.Address.Bytes()), hp.newPtrArray(tidArrayH256, topics), hp.newBytes(lg.Data),
			hp.newBytes(lg.BlockHash.Bytes()), hp.newBytes(new(big.Int).SetUint64(lg.BlockNumber).Bytes()), hp.newBytes(lg.TxHash.Bytes()),
			u(uint64(lg.TxIndex)), u(uint64(lg.Index)), u(uint64(i)), hp.newString(""), 0)
	}
	block := uint64(0)
	if rc.BlockNumber != nil {
		block = rc.BlockNumber.Uint64()
	}
	return hp.newStruct(tidTransactionReceipt,
		hp.newBytes(rc.TxHash.Bytes()), u(uint64(rc.TransactionIndex)), hp.newBytes(rc.BlockHash.Bytes()), u(block),
		u(rc.CumulativeGasUsed), u(rc.GasUsed), hp.newBytes(rc.ContractAddress.Bytes()), hp.newPtrArray(tidArrayLog, logs),
		u(rc.Status), hp.newBytes(nil), hp.newBytes(rc.Bloom.Bytes()))
}

// ethereum.Value kinds (Graph Node EthereumValueKind).
const (
	evAddress = iota
	evFixedBytes
	evBytes
	evInt
	evUint
	evBool
	evString
	evFixedArray
	evArray
	evTuple
)

func (h *Host) ethValue(t abi.Type, v any) (uint32, error) {
	hp := h.heap
	switch t.T {
	case abi.AddressTy:
		a := v.(common.Address)
		return hp.newEnum(tidEthereumValue, evAddress, uint64(hp.newBytes(a.Bytes()))), nil
	case abi.BoolTy:
		var p uint64
		if v.(bool) {
			p = 1
		}
		return hp.newEnum(tidEthereumValue, evBool, p), nil
	case abi.IntTy, abi.UintTy:
		x, err := toBig(v)
		if err != nil {
			return 0, err
		}
		kind := uint32(evUint)
		if t.T == abi.IntTy {
			kind = evInt
		}
		return hp.newEnum(tidEthereumValue, kind, uint64(hp.newBigInt(x))), nil
	}
	return 0, fmt.Errorf("type %s not supported by this host", t.String())
}

func toBig(v any) (*big.Int, error) {
	switch x := v.(type) {
	case *big.Int:
		return new(big.Int).Set(x), nil
	case uint8:
		return new(big.Int).SetUint64(uint64(x)), nil
	case uint16:
		return new(big.Int).SetUint64(uint64(x)), nil
	case uint32:
		return new(big.Int).SetUint64(uint64(x)), nil
	case uint64:
		return new(big.Int).SetUint64(x), nil
	case int8:
		return big.NewInt(int64(x)), nil
	case int16:
		return big.NewInt(int64(x)), nil
	case int32:
		return big.NewInt(int64(x)), nil
	case int64:
		return big.NewInt(x), nil
	}
	return nil, fmt.Errorf("integer of Go type %T", v)
}

// --- host functions (arguments are wasm pointers as uint64) ---

func (h *Host) abort(a []uint64) uint64 {
	msg := "(no message)"
	if a[0] != 0 {
		msg = h.heap.readString(uint32(a[0]))
	}
	file := ""
	if a[1] != 0 {
		file = h.heap.readString(uint32(a[1]))
	}
	h.fail("mapping aborted at %s, line %d, column %d: %s", file, uint32(a[2]), uint32(a[3]), msg)
	return 0
}

func (h *Host) storeGet(a []uint64) uint64 {
	typ, id := h.heap.readString(uint32(a[0])), h.heap.readString(uint32(a[1]))
	if _, ok := h.store.Schema().Types[typ]; !ok {
		h.fail("store.get: entity type %s is not in the schema", typ)
	}
	e := h.store.Get(typ, id)
	if e == nil {
		return 0
	}
	return uint64(h.newEntity(e))
}

func (h *Host) storeSet(a []uint64) uint64 {
	typ, id := h.heap.readString(uint32(a[0])), h.heap.readString(uint32(a[1]))
	e := h.readEntity(uint32(a[2]))
	if err := h.store.Set(typ, id, e, h.block); err != nil {
		h.fail("store.set: %v", err)
	}
	return 0
}

func (h *Host) storeRemove(a []uint64) uint64 {
	typ, id := h.heap.readString(uint32(a[0])), h.heap.readString(uint32(a[1]))
	if err := h.store.Remove(typ, id, h.block); err != nil {
		h.fail("store.remove: %v", err)
	}
	return 0
}

func bigIntOp(op func(a, b *big.Int) (*big.Int, error)) func(h *Host, a []uint64) uint64 {
	return func(h *Host, a []uint64) uint64 {
		x, y := h.heap.readBigInt(uint32(a[0])), h.heap.readBigInt(uint32(a[1]))
		r, err := op(x, y)
		if err != nil {
			h.fail("%v", err)
		}
		return uint64(h.heap.newBigInt(r))
	}
}

// Graph Node's BigInt division and remainder truncate toward zero
// (num-bigint's / and %), and dividing by zero is a deterministic error.
func divTrunc(a, b *big.Int) (*big.Int, error) {
	if b.Sign() == 0 {
		return nil, errors.New("attempted to divide BigInt by zero")
	}
	return new(big.Int).Quo(a, b), nil
}

func modTrunc(a, b *big.Int) (*big.Int, error) {
	if b.Sign() == 0 {
		return nil, errors.New("attempted to take the remainder of BigInt by zero")
	}
	return new(big.Int).Rem(a, b), nil
}

func (h *Host) bytesToHex(a []uint64) uint64 {
	return uint64(h.heap.newString("0x" + hex.EncodeToString(h.heap.readBytes(uint32(a[0])))))
}

func (h *Host) bigIntToString(a []uint64) uint64 {
	return uint64(h.heap.newString(h.heap.readBigInt(uint32(a[0])).String()))
}

// bigIntToHex: Graph Node prints "0x" and the magnitude's lowercase hex,
// "0x0" for zero (negative numbers are not supported there either).
func (h *Host) bigIntToHex(a []uint64) uint64 {
	x := h.heap.readBigInt(uint32(a[0]))
	if x.Sign() < 0 {
		h.fail("typeConversion.bigIntToHex of a negative number")
	}
	return uint64(h.heap.newString("0x" + x.Text(16)))
}

func (h *Host) stringToH160(a []uint64) uint64 {
	s := h.heap.readString(uint32(a[0]))
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil || len(b) != 20 {
		h.fail("failed to convert string to Address/H160: '%s'", s)
	}
	return uint64(h.heap.newBytes(b))
}

func (h *Host) bytesToString(a []uint64) uint64 {
	b := h.heap.readBytes(uint32(a[0]))
	return uint64(h.heap.newString(strings.TrimRight(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00")))
}

// bigDecimal.toString: digits * 10^exp printed in plain decimal without
// trailing zeros after the point, as Graph Node's normalized BigDecimal.
func (h *Host) bigDecimalToString(a []uint64) uint64 {
	p := uint32(a[0])
	digits := h.heap.readBigInt(h.heap.u32(p))
	exp := h.heap.readBigInt(h.heap.u32(p + 4)).Int64()
	return uint64(h.heap.newString(decimalString(digits, exp)))
}

func decimalString(digits *big.Int, exp int64) string {
	if digits.Sign() == 0 {
		return "0"
	}
	neg := digits.Sign() < 0
	s := new(big.Int).Abs(digits).String()
	for exp < 0 && strings.HasSuffix(s, "0") {
		s = s[:len(s)-1]
		exp++
	}
	if exp >= 0 {
		s += strings.Repeat("0", int(exp))
	} else {
		k := int(-exp)
		if len(s) <= k {
			s = "0." + strings.Repeat("0", k-len(s)) + s
		} else {
			s = s[:len(s)-k] + "." + s[len(s)-k:]
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}

func (h *Host) keccak256(a []uint64) uint64 {
	return uint64(h.heap.newBytes(crypto.Keccak256(h.heap.readBytes(uint32(a[0])))))
}

func (h *Host) log(a []uint64) uint64 {
	h.Logs = append(h.Logs, Log{Level: int(uint32(a[0])), Message: h.heap.readString(uint32(a[1]))})
	return 0
}

func (h *Host) dataSourceCreate(a []uint64) uint64 {
	name := h.heap.readString(uint32(a[0]))
	var params []string
	for _, p := range h.heap.readPtrArray(uint32(a[1])) {
		params = append(params, h.heap.readString(p))
	}
	h.Created = append(h.Created, Created{Template: name, Params: params})
	return 0
}
