// Package chain reads the option market, its pool and ERC20 metadata over
// JSON-RPC. A market seen for the first time is read in one round trip by a
// ChainedRead (creation code sent without `to`, whose calls may target the
// addresses earlier calls returned), or in Multicall3 aggregate3 rounds when
// a node refuses that; other reads are batched through aggregate3. Each read
// is declared with the decoder of its answer, so answers are consumed by
// name. Immutable facts (assets, pool, tokens, fee, tick spacing) are cached
// for a long TTL so a warm read needs one call.
package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Caller is the part of *rpc.Client the reader uses; tests pass a client
// dialled to a fake node.
type Caller interface {
	CallContext(ctx context.Context, result any, method string, args ...any) error
}

// Call is one contract call of a batch.
type Call struct {
	Target common.Address
	Data   []byte
}

// CallFailedError reports a call inside a batch that reverted (or hit no code).
type CallFailedError struct {
	Index  int
	Target common.Address
	Revert []byte
}

func (e *CallFailedError) Error() string {
	return fmt.Sprintf("call %d to %s failed (revert data %s)", e.Index, e.Target.Hex(), hexutil.Encode(e.Revert))
}

// Token is an ERC20's address and metadata.
type Token struct {
	Address  common.Address
	Decimals uint8
	Symbol   string
}

// MarketInfo is what never changes about an option market.
type MarketInfo struct {
	Market      common.Address
	CallAsset   Token
	PutAsset    Token
	Pool        common.Address
	Token0      common.Address
	Token1      common.Address
	Fee         uint32
	TickSpacing int
}

// Token0IsCall reports whether the call asset is the pool's token0; when it
// is not, the market is "inverted" and higher ticks mean a cheaper call asset.
func (m *MarketInfo) Token0IsCall() bool { return m.CallAsset.Address == m.Token0 }

// TokenByAddress returns the call or put asset with that address.
func (m *MarketInfo) TokenByAddress(a common.Address) Token {
	if a == m.CallAsset.Address {
		return m.CallAsset
	}
	return m.PutAsset
}

// PoolState is the moving part of a pool: slot0's price and tick.
type PoolState struct {
	SqrtPriceX96 *big.Int
	Tick         int
}

// Reader reads one chain.
type Reader struct {
	rpc        Caller
	multicall  common.Address
	timeout    time.Duration
	immutables *cache.Cache[*MarketInfo]
	ttl        time.Duration
	// facts, seenHandlers and seenPools serve the strikes chain
	// (strikes.go, pools.go).
	facts        *cache.Cache[fact]
	seenHandlers *cache.Cache[[]common.Address]
	seenPools    *cache.Cache[[]common.Address]
	holdings     *HoldingsReader
	// slot0Layout names the slot0 layout of a pool (Options.Slot0).
	slot0Layout func(common.Address) contracts.Slot0Layout
	// unreadable remembers markets StrikesViews found not to be option
	// markets (strikes.go).
	unreadable *cache.Cache[error]
	// swaps bound the reads of pools' swaps (swaps.go).
	swaps SwapLimits
}

// Options configure a Reader. Both durations are required: the composition
// root passes them from validated configuration (CLAMM_UPSTREAM_TIMEOUT,
// CLAMM_IMMUTABLES_TTL), and tests from chaintest.
type Options struct {
	Multicall3    common.Address
	CallTimeout   time.Duration // deadline of one eth_call
	ImmutablesTTL time.Duration // how long a market's immutable facts are kept
	// Slot0 names the slot0 layout of a pool: that of the DEX of the
	// handler serving it, from configuration. Nil reads every pool by the
	// two leading words all layouts share (contracts.Slot0Leading).
	Slot0 func(pool common.Address) contracts.Slot0Layout
	// Swaps bound how a pool's swaps are read for candles (swaps.go);
	// zero: DefaultSwapLimits.
	Swaps SwapLimits
}

// NewReader returns a reader over rpc. A zero or negative duration in opts is
// refused with an error naming it, not replaced by one of the reader's own.
func NewReader(c Caller, opts Options) (*Reader, error) {
	if opts.CallTimeout <= 0 {
		return nil, errors.New("chain: CallTimeout must be positive")
	}
	if opts.ImmutablesTTL <= 0 {
		return nil, errors.New("chain: ImmutablesTTL must be positive")
	}
	r := &Reader{
		rpc: c, multicall: opts.Multicall3, timeout: opts.CallTimeout, ttl: opts.ImmutablesTTL, slot0Layout: opts.Slot0, swaps: opts.Swaps,
		immutables: cache.New[*MarketInfo](cache.Options{MaxEntries: 4096, FillTimeout: opts.CallTimeout}),
	}
	r.facts, r.seenHandlers, r.unreadable = newFactCaches(opts.CallTimeout)
	r.seenPools = cache.New[[]common.Address](cache.Options{MaxEntries: 4096, FillTimeout: opts.CallTimeout})
	r.holdings = NewHoldingsReader(r)
	return r, nil
}

// Holdings is the reader of liquidity providers' positions over r's node,
// one per reader, so its cache of pools' tokens is shared by every read.
func (r *Reader) Holdings() *HoldingsReader { return r.holdings }

// Result is one call's outcome inside an aggregate3 batch.
type Result struct {
	OK   bool
	Data []byte // return data, or revert data when !OK
}

// AggregateResults runs calls in one eth_call through Multicall3 aggregate3
// with allowFailure set, and reports each call's outcome.
func (r *Reader) AggregateResults(ctx context.Context, calls []Call) ([]Result, error) {
	data, err := packAggregate(calls)
	if err != nil {
		return nil, err
	}
	raw, err := r.EthCall(ctx, r.multicall, data)
	if err != nil {
		return nil, err
	}
	return unpackAggregate(raw, len(calls))
}

// packAggregate is the calldata of aggregate3 over calls, each allowed to fail.
func packAggregate(calls []Call) ([]byte, error) {
	in := make([]contracts.Multicall3Call, len(calls))
	for i, c := range calls {
		in[i] = contracts.Multicall3Call{Target: c.Target, AllowFailure: true, CallData: c.Data}
	}
	data, err := contracts.Multicall3.Pack("aggregate3", in)
	if err != nil {
		return nil, fmt.Errorf("pack aggregate3: %w", err)
	}
	return data, nil
}

// unpackAggregate decodes aggregate3's answer to n calls.
func unpackAggregate(raw []byte, n int) ([]Result, error) {
	var out []contracts.Multicall3Result
	if err := contracts.Multicall3.UnpackIntoInterface(&out, "aggregate3", raw); err != nil {
		return nil, upstreamGarbage(fmt.Errorf("unpack aggregate3: %w", err))
	}
	if len(out) != n {
		return nil, upstreamGarbage(fmt.Errorf("aggregate3 returned %d results for %d calls", len(out), n))
	}
	res := make([]Result, len(out))
	for i, o := range out {
		res[i] = Result{OK: o.Success, Data: o.ReturnData}
	}
	return res, nil
}

// Aggregate is AggregateResults for batches where every call must succeed:
// the first failure is reported by index as a *CallFailedError.
func (r *Reader) Aggregate(ctx context.Context, calls []Call) ([][]byte, error) {
	results, err := r.AggregateResults(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(results))
	for i, res := range results {
		if !res.OK {
			return nil, &CallFailedError{Index: i, Target: calls[i].Target, Revert: res.Data}
		}
		out[i] = res.Data
	}
	return out, nil
}

// EthCall is one eth_call at the latest block, classified into the problem vocabulary.
func (r *Reader) EthCall(ctx context.Context, to common.Address, data []byte) ([]byte, error) {
	return r.EthCallFrom(ctx, common.Address{}, to, data)
}

// EthCallFrom is EthCall with a sender (zero: none), for simulating a
// transaction as its signer would send it.
func (r *Reader) EthCallFrom(ctx context.Context, from, to common.Address, data []byte) ([]byte, error) {
	return r.ethCall(ctx, callArg(from, &to, data))
}

// callArg is eth_call's transaction object: from (zero: none), to (nil:
// none, the node runs data as creation code), data.
func callArg(from common.Address, to *common.Address, data []byte) map[string]any {
	arg := map[string]any{"data": hexutil.Bytes(data)}
	if to != nil {
		arg["to"] = *to
	}
	if from != (common.Address{}) {
		arg["from"] = from
	}
	return arg
}

// ethCall is one eth_call of arg at the latest block within the call
// deadline, classified into the problem vocabulary.
func (r *Reader) ethCall(ctx context.Context, arg map[string]any) ([]byte, error) {
	out, err := r.rawEthCall(ctx, arg)
	if err != nil {
		return nil, classify(err)
	}
	return out, nil
}

// rawEthCall is one eth_call of arg at the answer's block (blockParam)
// within the call deadline, its error as the node gave it.
func (r *Reader) rawEthCall(ctx context.Context, arg map[string]any) (hexutil.Bytes, error) {
	at, err := r.blockParam(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var out hexutil.Bytes
	err = r.rpc.CallContext(ctx, &out, "eth_call", arg, at)
	return out, err
}

// sendBatch sends batch as one JSON-RPC batch, or one call after another
// on a Caller that cannot batch; each element's own error is left in it.
// The error returned is the round trip's, classified.
func (r *Reader) sendBatch(ctx context.Context, batch []rpc.BatchElem) error {
	if bc, ok := r.rpc.(batchCaller); ok {
		if err := bc.BatchCallContext(ctx, batch); err != nil {
			return classify(err)
		}
		return nil
	}
	for i := range batch {
		batch[i].Error = r.rpc.CallContext(ctx, batch[i].Result, batch[i].Method, batch[i].Args...)
	}
	return nil
}

// ChainedRead runs calls in one eth_call through ChainedRead's creation
// code, sent without `to` (contracts.ChainedRead): a call's target may be
// the address an earlier call returned, so "ask the market for its pool,
// then ask the pool" is one round trip instead of two.
func (r *Reader) ChainedRead(ctx context.Context, calls []contracts.ChainedCall) ([]Result, error) {
	data, err := contracts.ChainedReadCode(calls)
	if err != nil {
		return nil, err
	}
	out, err := r.ethCall(ctx, map[string]any{"data": hexutil.Bytes(data)}) // no "to": the node runs the code
	if err != nil {
		return nil, err
	}
	ok, ret, err := contracts.UnpackChainedRead(out)
	if err != nil {
		return nil, upstreamGarbage(fmt.Errorf("unpack ChainedRead: %w", err))
	}
	if len(ok) != len(calls) {
		return nil, upstreamGarbage(fmt.Errorf("ChainedRead returned %d results for %d calls", len(ok), len(calls)))
	}
	return results(ok, ret), nil
}

// classify maps a go-ethereum rpc error onto the problem vocabulary.
func classify(err error) error {
	var rpcErr rpc.Error
	var httpErr rpc.HTTPError
	switch {
	case errors.As(err, &httpErr) && (httpErr.StatusCode == 429 || httpErr.StatusCode == 503):
		return problem.Wrap(problem.RPCUnavailable, err, "the rpc node refused the request (HTTP %d)", httpErr.StatusCode)
	case errors.As(err, &httpErr):
		return problem.Wrap(problem.RPCError, err, "the rpc node answered HTTP %d", httpErr.StatusCode)
	case errors.As(err, &rpcErr):
		return nodeError(problem.RPC, rpcErr, err)
	}
	return problem.Upstream(problem.RPC, err)
}

// ErrUndecodable marks an answer that came but does not decode: where one
// call of many gets it (an order's market or token), that call's target is
// at fault, not the node, unlike a node's error answer (RPC_ERROR too).
var ErrUndecodable = errors.New("the answer does not decode")

func upstreamGarbage(err error) error {
	return problem.Wrap(problem.RPCError, fmt.Errorf("%w: %w", ErrUndecodable, err), "the rpc node returned data that does not decode")
}

// Market returns the market's immutables: from the cache, or read cold in
// one round (market getters, pool, tokens and slot0 in one ChainedRead).
// Immutables are the same at every block, so the read is not pinned to the
// answer's (package block): it runs at the head alongside the subgraph's
// first page instead of waiting for the block that page resolves.
func (r *Reader) Market(ctx context.Context, market common.Address) (*MarketInfo, error) {
	if info, _, ok := r.immutables.Peek(market.Hex()); ok {
		return info, nil
	}
	info, _, err := r.cold(block.Without(ctx), market)
	return info, err
}

// MarketSnapshot returns the market's immutables and its prime pool's slot0
// in one round trip, cold or with the immutables cached.
func (r *Reader) MarketSnapshot(ctx context.Context, market common.Address) (*MarketInfo, PoolState, error) {
	if info, _, ok := r.immutables.Peek(market.Hex()); ok {
		st, err := r.slot0(ctx, info.Pool)
		return info, st, err
	}
	return r.cold(ctx, market)
}

// A marketRead is one read of a market seen for the first time, declared
// with the decoder of its answer, so answers are consumed by name, never by
// position. from names the read whose answer (an address) is this read's
// target; "" means the market itself.
type marketRead struct {
	name   string
	from   string
	data   []byte
	decode func(c *coldMarket, ret []byte) error
}

// coldMarket is what the market reads decode into.
type coldMarket struct {
	info  MarketInfo
	slot0 PoolState
	// decodeSlot0 is the Reader's: the prime pool by its DEX's layout
	decodeSlot0 func(pool common.Address, raw []byte) (PoolState, error)
}

// marketReadList is the ChainedRead of a market seen for the first time:
// the market's assets and pool, then the pool's immutables and slot0 and
// the assets' decimals and symbols, targets taken from the market's
// answers. The market's own reads come first: when one fails, the address
// is not a market.
var marketReadList = func() []marketRead {
	m, p, e := contracts.OptionMarketV2, contracts.Pool, contracts.ERC20
	address := func(a abi.ABI, method string, into func(c *coldMarket) *common.Address) func(*coldMarket, []byte) error {
		return func(c *coldMarket, ret []byte) (err error) {
			*into(c), err = unpackAddress(a, method, ret)
			return err
		}
	}
	decimals := func(into func(c *coldMarket) *Token) func(*coldMarket, []byte) error {
		return func(c *coldMarket, ret []byte) (err error) {
			t := into(c)
			if t.Decimals, err = unpackOne[uint8](e, "decimals", ret); err == nil && t.Decimals > maxDecimals {
				err = fmt.Errorf("token decimals %d above %d", t.Decimals, maxDecimals)
			}
			return err
		}
	}
	symbol := func(into func(c *coldMarket) *Token) func(*coldMarket, []byte) error {
		return func(c *coldMarket, ret []byte) error {
			into(c).Symbol = decodeSymbol(ret)
			return nil
		}
	}
	callAsset := func(c *coldMarket) *Token { return &c.info.CallAsset }
	putAsset := func(c *coldMarket) *Token { return &c.info.PutAsset }
	return []marketRead{
		{name: "callAsset", data: pack(m, "callAsset"), decode: address(m, "callAsset", func(c *coldMarket) *common.Address { return &c.info.CallAsset.Address })},
		{name: "putAsset", data: pack(m, "putAsset"), decode: address(m, "putAsset", func(c *coldMarket) *common.Address { return &c.info.PutAsset.Address })},
		{name: "primePool", data: pack(m, "primePool"), decode: address(m, "primePool", func(c *coldMarket) *common.Address { return &c.info.Pool })},
		{name: "token0", from: "primePool", data: pack(p, "token0"), decode: address(p, "token0", func(c *coldMarket) *common.Address { return &c.info.Token0 })},
		{name: "token1", from: "primePool", data: pack(p, "token1"), decode: address(p, "token1", func(c *coldMarket) *common.Address { return &c.info.Token1 })},
		{name: "fee", from: "primePool", data: pack(p, "fee"), decode: func(c *coldMarket, ret []byte) error {
			fee, err := unpackOne[*big.Int](p, "fee", ret)
			if err == nil {
				c.info.Fee = uint32(fee.Uint64())
			}
			return err
		}},
		{name: "tickSpacing", from: "primePool", data: pack(p, "tickSpacing"), decode: func(c *coldMarket, ret []byte) error {
			spacing, err := unpackOne[*big.Int](p, "tickSpacing", ret)
			if err != nil {
				return err
			}
			if c.info.TickSpacing = int(spacing.Int64()); c.info.TickSpacing <= 0 {
				return fmt.Errorf("pool tick spacing %d", c.info.TickSpacing)
			}
			return nil
		}},
		{name: "callAsset.decimals", from: "callAsset", data: pack(e, "decimals"), decode: decimals(callAsset)},
		{name: "callAsset.symbol", from: "callAsset", data: pack(e, "symbol"), decode: symbol(callAsset)},
		{name: "putAsset.decimals", from: "putAsset", data: pack(e, "decimals"), decode: decimals(putAsset)},
		{name: "putAsset.symbol", from: "putAsset", data: pack(e, "symbol"), decode: symbol(putAsset)},
		{name: "slot0", from: "primePool", data: pack(p, "slot0"), decode: func(c *coldMarket, ret []byte) (err error) {
			c.slot0, err = c.decodeSlot0(c.info.Pool, ret)
			return err
		}},
	}
}()

// marketReads are marketReadList's calls for market, a read's target
// taken from the answer of the read it names.
func marketReads(market common.Address) []contracts.ChainedCall {
	calls := make([]contracts.ChainedCall, len(marketReadList))
	for i, rd := range marketReadList {
		calls[i] = contracts.ChainedCall{Target: market, Data: rd.data}
		if rd.from != "" {
			j := slices.IndexFunc(marketReadList[:i], func(x marketRead) bool { return x.name == rd.from })
			if j < 0 {
				panic("chain: market read " + rd.name + " names no earlier read " + rd.from) // a static table: a bug
			}
			calls[i] = contracts.ChainedCall{TargetFrom: big.NewInt(int64(j + 1)), Data: rd.data}
		}
	}
	return calls
}

// cold reads everything about a market whose immutables are not cached, and
// its pool's slot0, in one round trip (a ChainedRead). A node that answers
// an eth_call without `to` with an error gets the same reads as two
// Multicall3 rounds.
func (r *Reader) cold(ctx context.Context, market common.Address) (*MarketInfo, PoolState, error) {
	calls := marketReads(market)
	res, err := r.chainedReadOrRounds(ctx, calls)
	if err != nil {
		return nil, PoolState{}, notAMarket(market, err)
	}
	return r.decodeMarket(market, calls, res)
}

// chainedReadOrRounds is ChainedRead, or the same reads as Multicall3 rounds
// when the node answers an eth_call without `to` with an error.
func (r *Reader) chainedReadOrRounds(ctx context.Context, calls []contracts.ChainedCall) ([]Result, error) {
	res, err := r.ChainedRead(ctx, calls)
	if rpcErr := rpc.Error(nil); errors.As(err, &rpcErr) {
		res, err = r.chainedReadInRounds(ctx, calls)
	}
	return res, err
}

// decodeMarket decodes the answers to marketReads, read by read, and
// caches the immutables.
func (r *Reader) decodeMarket(market common.Address, calls []contracts.ChainedCall, res []Result) (*MarketInfo, PoolState, error) {
	c := &coldMarket{info: MarketInfo{Market: market}, decodeSlot0: r.decodeSlot0}
	ok, ret := split(res)
	for i, rd := range marketReadList {
		own := rd.from == ""
		// A call to an address without code succeeds with no data (EVM
		// semantics): for the pool's and the assets' reads that is the
		// market pointing at something that is not a pool or a token, as
		// much as a revert is.
		if !res[i].OK || (!own && len(res[i].Data) == 0) {
			if own {
				return nil, PoolState{}, notAMarket(market, &CallFailedError{Index: i, Target: market, Revert: res[i].Data})
			}
			target, _ := calls[i].TargetAt(i, ok, ret)
			err := &CallFailedError{Index: i, Target: target, Revert: res[i].Data}
			return nil, PoolState{}, fmt.Errorf("market %s pool %s: %s: %w", market.Hex(), c.info.Pool.Hex(), rd.name, badMarketState(err))
		}
		if err := rd.decode(c, res[i].Data); err != nil {
			if own {
				return nil, PoolState{}, notAMarket(market, err)
			}
			return nil, PoolState{}, upstreamGarbage(fmt.Errorf("market %s: %s: %w", market.Hex(), rd.name, err))
		}
	}
	info := &c.info
	pair := map[common.Address]bool{info.CallAsset.Address: true, info.PutAsset.Address: true}
	if !pair[info.Token0] || !pair[info.Token1] || info.Token0 == info.Token1 {
		return nil, PoolState{}, upstreamGarbage(fmt.Errorf("market %s: pool tokens %s/%s are not the market's assets", market.Hex(), info.Token0.Hex(), info.Token1.Hex()))
	}
	r.immutables.Set(market.Hex(), info, cache.Policy{TTL: r.ttl})
	return info, c.slot0, nil
}

// split is results as ChainedRead's two arrays.
func split(res []Result) (ok []bool, ret [][]byte) {
	ok, ret = make([]bool, len(res)), make([][]byte, len(res))
	for i, x := range res {
		ok[i], ret[i] = x.OK, x.Data
	}
	return ok, ret
}

// chainedReadInRounds gives ChainedRead's results through Multicall3
// aggregate3 rounds: each round runs every call whose target is known (a
// fixed one, or the answer of a call already run), so a chain of n
// generations takes n rounds. Targets follow ChainedCall.TargetAt, so a
// call skipped by ChainedRead is skipped here too.
func (r *Reader) chainedReadInRounds(ctx context.Context, calls []contracts.ChainedCall) ([]Result, error) {
	ok := make([]bool, len(calls))
	ret := make([][]byte, len(calls))
	done := make([]bool, len(calls)) // run or skipped in an earlier round
	for left := len(calls); left > 0; {
		var batch []Call
		var round []int // calls resolved in this round, run or skipped
		var idx []int   // the calls of batch
		for i, c := range calls {
			if done[i] {
				continue
			}
			if j := c.Source(); j >= 0 && j < i && !done[j] {
				continue // its target is in an answer not yet read
			}
			round = append(round, i)
			if target, run := c.TargetAt(i, ok, ret); run {
				batch = append(batch, Call{Target: target, Data: c.Data})
				idx = append(idx, i)
			} // else skipped, as ChainedRead skips it: not ok, no data
		}
		if len(batch) > 0 {
			out, err := r.AggregateResults(ctx, batch)
			if err != nil {
				return nil, err
			}
			for k, i := range idx {
				ok[i], ret[i] = out[k].OK, out[k].Data
			}
		}
		for _, i := range round {
			done[i] = true
		}
		left -= len(round)
	}
	return results(ok, ret), nil
}

// results pairs each call's success with its return data.
func results(ok []bool, ret [][]byte) []Result {
	res := make([]Result, len(ok))
	for i := range ok {
		res[i] = Result{OK: ok[i], Data: ret[i]}
	}
	return res
}

// maxDecimals bounds an ERC20's decimals: 10^77 is the largest power of ten
// in a uint256, and a price scaled by more is no longer a finite float64.
const maxDecimals = 77

func (r *Reader) slot0(ctx context.Context, pool common.Address) (PoolState, error) {
	raw, err := r.slot0Raw(ctx, pool)
	if err != nil {
		return PoolState{}, fmt.Errorf("slot0 of %s: %w", pool.Hex(), err)
	}
	st, err := r.decodeSlot0(pool, raw)
	if err != nil { // the same bytes on the cold path are upstream garbage too
		return PoolState{}, upstreamGarbage(fmt.Errorf("slot0 of %s: %w", pool.Hex(), err))
	}
	return st, nil
}

// slot0Raw is the pool's slot0 answer at the answer's block. When it is
// its answer's first read at the head (a mark price), the head's header
// rides in its batch (claimHead), not in a round trip before it.
func (r *Reader) slot0Raw(ctx context.Context, pool common.Address) ([]byte, error) {
	data := pack(contracts.Pool, "slot0")
	p, bc, ok := r.claimHead(ctx)
	if !ok {
		return r.EthCall(ctx, pool, data)
	}
	res, err := r.headFirst(ctx, p, bc, []Call{{pool, data}})
	if err != nil {
		return nil, err
	}
	if !res[0].OK {
		// as EthCall answers a revert on the other path: the same class
		// whichever read came first (it was a bare error here: a 500)
		return nil, problem.Wrap(problem.RPCError, &CallFailedError{Target: pool, Revert: res[0].Data}, "the pool's slot0 reverted")
	}
	return res[0].Data, nil
}

// decodeSlot0 reads a pool's slot0 answer through the layout of the pool's
// DEX (Options.Slot0): sqrtPriceX96 and tick.
func (r *Reader) decodeSlot0(pool common.Address, raw []byte) (PoolState, error) {
	layout := contracts.Slot0Leading
	if r.slot0Layout != nil {
		layout = r.slot0Layout(pool)
	}
	sqrt, tick, err := contracts.DecodeSlot0(layout, raw)
	if err != nil {
		return PoolState{}, err
	}
	return PoolState{SqrtPriceX96: sqrt, Tick: tick}, nil
}

func notAMarket(market common.Address, err error) error {
	var failed *CallFailedError
	var p *problem.Error
	if errors.As(err, &failed) || (!errors.As(err, &p) && err != nil) {
		return problem.Wrap(problem.MarketNotFound, err, "%s is not an option market on this chain (its callAsset/putAsset/primePool calls failed)", market.Hex()).On("optionMarket")
	}
	return err
}

func badMarketState(err error) error {
	var failed *CallFailedError
	if errors.As(err, &failed) {
		return problem.Wrap(problem.MarketUnsupported, err, "the market's prime pool or assets do not answer the standard pool and ERC20 calls").On("optionMarket")
	}
	return err
}

func pack(a abi.ABI, name string, args ...any) []byte {
	data, err := a.Pack(name, args...)
	if err != nil {
		panic(fmt.Sprintf("chain: pack %s: %v", name, err)) // static ABI and argument types: a bug, not input
	}
	return data
}

func unpackAddress(a abi.ABI, name string, raw []byte) (common.Address, error) {
	return unpackOne[common.Address](a, name, raw)
}

func unpackOne[T any](a abi.ABI, name string, raw []byte) (T, error) {
	var zero T
	vals, err := a.Unpack(name, raw)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", name, err)
	}
	if len(vals) != 1 {
		return zero, fmt.Errorf("%s: %d values", name, len(vals))
	}
	v, ok := vals[0].(T)
	if !ok {
		return zero, fmt.Errorf("%s: unexpected type %T", name, vals[0])
	}
	return v, nil
}

// decodeSymbol accepts the ABI string most tokens return and the bytes32 a
// few old ones (MKR-style) return.
func decodeSymbol(raw []byte) string {
	if s, err := unpackOne[string](contracts.ERC20, "symbol", raw); err == nil {
		return s
	}
	if len(raw) == 32 {
		return strings.TrimRight(string(raw), "\x00")
	}
	return ""
}

// BlockNumber is the node's head block (eth_blockNumber).
func (r *Reader) BlockNumber(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var n hexutil.Uint64
	if err := r.rpc.CallContext(ctx, &n, "eth_blockNumber"); err != nil {
		return 0, classify(err)
	}
	return uint64(n), nil
}

// CheckChainID asks the node which chain it serves (eth_chainId) and fails
// with 503 RPC_WRONG_CHAIN unless it is want: an RPC URL of another network
// would otherwise be served as this chain, every answer wrong. Checked at
// start and by readiness.
func (r *Reader) CheckChainID(ctx context.Context, want uint64) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var id hexutil.Big
	if err := r.rpc.CallContext(ctx, &id, "eth_chainId"); err != nil {
		return classify(err)
	}
	if got := (*big.Int)(&id); !got.IsUint64() || got.Uint64() != want {
		return problem.New(problem.RPCWrongChain, "the rpc node serves chain %s, not %d", got, want)
	}
	return nil
}
