package chain

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/bits"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// OrderQuery asks for what decides whether a signed limit order can be
// filled: the contract's used mark, and for a limit exercise (TokenID set)
// the option's owner, expiry and the maker's delegation to the contract,
// for a limit purchase (Premium set) the maker's balance of the premium
// token and allowance to the contract.
type OrderQuery struct {
	Contract   common.Address // the chain's LimitOrders
	StructHash common.Hash    // the isOrderCancelled key
	Maker      common.Address
	Market     common.Address
	TokenID    *big.Int
	Premium    common.Address
}

// OrderState is an order's chain state at the answer's block. Owner is
// zero when ownerOf reverted (no such option, or burned by an exercise).
// Err is set when this order's reads failed or did not decode (its market
// is not a market, its premium token not a token): that order's fault,
// which the others' states do not share.
type OrderState struct {
	Err       error
	Used      bool
	Owner     common.Address
	Delegated bool
	Expiry    int64
	Allowance *big.Int
	Balance   *big.Int
}

// OrderStates reads each order's state and the block's time in one
// aggregate3 at the answer's block.
func (r *Reader) OrderStates(ctx context.Context, qs []OrderQuery) (int64, []OrderState, error) {
	calls := []Call{{r.multicall, pack(contracts.Multicall3, "getCurrentBlockTimestamp")}}
	for _, q := range qs {
		calls = append(calls, Call{q.Contract, pack(contracts.LimitOrders, "isOrderCancelled", q.StructHash)})
		if q.TokenID != nil {
			calls = append(calls,
				Call{q.Market, pack(contracts.OptionMarketV2, "ownerOf", q.TokenID)},
				Call{q.Market, pack(contracts.OptionMarketDelegates, "exerciseDelegator", q.Maker, q.Contract)},
				Call{q.Market, pack(contracts.OptionMarketV2, "opData", q.TokenID)})
		} else {
			calls = append(calls,
				Call{q.Premium, pack(contracts.ERC20Account, "allowance", q.Maker, q.Contract)},
				Call{q.Premium, pack(contracts.ERC20Account, "balanceOf", q.Maker)})
		}
	}
	res, err := r.AggregateResults(ctx, calls)
	if err != nil {
		return 0, nil, err
	}
	now, err := unpackOne[*big.Int](contracts.Multicall3, "getCurrentBlockTimestamp", res[0].Data)
	if !res[0].OK || err != nil || !now.IsInt64() {
		return 0, nil, upstreamGarbage(fmt.Errorf("getCurrentBlockTimestamp: %v", err))
	}
	out := make([]OrderState, len(qs))
	at := 1
	for i, q := range qs {
		n := 3
		if q.TokenID != nil {
			n = 4
		}
		out[i], out[i].Err = decodeOrderState(q, res[at:at+n])
		at += n
	}
	return now.Int64(), out, nil
}

func decodeOrderState(q OrderQuery, res []Result) (OrderState, error) {
	var st OrderState
	used, err := unpackOne[bool](contracts.LimitOrders, "isOrderCancelled", res[0].Data)
	if !res[0].OK || err != nil {
		return st, upstreamGarbage(fmt.Errorf("isOrderCancelled at %s: %v (not a LimitOrders contract?)", q.Contract.Hex(), err))
	}
	st.Used = used
	if q.TokenID == nil {
		if st.Allowance, err = unpackOne[*big.Int](contracts.ERC20Account, "allowance", res[1].Data); !res[1].OK || err != nil {
			return st, upstreamGarbage(fmt.Errorf("allowance: %v", err))
		}
		if st.Balance, err = unpackOne[*big.Int](contracts.ERC20Account, "balanceOf", res[2].Data); !res[2].OK || err != nil {
			return st, upstreamGarbage(fmt.Errorf("balanceOf: %v", err))
		}
		return st, nil
	}
	if res[1].OK {
		st.Owner, _ = unpackAddress(contracts.OptionMarketV2, "ownerOf", res[1].Data)
	}
	if st.Delegated, err = unpackOne[bool](contracts.OptionMarketDelegates, "exerciseDelegator", res[2].Data); !res[2].OK || err != nil {
		return st, notAMarket(q.Market, fmt.Errorf("exerciseDelegator: %v", err))
	}
	vals, err := contracts.OptionMarketV2.Unpack("opData", res[3].Data)
	if !res[3].OK || err != nil || len(vals) != 5 {
		return st, notAMarket(q.Market, fmt.Errorf("opData: %v", err))
	}
	if exp, ok := vals[3].(*big.Int); ok && exp.IsInt64() {
		st.Expiry = exp.Int64()
	}
	return st, nil
}

// OrderEvent is a LimitOrders fill or cancel as its log tells it.
type OrderEvent struct {
	Event      string // LogExerciseOrderFilled, LogPurchasedOrderFilled or LogOrderCancelled
	Order      contracts.LimitOrder
	Block      uint64
	Tx         common.Hash
	Commission *big.Int // fills only
	Executor   common.Address
}

// OrderEvents reads the limit-orders contract's fills and cancels in
// blocks [from, to] (eth_getLogs; the events index nothing, so every log of
// the contract is read and decoded), backwards from to: the newest windows
// first, so a book's used orders, most of them recent, are found in the
// first round trips. The range is read in windows of the provider's cap
// (SwapLimits.LogRange, as the candles' swaps are), PerBatch windows to a
// round trip, a window the node refuses as too wide or too full halved,
// and the windows after it no wider than its halves (orderWindows): a
// provider capping ranges below LogRange costs the read a round trip per
// halving once, not on every window, so the read reaches as deep as the
// cap allows. The read stops once enough (nil: never) says the events
// found suffice, or after maxOrderLogTrips round trips, never an
// unbounded walk. reached is the lowest block of the range read whole down
// from to (from when it was read whole): an event below it was not looked
// for.
func (r *Reader) OrderEvents(ctx context.Context, contract common.Address, from, to uint64, enough func([]OrderEvent) bool) (evs []OrderEvent, reached uint64, err error) {
	lim := r.swapLimits()
	w := &orderWindows{from: from, next: to, width: lim.LogRange, cut: from > to}
	for trips := 0; !w.done(); trips++ {
		if trips >= maxOrderLogTrips || (enough != nil && enough(evs)) {
			return evs, w.unreadTop() + 1, nil
		}
		asked := w.take(lim.PerBatch)
		got, split, err := r.orderLogTrip(ctx, contract, asked)
		if err != nil {
			return nil, 0, err
		}
		w.refused(split)
		evs = append(evs, got...)
	}
	return evs, from, nil
}

// orderWindows are the windows an OrderEvents read has yet to ask, highest
// first: pending, the halves of windows the node refused (all above the
// tail), then the tail [from, next] not yet cut, cut width blocks at a
// time. width narrows to the halves of a refused window, and a pending
// window wider than it is cut to it before it is asked, since the node
// would refuse it too.
type orderWindows struct {
	pending    []logRange
	from, next uint64
	width      uint64
	cut        bool // the tail is cut whole
}

func (w *orderWindows) done() bool { return len(w.pending) == 0 && w.cut }

// unreadTop is the highest block not yet read; done is false.
func (w *orderWindows) unreadTop() uint64 {
	if len(w.pending) > 0 {
		return w.pending[0].to
	}
	return w.next
}

// take cuts and returns the next n windows at most, highest first.
func (w *orderWindows) take(n int) []logRange {
	var out []logRange
	for len(out) < n && len(w.pending) > 0 {
		g := w.pending[0]
		if g.to-g.from >= w.width {
			w.pending = append(descendingWindows(g.from, g.to, w.width), w.pending[1:]...)
			continue
		}
		out = append(out, g)
		w.pending = w.pending[1:]
	}
	for len(out) < n && !w.cut {
		lo := w.from
		if w.next-w.from >= w.width {
			lo = w.next - w.width + 1
		}
		out = append(out, logRange{lo, w.next})
		w.cut = lo == w.from
		w.next = lo - 1
	}
	return out
}

// refused puts the halves of the windows the node refused (highest first)
// before the windows not yet asked, and narrows the width to theirs.
func (w *orderWindows) refused(halves []logRange) {
	for _, g := range halves {
		w.width = max(1, min(w.width, g.to-g.from+1))
	}
	w.pending = append(halves, w.pending...)
}

// descendingWindows cuts [from, to] into windows of width blocks, the
// highest first.
func descendingWindows(from, to, width uint64) []logRange {
	var out []logRange
	for hi := to; from <= to; hi -= width {
		lo := from
		if hi-from >= width {
			lo = hi - width + 1
		}
		out = append(out, logRange{lo, hi})
		if lo == from {
			break
		}
	}
	return out
}

// orderLogTrip reads windows (highest first) in one batch: their events,
// and the halves of each window the node refused as too much, highest
// first, to read before the windows below them.
func (r *Reader) orderLogTrip(ctx context.Context, contract common.Address, asked []logRange) ([]OrderEvent, []logRange, error) {
	batch := make([]rpc.BatchElem, len(asked))
	for i, g := range asked {
		q := map[string]any{"address": contract, "fromBlock": hexutil.Uint64(g.from), "toBlock": hexutil.Uint64(g.to), "topics": [][]common.Hash{orderTopics()}}
		batch[i] = rpc.BatchElem{Method: "eth_getLogs", Args: []any{q}, Result: new([]json.RawMessage)}
	}
	if err := r.sendOrderLogs(ctx, batch); err != nil {
		return nil, nil, err
	}
	var raw []json.RawMessage
	var split []logRange
	for i, e := range batch {
		if e.Error == nil {
			raw = append(raw, *e.Result.(*[]json.RawMessage)...)
			continue
		}
		if g := asked[i]; tooMuch(e.Error) && g.from < g.to {
			mid := g.from + (g.to-g.from)/2
			split = append(split, logRange{mid + 1, g.to}, logRange{g.from, mid})
			continue
		}
		return nil, nil, classify(e.Error)
	}
	evs, err := decodeOrderLogs(raw)
	return evs, split, err
}

// maxOrderLogTrips bounds one OrderEvents read: 64 round trips of the
// default 12 windows of 10,000 blocks is 7.68 million blocks.
const maxOrderLogTrips = 64

// OrderLogReach is the lowest block any OrderEvents read down from to can
// reach: maxOrderLogTrips round trips of PerBatch windows of LogRange
// blocks, every window answered whole (0 when that covers the chain). One
// read may stop higher, by how the node answers it (each window refused
// as too wide or too full costs a round trip): an event below one read's
// reached may still be found by another, one below this block by none
// under the same limits, however the node answers.
func (r *Reader) OrderLogReach(to uint64) uint64 {
	lim := r.swapLimits()
	hi, span := bits.Mul64(maxOrderLogTrips, uint64(lim.PerBatch))
	if hi == 0 {
		hi, span = bits.Mul64(span, lim.LogRange)
	}
	if hi != 0 || span > to {
		return 0
	}
	return to - span + 1
}

func orderTopics() []common.Hash {
	a := contracts.LimitOrders
	return []common.Hash{a.Events["LogExerciseOrderFilled"].ID, a.Events["LogPurchasedOrderFilled"].ID, a.Events["LogOrderCancelled"].ID}
}

func (r *Reader) sendOrderLogs(ctx context.Context, batch []rpc.BatchElem) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	return r.sendBatch(ctx, batch)
}

func decodeOrderLogs(raw []json.RawMessage) ([]OrderEvent, error) {
	out := make([]OrderEvent, 0, len(raw))
	for _, m := range raw {
		var l types.Log
		if err := json.Unmarshal(m, &l); err != nil {
			return nil, upstreamGarbage(fmt.Errorf("a limit-order log: %w", err))
		}
		ev, err := decodeOrderEvent(l)
		if err != nil {
			return nil, upstreamGarbage(err)
		}
		out = append(out, ev)
	}
	return out, nil
}

func decodeOrderEvent(l types.Log) (OrderEvent, error) {
	if len(l.Topics) == 0 {
		return OrderEvent{}, fmt.Errorf("log without topics")
	}
	ev, err := contracts.LimitOrders.EventByID(l.Topics[0])
	if err != nil {
		return OrderEvent{}, err
	}
	o, err := contracts.UnpackLimitOrderLog(ev.Name, l.Data)
	if err != nil {
		return OrderEvent{}, err
	}
	out := OrderEvent{Event: ev.Name, Order: o, Block: l.BlockNumber, Tx: l.TxHash}
	if ev.Name != "LogOrderCancelled" {
		vals, err := ev.Inputs.Unpack(l.Data)
		if err != nil || len(vals) != 3 {
			return OrderEvent{}, fmt.Errorf("%s: %v", ev.Name, err)
		}
		out.Commission, _ = vals[1].(*big.Int)
		out.Executor, _ = vals[2].(common.Address)
	}
	return out, nil
}
