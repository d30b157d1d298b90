// Package mapping runs the options subgraph's compiled mappings (the
// `.wasm` files `graph build` writes, embedded in the binary from
// subgraph/build) on wazero, with the Graph Node host functions those
// mappings import (store, BigInt arithmetic, type conversions, crypto,
// logging, data source creation, ethereum.call, abort), each as Graph Node
// (apiVersion 0.0.9, AssemblyScript 0.19 memory layout) defines it, and
// routes a chain's logs to them as Graph Node routes triggers (Subgraph).
// The embedded indexer (internal/indexer) runs it over the chain; the
// scenarios and pipeline tests run it over their histories.
//
// Each trigger runs from a fresh instance's state, as Graph Node
// instantiates one per trigger: the AssemblyScript runtime never frees
// memory, so one long-lived instance would grow with every event indexed.
// One instance is kept and reset to that state before each trigger
// (reset.go says what a reset restores), which costs less than a new one.
//
// An import the host lacks fails instantiation with its name, so a mapping
// that starts using a new host function cannot pass silently.
package mapping

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// Store is where a mapping's store.get, store.set and store.remove go. Get
// sees the writes of the block being indexed; Set merges and checks as
// Graph Node's store.set does (graphnode.Store is one, through Memory).
type Store interface {
	Schema() *graphnode.Schema
	Get(typ, id string) (graphnode.Entity, error)
	Set(typ, id string, data graphnode.Entity, block uint64) error
	Remove(typ, id string, block uint64) error
}

// Memory is the emulator's in-memory store as a mapping's Store.
func Memory(s *graphnode.Store) Store { return memory{s} }

type memory struct{ *graphnode.Store }

func (m memory) Get(typ, id string) (graphnode.Entity, error) { return m.Store.Read(typ, id) }

// Call answers an ethereum.call: the contract, the calldata (selector and
// ABI-encoded arguments) and the block of the trigger; reverted reports a
// revert. An error is the node's, not the mapping's (NodeError).
type Call func(ctx context.Context, to common.Address, data []byte, at Block) (ret []byte, reverted bool, err error)

// NodeError is a failure of the node a handler's ethereum.call asked: not
// the mapping's fault and not deterministic, so the block may be retried
// (Graph Node retries such blocks too).
type NodeError struct{ Err error }

func (e *NodeError) Error() string { return "ethereum.call: " + e.Err.Error() }
func (e *NodeError) Unwrap() error { return e.Err }

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

// Outcome is what one handler run did besides writing the store.
type Outcome struct {
	Logs    []Log
	Created []Created
}

// Host runs one compiled mapping file, with the ABIs its data source lists.
type Host struct {
	name string
	// store is the host's store; st the one the running trigger writes
	// (Trigger.Store, or store).
	store, st Store
	abis      map[string]abi.ABI
	call      Call
	rt        wazero.Runtime
	compiled  wazero.CompiledModule
	typeIDs   []uint32
	// strs are the strings the heap read and wrote last, by address
	// (readCachedString), kept from trigger to trigger.
	strs *strCache
	// order is each entity type's fields in the order newEntity writes
	// them, as last seen (keyOrder).
	order map[string][]string
	// sigs are the functionSignatures of the ABIs' functions, by contract
	// and function name.
	sigs map[[2]string]string
	// scratch for the host functions: BigInt operands and result, text
	// of a conversion, an entity's entry pointers.
	bx, by, bz big.Int
	text       []byte
	entries    []uint32
	// globals are the exports of the module's mutable globals and
	// pristine a fresh instance's state, which a reset restores; nil
	// pristine: each trigger instantiates anew.
	globals  []string
	pristine *pristine

	// fns are the running instance's exported functions asked for so
	// far: wazero makes each ExportedFunction anew (a call engine with
	// its own stack), a third of the indexer's allocations when asked
	// per trigger; they stay valid while the instance is (reset or not).
	fns map[string]api.Function
	// dataArgs are the events' non-indexed inputs, by their first input.
	dataArgs map[*abi.Argument]abi.Arguments

	// one handler run's state
	ctx   context.Context
	heap  *heap
	block Block
	out   Outcome
	trap  error
	// network is the data source's Graph Node network (Options.Network)
	network string
}

// Options configures a Host.
type Options struct {
	// Call answers ethereum.call; nil fails any call.
	Call Call
	// ABIs are the ABIs the data source lists under mapping.abis, by name:
	// as in Graph Node, ethereum.call can bind only those.
	ABIs map[string]abi.ABI
	// Network is the Graph Node network the data source is of (its
	// manifest's `network`), which dataSource.network() answers.
	Network string
}

// args are a host function's arguments (wasm pointers and numbers as
// uint64), passed by value: a slice of the wasm stack would be the
// engine's to reuse, and a copy on the Go heap an allocation per call.
type args [maxArgs]uint64

// maxArgs is the most arguments a Graph Node host function takes (abort's).
const maxArgs = 4

type hostFunc func(h *Host, a args) uint64

// hostFuncs are the Graph Node functions this host provides, by import name.
var hostFuncs = map[string]hostFunc{
	"abort":                         (*Host).abort,
	"store.get":                     (*Host).storeGet,
	"store.set":                     (*Host).storeSet,
	"store.remove":                  (*Host).storeRemove,
	"bigInt.plus":                   bigIntOp(func(z, a, b *big.Int) error { z.Add(a, b); return nil }),
	"bigInt.minus":                  bigIntOp(func(z, a, b *big.Int) error { z.Sub(a, b); return nil }),
	"bigInt.times":                  bigIntOp(func(z, a, b *big.Int) error { z.Mul(a, b); return nil }),
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
	"dataSource.network":            (*Host).dataSourceNetwork,
	"ethereum.call":                 (*Host).ethereumCall,
}

// New compiles the mapping file code (named name in errors) and links it
// against the host functions, writing to store, with the data source's ABIs
// for ethereum.call. Each Handle runs from a fresh instance's state.
func New(ctx context.Context, name string, code []byte, store Store, opt Options) (*Host, error) {
	h := &Host{name: name, store: store, abis: opt.ABIs, call: opt.Call, ctx: ctx, network: opt.Network, typeIDs: make([]uint32, tidCount), strs: new(strCache), order: map[string][]string{}, sigs: map[[2]string]string{}, dataArgs: map[*abi.Argument]abi.Arguments{}}
	rt := wazero.NewRuntime(ctx)
	compiled, err := h.compile(ctx, rt, code)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := h.link(ctx, rt, compiled); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	h.rt, h.compiled = rt, compiled
	// One instance now: a module that cannot start (or lacks Graph Node's
	// exports) fails here, not at its first trigger. Its state is what
	// each trigger starts from.
	if err := h.instantiate(ctx); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	if h.globals != nil {
		if h.pristine, err = snapshot(h.heap.mod, h.globals); err != nil {
			h.globals = nil
		}
	}
	h.release()
	return h, nil
}

// compile compiles code with its mutable globals exported (what a reset
// needs), or as it is if it cannot be reset: then each trigger
// instantiates anew.
func (h *Host) compile(ctx context.Context, rt wazero.Runtime, code []byte) (wazero.CompiledModule, error) {
	if withGlobals, names, err := exportGlobals(code); err == nil {
		if compiled, err := rt.CompileModule(ctx, withGlobals); err == nil {
			h.globals = names
			return compiled, nil
		}
	}
	return rt.CompileModule(ctx, code)
}

// link provides every function the module imports, or fails naming the
// first one the host lacks.
func (h *Host) link(ctx context.Context, rt wazero.Runtime, compiled wazero.CompiledModule) error {
	byModule := map[string]wazero.HostModuleBuilder{}
	for _, imp := range compiled.ImportedFunctions() {
		modName, name, _ := imp.Import()
		fn, ok := hostFuncs[name]
		if !ok {
			return fmt.Errorf("%s imports %s.%s, which this host does not provide", h.name, modName, name)
		}
		b, ok := byModule[modName]
		if !ok {
			b = rt.NewHostModuleBuilder(modName)
			byModule[modName] = b
		}
		params, results := imp.ParamTypes(), imp.ResultTypes()
		if len(params) > maxArgs {
			return fmt.Errorf("%s imports %s.%s with %d parameters, more than Graph Node's", h.name, modName, name, len(params))
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			if h.trap != nil {
				panic(h.trap)
			}
			var a args
			copy(a[:], stack[:len(params)])
			r := h.guard(name, fn, a)
			if len(results) > 0 {
				stack[0] = r
			}
		}), params, results).Export(name)
	}
	for name, b := range byModule {
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("host module %s: %w", name, err)
		}
	}
	return nil
}

// instantiate starts a fresh instance (wazero runs its _start, as Graph
// Node does for apiVersion >= 0.0.5) and a heap over its memory.
func (h *Host) instantiate(ctx context.Context) error {
	mod, err := h.rt.InstantiateModule(ctx, h.compiled, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return fmt.Errorf("%s: %w", h.name, err)
	}
	h.fns = map[string]api.Function{}
	h.heap = h.newHeap(mod)
	if h.heap.allocate == nil || h.heap.idOfType == nil {
		h.release()
		return fmt.Errorf("%s lacks the allocate or id_of_type export Graph Node needs", h.name)
	}
	return nil
}

func (h *Host) newHeap(mod api.Module) *heap {
	return &heap{mod: mod, mem: mod.Memory(), allocate: h.function(mod, "allocate"), idOfType: h.function(mod, "id_of_type"),
		typeIDs: h.typeIDs, strs: h.strs, call: h.invoke}
}

// function is the export name of mod, the running instance (nil if it
// has none), made once per instance.
func (h *Host) function(mod api.Module, name string) api.Function {
	fn, ok := h.fns[name]
	if !ok {
		fn = mod.ExportedFunction(name)
		h.fns[name] = fn
	}
	return fn
}

// ready gives the trigger about to run an instance in a fresh one's state:
// the kept one reset, or a new one.
func (h *Host) ready(ctx context.Context) error {
	if h.heap != nil && h.pristine != nil && h.pristine.reset(h.heap.mod, h.globals) {
		// a fresh instance's heap: no arena yet (the memory is the same)
		h.heap.arena, h.heap.free = 0, 0
		return nil
	}
	h.release()
	return h.instantiate(ctx)
}

// release closes the running instance.
func (h *Host) release() {
	if h.heap != nil {
		_ = h.heap.mod.Close(context.Background())
		h.heap = nil
	}
}

// Close releases the runtime.
func (h *Host) Close() { h.rt.Close(context.Background()) }

// hostError aborts the running handler; Handle returns it.
type hostError struct{ err error }

func (h *Host) guard(name string, fn hostFunc, a args) (r uint64) {
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
	return fn(h, a)
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

// Block and Tx are the trigger's block and transaction as Graph Node passes
// them to a mapping.
type Block struct {
	Number     uint64
	Timestamp  uint64
	Hash       common.Hash
	ParentHash common.Hash
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

// Trigger is one log for one handler: the handler's name, the ABI event
// the log decodes with, and the log's block and transaction.
type Trigger struct {
	Handler string
	Event   abi.Event
	Log     types.Log
	Block   Block
	Tx      Tx
	// Store is where this trigger's store calls go (nil: the host's):
	// the block being written, passed with it rather than swapped into
	// shared state.
	Store Store
}

// Handle runs a trigger's handler on a fresh instance's state (the kept
// instance reset, or a new one: ready), the log decoded with the event of
// the ABI whose topic0 it carries, as Graph Node decodes it with the data
// source's ABI. A critical log fails the handler, as log.critical does in
// Graph Node.
func (h *Host) Handle(ctx context.Context, t Trigger) (out Outcome, err error) {
	handler, ev, lg, b, tx := t.Handler, t.Event, t.Log, t.Block, t.Tx
	if len(lg.Topics) == 0 || lg.Topics[0] != ev.ID {
		return Outcome{}, fmt.Errorf("log topic0 does not match %s", ev.Sig)
	}
	h.ctx, h.trap, h.block, h.out, h.st = ctx, nil, b, Outcome{}, t.Store
	if h.st == nil {
		h.st = h.store
	}
	if err := h.ready(ctx); err != nil {
		return Outcome{}, err
	}
	defer func() {
		// an instance a handler failed in is not kept: whatever state
		// the failure left, the next trigger starts in a new one
		if err != nil || h.pristine == nil {
			h.release()
		}
	}()
	fn := h.function(h.heap.mod, handler)
	if fn == nil {
		return Outcome{}, fmt.Errorf("the mapping exports no %s", handler)
	}
	defer func() {
		if p := recover(); p != nil {
			he, ok := p.(hostError)
			if !ok {
				panic(p)
			}
			out, err = h.out, he.err
		}
	}()
	ptr, err := h.newEvent(ev, lg, b, tx)
	if err != nil {
		return h.out, err
	}
	if _, err := fn.Call(ctx, uint64(ptr)); err != nil {
		if h.trap != nil {
			return h.out, h.trap
		}
		return h.out, fmt.Errorf("%s: %w", handler, err)
	}
	for _, l := range h.out.Logs {
		if l.Level == 0 {
			return h.out, fmt.Errorf("critical log: %s", l.Message)
		}
	}
	return h.out, nil
}

// nonIndexed are an event's data fields, made once per event of an ABI
// (abi's NonIndexed makes a new list at each call, one per trigger); an
// event is told by its inputs' list, which its ABI holds (two ABIs may
// give one signature other indexed fields, as ERC-20's and ERC-721's
// Transfer do).
func (h *Host) nonIndexed(ev abi.Event) abi.Arguments {
	if len(ev.Inputs) == 0 {
		return nil
	}
	args, ok := h.dataArgs[&ev.Inputs[0]]
	if !ok {
		args = ev.Inputs.NonIndexed()
		if len(h.dataArgs) >= 256 { // bounded, whoever makes the events
			clear(h.dataArgs)
		}
		h.dataArgs[&ev.Inputs[0]] = args
	}
	return args
}

func (h *Host) newEvent(ev abi.Event, lg types.Log, b Block, tx Tx) (uint32, error) {
	hp := h.heap
	// parameters: indexed ones from the topics, the others from the data
	paramArr, err := h.eventParams(ev, lg)
	if err != nil {
		return 0, err
	}
	big0 := hp.newUint64(0)
	var zero [32]byte
	block := hp.newStruct(tidEthereumBlock,
		hp.newBytes(b.Hash[:]), hp.newBytes(b.ParentHash[:]), hp.newBytes(zero[:]), hp.newBytes(zero[:20]),
		hp.newBytes(zero[:]), hp.newBytes(zero[:]), hp.newBytes(zero[:]),
		hp.newUint64(b.Number), big0, big0,
		hp.newUint64(b.Timestamp), big0, 0, 0, 0)
	var to uint32
	if tx.To != nil {
		to = hp.newBytes(tx.To[:])
	}
	txp := hp.newStruct(tidEthereumTransaction,
		hp.newBytes(tx.Hash[:]), hp.newUint64(tx.Index), hp.newBytes(tx.From[:]), to,
		big0, big0, big0, hp.newBytes(tx.Input), big0)
	var receipt uint32
	if tx.Receipt != nil {
		receipt = h.newReceipt(tx.Receipt)
	}
	return hp.newStruct(tidEthereumEvent,
		hp.newBytes(lg.Address[:]), hp.newUint64(uint64(lg.Index)), big0, 0,
		block, txp, paramArr, receipt), nil
}

// newReceipt writes an ethereum.TransactionReceipt with its logs (graph-ts
// field order; Log.blockNumber is Bytes there, as in Graph Node's AscEthereumLog).
func (h *Host) newReceipt(rc *types.Receipt) uint32 {
	hp := h.heap
	u := hp.newUint64
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

func (h *Host) abort(a args) uint64 {
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

func (h *Host) storeGet(a args) uint64 {
	typ, id := h.heap.readCachedString(uint32(a[0])), h.heap.readCachedString(uint32(a[1]))
	if _, ok := h.st.Schema().Types[typ]; !ok {
		h.fail("store.get: entity type %s is not in the schema", typ)
	}
	e, err := h.st.Get(typ, id)
	if err != nil {
		panic(hostError{&StoreError{err}})
	}
	if e == nil {
		return 0
	}
	return uint64(h.newEntity(typ, e))
}

func (h *Host) storeSet(a args) uint64 {
	typ, id := h.heap.readCachedString(uint32(a[0])), h.heap.readCachedString(uint32(a[1]))
	e := h.readEntity(uint32(a[2]))
	if err := h.st.Set(typ, id, e, h.block.Number); err != nil {
		h.storeFail("store.set", err)
	}
	return 0
}

func (h *Host) storeRemove(a args) uint64 {
	typ, id := h.heap.readCachedString(uint32(a[0])), h.heap.readCachedString(uint32(a[1]))
	if err := h.st.Remove(typ, id, h.block.Number); err != nil {
		h.storeFail("store.remove", err)
	}
	return 0
}

// StoreError is a failure of the store itself (a disk error), not of what
// the mapping wrote: like a NodeError, the block may be retried.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return "store: " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// storeFail fails the handler: with the store's own failure as is, with a
// refused write (schema, immutability) as the mapping's error.
func (h *Host) storeFail(op string, err error) {
	var se *StoreError
	if errors.As(err, &se) {
		panic(hostError{err})
	}
	h.fail("%s: %v", op, err)
}

// bigIntOp is a BigInt host function z = op(a, b); the operands and the
// result are the host's scratch numbers (the result is written into the
// module's memory before the host function returns).
func bigIntOp(op func(z, a, b *big.Int) error) hostFunc {
	return func(h *Host, a args) uint64 {
		x, y := setSignedLE(&h.bx, h.heap.viewBytes(uint32(a[0]))), setSignedLE(&h.by, h.heap.viewBytes(uint32(a[1])))
		if err := op(&h.bz, x, y); err != nil {
			h.fail("%v", err)
		}
		return uint64(h.heap.newBigInt(&h.bz))
	}
}

// Graph Node's BigInt division and remainder truncate toward zero
// (num-bigint's / and %), and dividing by zero is a deterministic error.
func divTrunc(z, a, b *big.Int) error {
	if b.Sign() == 0 {
		return errors.New("attempted to divide BigInt by zero")
	}
	z.Quo(a, b)
	return nil
}

func modTrunc(z, a, b *big.Int) error {
	if b.Sign() == 0 {
		return errors.New("attempted to take the remainder of BigInt by zero")
	}
	z.Rem(a, b)
	return nil
}

func (h *Host) bytesToHex(a args) uint64 {
	h.text = hex.AppendEncode(append(h.text[:0], "0x"...), h.heap.viewBytes(uint32(a[0])))
	return uint64(h.heap.newText(h.text))
}

func (h *Host) bigIntToString(a args) uint64 {
	h.text = setSignedLE(&h.bx, h.heap.viewBytes(uint32(a[0]))).Append(h.text[:0], 10)
	return uint64(h.heap.newText(h.text))
}

// bigIntToHex: Graph Node prints "0x" and the magnitude's lowercase hex,
// "0x0" for zero (negative numbers are not supported there either).
func (h *Host) bigIntToHex(a args) uint64 {
	x := h.heap.readBigInt(uint32(a[0]))
	if x.Sign() < 0 {
		h.fail("typeConversion.bigIntToHex of a negative number")
	}
	return uint64(h.heap.newString("0x" + x.Text(16)))
}

func (h *Host) stringToH160(a args) uint64 {
	s := h.heap.readString(uint32(a[0]))
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil || len(b) != 20 {
		h.fail("failed to convert string to Address/H160: '%s'", s)
	}
	return uint64(h.heap.newBytes(b))
}

func (h *Host) bytesToString(a args) uint64 {
	b := h.heap.readBytes(uint32(a[0]))
	return uint64(h.heap.newString(strings.TrimRight(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00")))
}

// bigDecimal.toString: digits * 10^exp printed in plain decimal without
// trailing zeros after the point, as Graph Node's normalized BigDecimal.
func (h *Host) bigDecimalToString(a args) uint64 {
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

func (h *Host) keccak256(a args) uint64 {
	k := crypto.Keccak256Hash(h.heap.viewBytes(uint32(a[0])))
	return uint64(h.heap.newBytes(k[:]))
}

// log: a critical message fails the handler where it is logged, as Graph
// Node's log_log does; nothing after it runs.
func (h *Host) log(a args) uint64 {
	l := Log{Level: int(uint32(a[0])), Message: h.heap.readString(uint32(a[1]))}
	h.out.Logs = append(h.out.Logs, l)
	if l.Level == 0 {
		h.fail("critical log: %s", l.Message)
	}
	return 0
}

func (h *Host) dataSourceCreate(a args) uint64 {
	name := h.heap.readString(uint32(a[0]))
	var params []string
	for _, p := range h.heap.readPtrArray(uint32(a[1])) {
		params = append(params, h.heap.readString(p))
	}
	h.out.Created = append(h.out.Created, Created{Template: name, Params: params})
	return 0
}

// dataSource.network: the data source's network, as its manifest names it.
func (h *Host) dataSourceNetwork(a args) uint64 {
	return uint64(h.heap.newString(h.network))
}

// retryable reports a failure that is not the mapping's: the node's or
// the store's. The block may be indexed again; a HandlerError may not.
func retryable(err error) bool {
	var ne *NodeError
	var se *StoreError
	return errors.As(err, &ne) || errors.As(err, &se)
}
