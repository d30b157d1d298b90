package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

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
type OrderState struct {
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
		if out[i], err = decodeOrderState(q, res[at:at+n]); err != nil {
			return 0, nil, err
		}
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
// the contract is read and decoded).
func (r *Reader) OrderEvents(ctx context.Context, contract common.Address, from, to uint64) ([]OrderEvent, error) {
	a := contracts.LimitOrders
	topics := []common.Hash{a.Events["LogExerciseOrderFilled"].ID, a.Events["LogPurchasedOrderFilled"].ID, a.Events["LogOrderCancelled"].ID}
	var logs []types.Log
	q := map[string]any{"address": contract, "fromBlock": hexutil.Uint64(from), "toBlock": hexutil.Uint64(to), "topics": [][]common.Hash{topics}}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.rpc.CallContext(ctx, &logs, "eth_getLogs", q); err != nil {
		return nil, classify(err)
	}
	var out []OrderEvent
	for _, l := range logs {
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
