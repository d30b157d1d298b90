// Package chaintest is a fake JSON-RPC node for tests and fixture generation.
// It holds option markets, pools and ERC20s as plain Go state and answers
// eth_call for them with real ABI encoding, including calls routed through
// Multicall3 aggregate3, so the gateway's reader runs unchanged against it.
// It counts requests and calls, and can be told to fail.
package chaintest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// Market is an option market's state.
type Market struct {
	Name      string
	CallAsset common.Address
	PutAsset  common.Address
	PrimePool common.Address
	// PositionManager is what positionManager() answers (zero: it reverts).
	PositionManager common.Address
	// Version 1 answers opTickMap with V1's five fields (no hook);
	// VersionOTMFE answers opData in OptionMarketOTMFE's order.
	Version int
	Options map[uint64]*Option
	// Pricing is the market's optionPricing() and fee strategy (pricing.go);
	// nil: the market has none (a V1 market).
	Pricing *Pricing
	// ApprovedPools are the pools approvedPools answers true for; nil:
	// the prime pool alone.
	ApprovedPools []common.Address
	// Delegates is exerciseDelegator: owner -> delegate -> status
	// (delegates.go); Settlers the settlers its owner approved;
	// DelegateRevert, when set, is what updateExerciseDelegate reverts with.
	Delegates      map[common.Address]map[common.Address]bool
	Settlers       map[common.Address]bool
	DelegateRevert []byte
}

// VersionOTMFE makes a Market answer as Stryke's OptionMarketOTMFE: a
// 6-word opTickMap like V2 but opData = (opTickArrayLen, expiry, tickLower,
// tickUpper, isCall).
const VersionOTMFE = 3

// Pool is a Uniswap-V3-style pool's state.
type Pool struct {
	Token0, Token1 common.Address
	Fee            uint32
	TickSpacing    int
	SqrtPriceX96   *big.Int
	Tick           int
	// Slot0Raw, if set, is slot0's return data as is (short, out of range).
	Slot0Raw []byte
	// Slot0Reverts makes slot0 revert (a pool the market names that is
	// not, or no longer, a pool).
	Slot0Reverts bool
}

// Token is an ERC20's metadata and what its holders hold and have
// approved (balances.go): an account not listed holds none and has
// approved nothing, as on a chain where it never received the token.
type Token struct {
	Decimals uint8
	Symbol   string
	// Balances are balanceOf by holder; Allowances allowance(owner,
	// spender) by owner then spender.
	Balances   map[common.Address]*big.Int
	Allowances map[common.Address]map[common.Address]*big.Int
}

// Node is the fake. Set its maps before serving; they are read under mu.
type Node struct {
	mu         sync.Mutex
	Multicall3 common.Address
	Markets    map[common.Address]*Market
	Pools      map[common.Address]*Pool
	Tokens     map[common.Address]*Token
	// PositionManagers and Handlers serve the strikes chain's whitelist,
	// pause and handler-format reads (handlers.go).
	PositionManagers map[common.Address]*PositionManager
	Handlers         map[common.Address]*Handler
	// Hooks serve the option markets' hook probes.
	Hooks map[common.Address]*Hook
	// AutoExercisers are the chain's AutoExerciseTimeBased contracts.
	AutoExercisers map[common.Address]*AutoExerciser
	// BlockNumber and BlockTimestamp are the latest block's.
	BlockNumber    uint64
	BlockTimestamp uint64
	// TimeOf, when set, is the time of a block before the head (a
	// scenario's clock: Arbitrum's four blocks a second); unset, a second
	// per block back from the head.
	TimeOf func(number uint64) uint64
	// Quoter is the address of the fake QuoterV2.
	Quoter common.Address
	// DexQuoters answer as Quoter does: the chain's DEX quoter registry
	// (config.Chain.Quoters), each quoting the node's pools.
	DexQuoters map[common.Address]bool
	// Swappers are the swapper contracts exercises may route through.
	Swappers map[common.Address]Swapper
	// Code, when set, answers calls to the contracts it names that the
	// maps above do not: (return data, success), as a deployed contract
	// would (a swapper's sr(), deployed after the node first answered).
	Code map[common.Address]func(data []byte) ([]byte, bool)
	// Fail, when set, is asked before each JSON-RPC request is answered; a
	// non-zero status makes the node answer that HTTP status instead.
	Fail func(method string) (status int)
	// ChainID is what eth_chainId answers (0: Arbitrum One, 42161).
	ChainID uint64
	// Rewrite, when set, is given the return data of each successful
	// eth_call (to is zero for a ChainedRead) and sends what it returns
	// instead: short, out-of-range or fuzzed answers.
	Rewrite func(to common.Address, data, ret []byte) []byte
	// CallFault, when set, is asked before each JSON-RPC element is
	// answered; a non-nil answer is sent as that element's error: the node
	// failing ("header not found", -32005 rate limit), not the contract.
	CallFault func(method string) *RPCError
	// NoCreateCalls makes the node refuse eth_call without `to` (as some
	// providers might), so the gateway's Multicall3 fallback is exercised.
	NoCreateCalls bool
	// OnlyAt, when set, makes the node answer eth_call at that block
	// number only, and refuse any other block (the head included) as a
	// node that pruned it would: a test that an answer's reads were all
	// made at its pinned block. Fork changes every block hash, as a reorg
	// would (BlockHash).
	OnlyAt uint64
	// HeadToo, with OnlyAt, answers at the head too: where prepared
	// transactions are simulated, beside their answer's block.
	HeadToo bool
	Fork    uint64
	// Hashes, when set, gives block hashes (a scenario's, so the node and
	// the scenario's subgraph name one block alike); a Fork replaces them.
	Hashes func(number uint64) common.Hash
	// HeaderRewrite, when set, is given each eth_getBlockByNumber answer
	// (number, hash and timestamp as the node sends them) to change in
	// place: a node that lies about its blocks.
	HeaderRewrite func(tag string, header map[string]any)
	// CallBlocks counts the block parameters eth_calls were made at.
	CallBlocks map[string]int
	// ArbitrumL1Block, when set, makes the node number blocks as
	// Arbitrum does: block.number (Multicall3's getBlockNumber) answers
	// this estimate of Ethereum's block, and only ArbSys (0x64)
	// arbBlockNumber answers the node's own, BlockNumber.
	ArbitrumL1Block uint64
	// History, when set, answers eth_getLogs (history.go).
	History *History

	requests atomic.Int64
	calls    atomic.Int64
}

// NewNode returns an empty node with Multicall3 at its canonical address.
// It takes the test it serves: a fake is for tests (and, through
// NewNodeForGenerator, the demo generator), and production code has no
// testing.TB to pass.
func NewNode(t testing.TB) *Node {
	t.Helper()
	return newNode()
}

// NewNodeForGenerator is NewNode for the demo generator, which runs the
// fakes outside any test to record the demo from scenarios.
func NewNodeForGenerator() *Node { return newNode() }

func newNode() *Node {
	return &Node{
		Multicall3: common.HexToAddress("0xcA11bde05977b3631167028862bE2a173976CA11"),
		Markets:    map[common.Address]*Market{},
		Pools:      map[common.Address]*Pool{},
		Tokens:     map[common.Address]*Token{},
		Swappers:   map[common.Address]Swapper{},

		PositionManagers: map[common.Address]*PositionManager{},
		Handlers:         map[common.Address]*Handler{},
		Hooks:            map[common.Address]*Hook{},
		AutoExercisers:   map[common.Address]*AutoExerciser{},
	}
}

// Requests counts HTTP requests (round trips); Calls counts eth_call elements.
func (n *Node) Requests() int64 { return n.requests.Load() }

// Calls counts eth_call elements answered.
func (n *Node) Calls() int64 { return n.calls.Load() }

// Lock and Unlock guard state changes made while serving.
func (n *Node) Lock()   { n.mu.Lock() }
func (n *Node) Unlock() { n.mu.Unlock() }

type rpcRequest struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object as a node sends it.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

// ServeHTTP answers single and batched JSON-RPC requests.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.requests.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var batch []rpcRequest
	single := len(body) > 0 && body[0] == '{'
	if single {
		var one rpcRequest
		if err := json.Unmarshal(body, &one); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		batch = []rpcRequest{one}
	} else if err := json.Unmarshal(body, &batch); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	if n.Fail != nil {
		if status := n.Fail(batch[0].Method); status != 0 {
			w.WriteHeader(status)
			return
		}
	}
	out := make([]rpcResponse, len(batch))
	for i, req := range batch {
		out[i] = n.answer(req)
	}
	w.Header().Set("Content-Type", "application/json")
	if single {
		_ = json.NewEncoder(w).Encode(out[0])
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (n *Node) answer(req rpcRequest) rpcResponse {
	resp := rpcResponse{JSONRPC: "2.0", ID: req.ID}
	if n.CallFault != nil {
		if e := n.CallFault(req.Method); e != nil {
			resp.Error = e
			return resp
		}
	}
	switch req.Method {
	case "eth_chainId":
		id := n.ChainID
		if id == 0 {
			id = 42161
		}
		resp.Result = hexutil.EncodeUint64(id)
	case "eth_blockNumber":
		n.mu.Lock()
		resp.Result = hexutil.EncodeUint64(n.BlockNumber)
		n.mu.Unlock()
	case "eth_getBlockByNumber":
		n.header(req, &resp)
	case "eth_call":
		n.ethCall(req, &resp)
	case "eth_getLogs":
		n.mu.Lock()
		n.logs(req, &resp)
		n.mu.Unlock()
	default:
		resp.Error = &RPCError{Code: -32601, Message: "the method " + req.Method + " does not exist/is not available"}
	}
	return resp
}

// ethCall answers an eth_call: the pricing and chained reads deployed
// without a target, a probe's state override, or a call to a contract.
func (n *Node) ethCall(req rpcRequest, resp *rpcResponse) {
	n.calls.Add(1)
	at, e := n.callBlock(req)
	if e != nil {
		resp.Error = e
		return
	}
	var arg struct {
		From common.Address `json:"from"`
		To   common.Address `json:"to"`
		Data hexutil.Bytes  `json:"data"`
	}
	if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &arg) != nil {
		resp.Error = &RPCError{Code: -32602, Message: "invalid params"}
		return
	}
	n.mu.Lock()
	var ret []byte
	var ok bool
	if market, user, asks, isPricing := contracts.UnpackPricingReadCode(arg.Data); isPricing && arg.To == (common.Address{}) {
		ret, ok = n.pricingRead(market, user, asks, at)
	} else if calls, isChained := contracts.UnpackChainedReadCode(arg.Data); isChained && arg.To == (common.Address{}) {
		if n.NoCreateCalls {
			n.mu.Unlock()
			resp.Error = &RPCError{Code: -32602, Message: "invalid argument 0: missing \"to\""}
			return
		}
		ret, ok = n.chainedRead(calls)
	} else if run, isProbe := probeOverride(req, arg.To); isProbe {
		at := blockOverride(req)
		if at == 0 {
			at = n.BlockNumber + 1
		}
		ret, ok = n.probe(arg.To, run, at)
	} else {
		ret, ok = n.call(arg.From, arg.To, arg.Data)
	}
	n.mu.Unlock()
	if !ok {
		resp.Error = &RPCError{Code: 3, Message: "execution reverted", Data: hexutil.Encode(ret)}
		return
	}
	if n.Rewrite != nil {
		ret = n.Rewrite(arg.To, arg.Data, ret)
	}
	resp.Result = hexutil.Encode(ret)
}

// Call answers one eth_call to `to` from the zero address at the latest
// state: (return data, success). The subgraph's mappings read the chain
// through it when the scenarios are indexed (internal/testenv/scenario).
func (n *Node) Call(to common.Address, data []byte) ([]byte, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.call(common.Address{}, to, data)
}

// call executes one call: (return data, success). A call to an address with
// no state returns success and no data, as a call to an account without code does.
func (n *Node) call(from, to common.Address, data []byte) ([]byte, bool) {
	if to == n.Multicall3 {
		return n.multicall3(data)
	}
	if to == contracts.ArbSysAddress && n.ArbitrumL1Block != 0 {
		if len(data) < 4 || !bytes.Equal(data[:4], contracts.ArbSys.Methods["arbBlockNumber"].ID) {
			return nil, false
		}
		return common.LeftPadBytes(new(big.Int).SetUint64(n.BlockNumber).Bytes(), 32), true
	}
	if len(data) < 4 {
		return nil, len(data) == 0
	}
	if m, ok := n.Markets[to]; ok {
		if ret, ok, answered := positionManagerOf(m, data); answered {
			return ret, ok
		}
		if ret, ok, answered := approvedPool(m, data); answered {
			return ret, ok
		}
		if ret, ok, answered := delegateCall(m, data); answered {
			return ret, ok
		}
		return n.marketCall(m, from, data)
	}
	if pm, ok := n.PositionManagers[to]; ok {
		if ret, ok, answered := lpPositionManagerCall(pm, data); answered {
			return ret, ok
		}
		return positionManagerCall(pm, data)
	}
	if h, ok := n.Handlers[to]; ok {
		// A handler with LP state (holdings.go) answers its holders' reads
		// from it; lpHandlerCall's zero balances are for handlers without.
		if ret, ok, answered := holdingsCall(h, data); answered {
			return ret, ok
		}
		if ret, ok, answered := n.lpHandlerCall(h, data); answered {
			return ret, ok
		}
		return handlerCall(h, data)
	}
	if h, ok := n.Hooks[to]; ok {
		return n.hookCall(h, data)
	}
	if a, ok := n.AutoExercisers[to]; ok {
		return autoExerciserCall(a, data)
	}
	if to == n.Quoter && n.Quoter != (common.Address{}) || n.DexQuoters[to] {
		return n.quoterCall(data)
	}
	if p, ok := n.Pools[to]; ok {
		return poolCall(p, data)
	}
	if t, ok := n.Tokens[to]; ok {
		return tokenCall(t, data)
	}
	if code, ok := n.Code[to]; ok {
		return code(data)
	}
	return nil, true
}

// chainedReadAddress is where the never-deployed ChainedRead runs: the
// sender of the calls it makes (an address derived from the caller's; any
// fixed one does for a fake).
var chainedReadAddress = common.HexToAddress("0x000000000000000000000000000000000000c4a1")

// chainedRead answers ChainedRead's creation code as the EVM would run it
// (contracts/sol/ChainedRead.sol): each call in order, a call's target
// taken from an earlier call's first word when it says so.
func (n *Node) chainedRead(calls []contracts.ChainedCall) ([]byte, bool) {
	ok := make([]bool, len(calls))
	ret := make([][]byte, len(calls))
	for i, c := range calls {
		target, run := c.TargetAt(i, ok, ret)
		if !run {
			ret[i] = []byte{}
			continue
		}
		ret[i], ok[i] = n.call(chainedReadAddress, target, c.Data)
		if ret[i] == nil {
			ret[i] = []byte{}
		}
	}
	out, err := contracts.PackChainedReadOutput(ok, ret)
	if err != nil {
		panic(fmt.Sprintf("chaintest: pack ChainedRead output: %v", err))
	}
	return out, true
}

func (n *Node) multicall3(data []byte) ([]byte, bool) {
	if len(data) < 4 {
		return nil, false
	}
	if bytes.Equal(data[:4], contracts.Multicall3Block.Methods["getBlockNumber"].ID) {
		number := n.BlockNumber
		if n.ArbitrumL1Block != 0 {
			number = n.ArbitrumL1Block // block.number on Arbitrum
		}
		return common.LeftPadBytes(new(big.Int).SetUint64(number).Bytes(), 32), true
	}
	method, err := contracts.Multicall3.MethodById(data[:4])
	if err != nil {
		return nil, false
	}
	if method.Name == "getCurrentBlockTimestamp" {
		out, _ := method.Outputs.Pack(new(big.Int).SetUint64(n.BlockTimestamp))
		return out, true
	}
	if method.Name == "getBlockNumber" {
		out, _ := method.Outputs.Pack(new(big.Int).SetUint64(n.BlockNumber))
		return out, true
	}
	args, err := method.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, false
	}
	calls := args[0].([]struct {
		Target       common.Address `json:"target"`
		AllowFailure bool           `json:"allowFailure"`
		CallData     []byte         `json:"callData"`
	})
	results := make([]contracts.Multicall3Result, len(calls))
	for i, c := range calls {
		// Multicall3 is the sender of the calls it makes.
		ret, ok := n.call(n.Multicall3, c.Target, c.CallData)
		if !ok && !c.AllowFailure {
			return ret, false // Multicall3: "Multicall3: call failed"
		}
		results[i] = contracts.Multicall3Result{Success: ok, ReturnData: ret}
	}
	out, err := method.Outputs.Pack(results)
	if err != nil {
		panic(fmt.Sprintf("chaintest: pack aggregate3: %v", err))
	}
	return out, true
}

func (n *Node) marketCall(m *Market, from common.Address, data []byte) ([]byte, bool) {
	var revert []byte
	ret, ok := dispatch(contracts.OptionMarketV2, data, func(name string, args []any) ([]any, bool) {
		switch name {
		case "ownerOf":
			if o, ok := m.option(args[0].(*big.Int)); ok {
				return []any{o.Owner}, true
			}
			revert = ErrorString("ERC721: invalid token ID")
			return nil, false
		case "opData":
			o, _ := m.option(args[0].(*big.Int))
			if o == nil {
				return []any{new(big.Int), big.NewInt(0), big.NewInt(0), new(big.Int), false}, true
			}
			return []any{big.NewInt(int64(len(o.Legs))), big.NewInt(int64(o.TickLower)), big.NewInt(int64(o.TickUpper)),
				new(big.Int).SetUint64(o.Expiry), o.IsCall}, true
		case "opTickMap":
			o, _ := m.option(args[0].(*big.Int))
			i := args[1].(*big.Int)
			if o == nil || !i.IsInt64() || i.Int64() >= int64(len(o.Legs)) {
				return nil, false // index out of bounds
			}
			l := o.Legs[i.Int64()]
			return []any{l.Handler, l.Pool, l.Hook, big.NewInt(int64(l.TickLower)), big.NewInt(int64(l.TickUpper)), l.Liquidity}, true
		case "exerciseOption":
			out, rev := n.exercise(m, from, args)
			revert = rev
			return out, out != nil
		case "callAsset":
			return []any{m.CallAsset}, true
		case "putAsset":
			return []any{m.PutAsset}, true
		case "primePool":
			return []any{m.PrimePool}, true
		case "name":
			return []any{m.Name}, true
		}
		return nil, false
	})
	if !ok {
		return revert, false
	}
	if m.Version == VersionOTMFE && string(data[:4]) == string(contracts.OptionMarketV2.Methods["opData"].ID) {
		// OptionMarketOTMFE: (opTickArrayLen, expiry, tickLower, tickUpper, isCall).
		w := func(i int) []byte { return ret[i*32 : (i+1)*32] }
		ret = append(append(append(append(append([]byte{}, w(0)...), w(3)...), w(1)...), w(2)...), w(4)...)
	}
	if m.Version == 1 && len(data) >= 4 && string(data[:4]) == string(contracts.OptionMarketV2.Methods["opTickMap"].ID) {
		// V1's OptionTicks has no hook: drop the third word.
		ret = append(append([]byte{}, ret[:64]...), ret[96:]...)
	}
	return ret, true
}

func (m *Market) option(id *big.Int) (*Option, bool) {
	if !id.IsUint64() {
		return nil, false
	}
	o, ok := m.Options[id.Uint64()]
	return o, ok
}

func poolCall(p *Pool, data []byte) ([]byte, bool) {
	if isSlot0 := len(data) >= 4 && bytes.Equal(data[:4], contracts.Pool.Methods["slot0"].ID); isSlot0 && p.Slot0Reverts {
		return nil, false
	} else if isSlot0 && p.Slot0Raw != nil {
		return p.Slot0Raw, true
	}
	if len(data) >= 4 {
		if _, err := contracts.PoolFees.MethodById(data[:4]); err == nil {
			return poolFeesCall(data)
		}
	}
	return dispatch(contracts.Pool, data, func(name string, _ []any) ([]any, bool) {
		switch name {
		case "token0":
			return []any{p.Token0}, true
		case "token1":
			return []any{p.Token1}, true
		case "fee":
			return []any{big.NewInt(int64(p.Fee))}, true
		case "tickSpacing":
			return []any{big.NewInt(int64(p.TickSpacing))}, true
		case "slot0":
			return []any{p.SqrtPriceX96, big.NewInt(int64(p.Tick)), uint16(0), uint16(1), uint16(1), uint8(0), true}, true
		}
		return nil, false
	})
}

// poolFeesCall answers a pool's fee growth getters as a pool no swap has
// crossed: nothing earned anywhere.
func poolFeesCall(data []byte) ([]byte, bool) {
	return dispatch(contracts.PoolFees, data, func(name string, _ []any) ([]any, bool) {
		z := new(big.Int)
		if name == "ticks" {
			return []any{z, z, z, z, z, z, uint32(0), true}, true
		}
		return []any{z}, true
	})
}

func tokenCall(t *Token, data []byte) ([]byte, bool) {
	if _, err := contracts.ERC20Account.MethodById(data[:4]); err == nil {
		return dispatch(contracts.ERC20Account, data, func(name string, args []any) ([]any, bool) {
			if name == "balanceOf" {
				return []any{t.balanceOf(args[0].(common.Address))}, true
			}
			return []any{t.allowance(args[0].(common.Address), args[1].(common.Address))}, true
		})
	}
	return dispatch(contracts.ERC20, data, func(name string, _ []any) ([]any, bool) {
		switch name {
		case "decimals":
			return []any{t.Decimals}, true
		case "symbol":
			return []any{t.Symbol}, true
		}
		return nil, false
	})
}

// dispatch decodes calldata against a, lets fn answer, and packs the answer.
func dispatch(a abi.ABI, data []byte, fn func(name string, args []any) ([]any, bool)) ([]byte, bool) {
	method, err := a.MethodById(data[:4])
	if err != nil {
		return nil, false
	}
	args, err := method.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, false
	}
	out, ok := fn(method.Name, args)
	if !ok {
		return nil, false
	}
	ret, err := method.Outputs.Pack(out...)
	if err != nil {
		panic(fmt.Sprintf("chaintest: pack %s: %v", method.Name, err))
	}
	return ret, true
}

// BlockHash is the hash the fake node gives block number, on fork: the
// scenarios' subgraph heads carry the same, so the two halves of an answer
// name one block.
func BlockHash(number, fork uint64) common.Hash {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], number)
	binary.BigEndian.PutUint64(b[8:], fork)
	return crypto.Keccak256Hash([]byte("chaintest block"), b[:])
}

// header answers eth_getBlockByNumber: the head for "latest", any block up
// to it by number (null past it, as a node does), with the head's time
// less 1 s per block before it.
func (n *Node) header(req rpcRequest, resp *rpcResponse) {
	var tag string
	if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &tag) != nil {
		resp.Error = &RPCError{Code: -32602, Message: "invalid params"}
		return
	}
	n.mu.Lock()
	head, ts, rewrite, timeOf := n.BlockNumber, n.BlockTimestamp, n.HeaderRewrite, n.TimeOf
	n.mu.Unlock()
	num := head
	if tag != "latest" {
		v, err := hexutil.DecodeUint64(tag)
		if err != nil {
			resp.Error = &RPCError{Code: -32602, Message: "invalid block number"}
			return
		}
		if v > head {
			resp.Result = json.RawMessage("null")
			return
		}
		num, ts = v, ts-(head-v)
		if timeOf != nil && v < head {
			ts = timeOf(v)
		}
	}
	h := map[string]any{"number": hexutil.EncodeUint64(num), "hash": n.HashOf(num).Hex(), "timestamp": hexutil.EncodeUint64(ts)}
	if rewrite != nil {
		rewrite(tag, h)
	}
	resp.Result = h
}

// callBlock checks an eth_call's block parameter: counted, and refused
// past the head ("header not found") or, under OnlyAt, at any other block
// ("missing trie node", as a pruned node says). It returns the block the
// call runs at.
func (n *Node) callBlock(req rpcRequest) (uint64, *RPCError) {
	tag := "latest"
	if len(req.Params) > 1 {
		_ = json.Unmarshal(req.Params[1], &tag)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.CallBlocks == nil {
		n.CallBlocks = map[string]int{}
	}
	n.CallBlocks[tag]++
	num := n.BlockNumber
	if tag != "latest" {
		v, err := hexutil.DecodeUint64(tag)
		if err != nil {
			return 0, &RPCError{Code: -32602, Message: "invalid block number"}
		}
		if v > n.BlockNumber {
			return 0, &RPCError{Code: -32000, Message: "header not found"}
		}
		num = v
	}
	if n.OnlyAt != 0 && num != n.OnlyAt && !(n.HeadToo && num == n.BlockNumber) {
		return 0, &RPCError{Code: -32000, Message: "missing trie node " + n.hashOf(num).Hex()[2:] + " (path )"}
	}
	return num, nil
}

// HashOf is the hash the node gives block number now.
func (n *Node) HashOf(number uint64) common.Hash {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hashOf(number)
}

func (n *Node) hashOf(number uint64) common.Hash {
	if n.Hashes != nil && n.Fork == 0 {
		return n.Hashes(number)
	}
	return BlockHash(number, n.Fork)
}
