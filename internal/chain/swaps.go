package chain

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// A pool's swaps over a window of time are read from the node's logs, not
// from an index: a busy pool swaps tens of thousands of times a day, which
// an index would have to hold version by version for every pool a market
// uses (what the protocol's own events never need). Reading them costs a
// few round trips per window: the window's ends are found among the
// blocks by their headers' times (a batch of headers a round, placed by
// interpolation), then the logs between them are asked in ranges no wider
// than a provider allows, many ranges to a batch.

// Swap is one Swap event of a pool: where it is (block, log index, block
// time) and what it did (the amounts in or out of the pool, the price and
// tick after it).
type Swap struct {
	Block            uint64
	Index            uint
	Time             int64
	Amount0, Amount1 *big.Int
	SqrtPriceX96     *big.Int
	Tick             int
	// Initialize marks the pool's Initialize event: its first price, no
	// swap (no amounts).
	Initialize bool
}

// SwapWindow is a pool's swaps in chain order from a block before a time
// window to the window's end (or the answer's block), with the pool's
// price just before the first block read.
type SwapWindow struct {
	// Head is the answer's block: nothing after it is read.
	Head block.Ref
	// Open is the pool's sqrtPriceX96 at the end of the block before the
	// swaps read (nil where slot0 reverted there: no pool yet).
	Open *big.Int
	// Swaps are every Swap from that block on, oldest first; the first
	// ones may be before the window asked (they move Open to its start).
	Swaps []Swap
	// RoundTrips are the node requests the read made (a batch is one).
	RoundTrips int
}

// The Swap events of Uniswap V3 and its forks, and of PancakeSwap V3 (two
// protocol-fee fields more).
var (
	swapTopicV3      = crypto.Keccak256Hash([]byte("Swap(address,address,int256,int256,uint160,uint128,int24)"))
	swapTopicPancake = crypto.Keccak256Hash([]byte("Swap(address,address,int256,int256,uint160,uint128,int24,uint128,uint128)"))
	swapData         = mustArgumentList("int256", "int256", "uint160", "uint128", "int24")
	// Initialize sets a pool's first price (Uniswap V3 and its forks alike):
	// a pool created after the block a window is read from has no slot0
	// there, and its price until its first swap is this one.
	initializeTopic = crypto.Keccak256Hash([]byte("Initialize(uint160,int24)"))
	initializeData  = mustArgumentList("uint160", "int24")
)

func mustArgumentList(types ...string) abi.Arguments {
	var out abi.Arguments
	for _, t := range types {
		ty, err := abi.NewType(t, "", nil)
		if err != nil {
			panic(err)
		}
		out = append(out, abi.Argument{Type: ty})
	}
	return out
}

// SwapLimits bound how the swaps are read: LogRange is the widest
// eth_getLogs range asked (the providers' common cap is 10,000 blocks;
// a range refused as too wide or too full is halved), PerBatch the calls
// the first batch carries (a batch answer of tens of thousands of logs
// passes geth's 25 MB batch limit), MaxPerBatch the most a later batch
// carries when the answers so far were small (a quiet pool's ranges hold
// few logs: a window of days is then a few batches, not one per 12
// ranges; providers refuse batches of more than 100 to 1,000 calls),
// Slack how close a window's end must be placed among the blocks (the
// logs of the slack's blocks are read and left out by their time).
type SwapLimits struct {
	LogRange    uint64
	PerBatch    int
	MaxPerBatch int
	Slack       uint64
}

// DefaultSwapLimits suit the providers' usual caps.
var DefaultSwapLimits = SwapLimits{LogRange: 10_000, PerBatch: 12, MaxPerBatch: 100, Slack: 4_096}

// batchAnswerBudget is the answer a batch of ranges is sized to: half of
// geth's 25 MB limit on a batch's answers, from the bytes a range
// answered so far.
const batchAnswerBudget = 12 << 20

// nextBatch is how many ranges the next batch asks: PerBatch until some
// answered, then as many as fit batchAnswerBudget at the bytes a range
// answered so far, within [PerBatch, MaxPerBatch].
func (l SwapLimits) nextBatch(ranges int, bytes int64) int {
	if ranges == 0 || l.MaxPerBatch <= l.PerBatch {
		return l.PerBatch
	}
	per := max(bytes/int64(ranges), 1)
	return int(min(max(batchAnswerBudget/per, int64(l.PerBatch)), int64(l.MaxPerBatch)))
}

// PoolSwaps reads the swaps of pool in the blocks whose time is in
// [from, to) (to cut at the answer's block), from the last block before
// from on, and the pool's price at that block's end.
func (r *Reader) PoolSwaps(ctx context.Context, pool common.Address, from, to int64) (SwapWindow, error) {
	w := SwapWindow{}
	head, trips, err := r.answerHeader(ctx)
	if err != nil {
		return w, err
	}
	w.Head, w.RoundTrips = head, trips
	if from > head.Timestamp || to <= from {
		return w, nil
	}
	s := &blockSearch{r: r, known: map[uint64]int64{head.Number: head.Timestamp}}
	lo, hi, err := s.bracket(ctx, from, min(to, head.Timestamp+1))
	w.RoundTrips += s.trips
	if err != nil {
		return w, err
	}
	rd := &swapRead{r: r, pool: pool, lim: r.swapLimits(), to: to}
	w.Open, w.Swaps, err = rd.read(ctx, lo, hi)
	w.RoundTrips += rd.trips
	return w, err
}

func (r *Reader) swapLimits() SwapLimits {
	if r.swaps.LogRange == 0 {
		return DefaultSwapLimits
	}
	return r.swaps
}

// answerHeader is the header of the answer's block: the pinned one when
// it is resolved with its time, else read (the pin's block, or the head,
// which then resolves a pin still open).
func (r *Reader) answerHeader(ctx context.Context) (block.Ref, int, error) {
	if p := block.From(ctx); p != nil {
		if ref, ok := p.Resolved(); ok && ref.Timestamp > 0 {
			return ref, 0, nil
		}
	}
	tag, err := r.blockParam(ctx)
	if err != nil {
		return block.Ref{}, 1, err
	}
	if p := block.From(ctx); p != nil {
		if ref, ok := p.Resolved(); ok && ref.Timestamp > 0 {
			return ref, 1, nil // blockParam read the head's header
		}
	}
	ref, err := r.Header(ctx, tag)
	return ref, 1, err
}

// blockSearch places times among blocks by their headers' times, which a
// chain keeps non-decreasing: known holds every header read.
type blockSearch struct {
	r     *Reader
	known map[uint64]int64
	trips int
}

// maxSearchRounds bounds the search: each round narrows a window's end at
// least eightfold, so 220 million blocks take nine at worst.
const maxSearchRounds = 12

// bracket returns lo, a block before from (its time earlier, or block 0)
// and hi, a block at or after to (its time not earlier, or the head), each
// within the slack of the nearest such block.
func (s *blockSearch) bracket(ctx context.Context, from, to int64) (lo, hi uint64, err error) {
	slack := s.r.swapLimits().Slack
	for round := 0; ; round++ {
		var asks []uint64
		if _, ok := s.known[0]; !ok {
			asks = append(asks, 0)
		}
		for _, t := range []int64{from, to} {
			below, above := s.around(t)
			if above-below > slack {
				asks = append(asks, s.samples(t, below, above)...)
			}
		}
		if len(asks) == 0 {
			lo, _ = s.around(from)
			_, hi = s.around(to)
			return lo, hi, nil
		}
		if round == maxSearchRounds {
			return 0, 0, problem.New(problem.RPCError, "the node's block times did not place [%d, %d) within %d rounds", from, to, maxSearchRounds)
		}
		if err := s.read(ctx, asks); err != nil {
			return 0, 0, err
		}
	}
}

// around is the latest known block whose time is before t (0 when none
// is) and the earliest known one whose time is not (the head when none).
func (s *blockSearch) around(t int64) (below, above uint64) {
	for n, tn := range s.known {
		if tn < t && n > below {
			below = n
		}
		if tn >= t && (above == 0 || n < above) {
			above = n
		}
	}
	if above == 0 {
		for n := range s.known {
			above = max(above, n)
		}
	}
	return below, max(above, below)
}

// samples are the blocks to read to place t between below and above: its
// interpolated place and points at growing distances either side of it.
func (s *blockSearch) samples(t int64, below, above uint64) []uint64 {
	tb, ok := s.known[below]
	ta := s.known[above]
	guess := below + (above-below)/2
	if ok && ta > tb && t > tb {
		guess = below + uint64(float64(above-below)*float64(t-tb)/float64(ta-tb))
	}
	out := []uint64{}
	for d := uint64(512); ; d *= 8 {
		for _, n := range []uint64{guess - min(d, guess), guess + d} {
			if n > below && n < above {
				out = append(out, n)
			}
		}
		if d > above-below {
			break
		}
	}
	if guess > below && guess < above {
		out = append(out, guess)
	}
	return out
}

// read reads the headers of blocks in one batch.
func (s *blockSearch) read(ctx context.Context, blocks []uint64) error {
	hs := make([]*headerJSON, len(blocks))
	batch := make([]rpc.BatchElem, len(blocks))
	for i, n := range blocks {
		batch[i] = rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{block.Tag(n), false}, Result: &hs[i]}
	}
	ctx, cancel := context.WithTimeout(ctx, s.r.timeout)
	defer cancel()
	s.trips++
	if err := s.r.sendBatch(ctx, batch); err != nil {
		return err
	}
	for i, n := range blocks {
		if batch[i].Error != nil {
			return classify(batch[i].Error)
		}
		if hs[i] == nil {
			return problem.New(problem.RPCError, "the rpc node has no header of block %d, below its head", n)
		}
		ref, err := hs[i].ref(n)
		if err != nil {
			return err
		}
		s.known[n] = ref.Timestamp
	}
	return nil
}

// swapRead reads a pool's Swap logs over a block range in batches of
// ranges, halving a range the node refuses as too wide or too full.
type swapRead struct {
	r     *Reader
	pool  common.Address
	lim   SwapLimits
	to    int64
	trips int
	// ranges and bytes are the ranges answered so far and their answers'
	// size, which size the next batch (SwapLimits.nextBatch).
	ranges int
	bytes  int64
}

type logRange struct{ from, to uint64 }

// read returns the pool's price at the end of block lo and its swaps in
// blocks lo+1 to hi, in chain order, those at or after the window's end
// left out.
func (s *swapRead) read(ctx context.Context, lo, hi uint64) (*big.Int, []Swap, error) {
	var todo []logRange
	for n := lo + 1; n <= hi; n += s.lim.LogRange {
		todo = append(todo, logRange{n, min(hi, n+s.lim.LogRange-1)})
	}
	var open *big.Int
	var err error
	var raw []json.RawMessage
	for first := true; first || len(todo) > 0; first = false {
		if s.trips > 64 {
			return nil, nil, problem.New(problem.RPCError, "the node refused the pool's logs in ranges down to a block")
		}
		var n int
		var batch []rpc.BatchElem
		if first {
			batch = append(batch, s.slot0At(lo))
		}
		for n = 0; n < len(todo) && len(batch) < s.lim.nextBatch(s.ranges, s.bytes); n++ {
			batch = append(batch, s.logsCall(todo[n]))
		}
		asked := todo[:n]
		todo = todo[n:]
		if err := s.send(ctx, batch); err != nil {
			return nil, nil, err
		}
		if first {
			if open, err = s.open(batch[0]); err != nil {
				return nil, nil, err
			}
			batch = batch[1:]
		}
		for i, e := range batch {
			more, err := s.answer(e, asked[i], &raw)
			if err != nil {
				return nil, nil, err
			}
			todo = append(todo, more...)
		}
	}
	swaps, err := s.decode(ctx, raw, lo, hi)
	return open, swaps, err
}

func (s *swapRead) send(ctx context.Context, batch []rpc.BatchElem) error {
	ctx, cancel := context.WithTimeout(ctx, s.r.timeout)
	defer cancel()
	s.trips++
	return s.r.sendBatch(ctx, batch)
}

func (s *swapRead) slot0At(n uint64) rpc.BatchElem {
	arg := map[string]any{"to": s.pool, "data": hexutil.Bytes(pack(contracts.Pool, "slot0"))}
	return rpc.BatchElem{Method: "eth_call", Args: []any{arg, block.Tag(n)}, Result: new(hexutil.Bytes)}
}

// open is the price slot0 answered; nil when it reverted or did not
// decode (no pool at that block) or the node no longer holds that block's
// state (a pruned node: the logs stay, the state goes): the series then
// starts at the pool's first swap or Initialize in the logs. Any other
// failure is the node's and fails the read.
func (s *swapRead) open(e rpc.BatchElem) (*big.Int, error) {
	if e.Error != nil {
		var re rpc.Error
		if _, ok := asRevert(e.Error); ok || (errors.As(e.Error, &re) && blockError(re, nil) != nil) {
			return nil, nil
		}
		return nil, classify(e.Error)
	}
	st, err := s.r.decodeSlot0(s.pool, *e.Result.(*hexutil.Bytes))
	if err != nil || st.SqrtPriceX96.Sign() <= 0 {
		return nil, nil
	}
	return st.SqrtPriceX96, nil
}

func (s *swapRead) logsCall(g logRange) rpc.BatchElem {
	q := map[string]any{"fromBlock": block.Tag(g.from), "toBlock": block.Tag(g.to), "address": s.pool,
		"topics": [][]common.Hash{{swapTopicV3, swapTopicPancake, initializeTopic}}}
	return rpc.BatchElem{Method: "eth_getLogs", Args: []any{q}, Result: new([]json.RawMessage)}
}

// answer keeps a range's logs, or gives its halves back when the node
// refused it as too wide or too full.
func (s *swapRead) answer(e rpc.BatchElem, g logRange, raw *[]json.RawMessage) ([]logRange, error) {
	if e.Error == nil {
		got := *e.Result.(*[]json.RawMessage)
		s.ranges++
		for _, m := range got {
			s.bytes += int64(len(m))
		}
		*raw = append(*raw, got...)
		return nil, nil
	}
	if !tooMuch(e.Error) || g.from == g.to {
		return nil, classify(e.Error)
	}
	mid := g.from + (g.to-g.from)/2
	return []logRange{{g.from, mid}, {mid + 1, g.to}}, nil
}

// tooMuch reports a refusal of an eth_getLogs range for its width or its
// number of logs, which a narrower range avoids (Infura's and Alchemy's
// "query returned more than 10000 results", "limited to a 10000 range",
// geth's "exceed maximum block range"). A rate limit is not one, though
// its words ("rate limit exceeded", "too many requests") match: halving
// the range only spends more requests and more of a read's bounded round
// trips on a node that is refusing all of them, so it fails the read as
// the outage it is (RPC_UNAVAILABLE), as the indexer keeps its range.
func tooMuch(err error) bool {
	if rateLimited(err) {
		return false
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"more than", "range", "too many", "limit", "response size", "too large"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// rateLimited reports a node's refusal for the rate of requests, in the
// words providers use (Infura's -32005 "project ID request rate exceeded",
// "rate limit exceeded", Alchemy's "exceeded its compute units per second
// capacity", "too many requests"; the indexer's list).
func rateLimited(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"rate limit", "rate-limit", "ratelimit", "too many requests", "rate exceeded", "request rate", "throttl", "compute units per second"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// decode turns the logs into swaps in chain order, each checked to be the
// pool's, in the range asked, once; a log without its block's time has
// it read from the block's header (nodes before geth 1.16 leave it out).
func (s *swapRead) decode(ctx context.Context, raw []json.RawMessage, lo, hi uint64) ([]Swap, error) {
	out := make([]Swap, 0, len(raw))
	var untimed []uint64
	for _, m := range raw {
		var l types.Log
		if err := json.Unmarshal(m, &l); err != nil {
			return nil, upstreamGarbage(fmt.Errorf("a swap log: %w", err))
		}
		sw, err := s.swap(l, lo, hi)
		if err != nil {
			return nil, err
		}
		if sw.Time == 0 {
			untimed = append(untimed, sw.Block)
		}
		out = append(out, sw)
	}
	if err := s.timeUntimed(ctx, out, untimed); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Swap) int {
		if a.Block != b.Block {
			return cmp.Compare(a.Block, b.Block)
		}
		return cmp.Compare(a.Index, b.Index)
	})
	for i := 1; i < len(out); i++ {
		if out[i].Block == out[i-1].Block && out[i].Index == out[i-1].Index {
			return nil, problem.New(problem.RPCError, "the node answered the log %d of block %d twice", out[i].Index, out[i].Block)
		}
	}
	kept := out[:0]
	for _, sw := range out {
		if sw.Time < s.to {
			kept = append(kept, sw)
		}
	}
	return kept, nil
}

// swap decodes one log, checked to be a Swap (or the Initialize) of the
// pool in [lo+1, hi].
func (s *swapRead) swap(l types.Log, lo, hi uint64) (Swap, error) {
	if l.Address != s.pool || len(l.Topics) == 0 || (l.Topics[0] != swapTopicV3 && l.Topics[0] != swapTopicPancake && l.Topics[0] != initializeTopic) ||
		l.BlockNumber <= lo || l.BlockNumber > hi || l.Removed {
		return Swap{}, problem.New(problem.RPCError, "the node answered a log that is not a Swap of pool %s in blocks [%d, %d]", s.pool.Hex(), lo+1, hi)
	}
	if l.BlockTimestamp > block.MaxTimestamp {
		return Swap{}, problem.New(problem.RPCError, "a Swap log's block time %d is past any sane bound", l.BlockTimestamp)
	}
	if l.Topics[0] == initializeTopic {
		return s.initialize(l)
	}
	if len(l.Data) < 5*32 {
		return Swap{}, upstreamGarbage(fmt.Errorf("a Swap log of %d bytes of data", len(l.Data)))
	}
	v, err := swapData.Unpack(l.Data[:5*32])
	if err != nil {
		return Swap{}, upstreamGarbage(fmt.Errorf("a Swap log: %w", err))
	}
	tick := v[4].(*big.Int)
	sqrt := v[2].(*big.Int)
	if sqrt.Sign() <= 0 {
		return Swap{}, problem.New(problem.RPCError, "a Swap log of pool %s with a price of 0", s.pool.Hex())
	}
	return Swap{Block: l.BlockNumber, Index: l.Index, Time: int64(l.BlockTimestamp), Amount0: v[0].(*big.Int), Amount1: v[1].(*big.Int),
		SqrtPriceX96: sqrt, Tick: int(tick.Int64())}, nil
}

// initialize decodes the pool's Initialize log: a price, no swap.
func (s *swapRead) initialize(l types.Log) (Swap, error) {
	if len(l.Data) < 2*32 {
		return Swap{}, upstreamGarbage(fmt.Errorf("an Initialize log of %d bytes of data", len(l.Data)))
	}
	v, err := initializeData.Unpack(l.Data[:2*32])
	if err != nil {
		return Swap{}, upstreamGarbage(fmt.Errorf("an Initialize log: %w", err))
	}
	sqrt := v[0].(*big.Int)
	if sqrt.Sign() <= 0 {
		return Swap{}, problem.New(problem.RPCError, "an Initialize log of pool %s with a price of 0", s.pool.Hex())
	}
	return Swap{Block: l.BlockNumber, Index: l.Index, Time: int64(l.BlockTimestamp), SqrtPriceX96: sqrt, Tick: int(v[1].(*big.Int).Int64()),
		Initialize: true}, nil
}

// timeUntimed reads the headers of the blocks whose logs came without
// their time, in batches, and sets the swaps' times.
func (s *swapRead) timeUntimed(ctx context.Context, swaps []Swap, blocks []uint64) error {
	if len(blocks) == 0 {
		return nil
	}
	slices.Sort(blocks)
	blocks = slices.Compact(blocks)
	bs := &blockSearch{r: s.r, known: map[uint64]int64{}}
	for i := 0; i < len(blocks); i += 100 {
		if err := bs.read(ctx, blocks[i:min(len(blocks), i+100)]); err != nil {
			return err
		}
	}
	s.trips += bs.trips
	for i := range swaps {
		if swaps[i].Time == 0 {
			swaps[i].Time = bs.known[swaps[i].Block]
		}
	}
	return nil
}
