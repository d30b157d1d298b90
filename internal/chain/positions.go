package chain

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// pageLegs is how many opTickMap entries the bulk read asks for per option
// before it knows its length: fewer than Position's, since a page reads
// hundreds of options and each speculative read is gas in the node's
// eth_call cap. An option with more legs costs one more round for the page.
const pageLegs = 4

// positionsPerCall bounds the options one aggregate3 reads: each costs
// about 2+pageLegs storage reads; 64 of them stay well under the gas cap
// nodes put on eth_call (50M by default on geth).
const positionsPerCall = 64

// PositionResult is one option of a bulk read: its position, or why it
// could not be read (OPTION_NOT_FOUND for a burnt or unknown id).
type PositionResult struct {
	Position *Position
	Err      error
}

// Positions reads many options of one market in one JSON-RPC round trip:
// aggregate3 calls of up to positionsPerCall options each, sent as one
// JSON-RPC batch (the market's name and the block timestamp read once per
// call). Options with more than pageLegs legs cost one more round trip for
// the whole page. An error of the round trip fails the whole read; an
// option's own failure is its result's Err.
func (r *Reader) Positions(ctx context.Context, market common.Address, ids []*big.Int) ([]PositionResult, error) {
	out := make([]PositionResult, len(ids))
	m := contracts.OptionMarketV2
	var batches [][]Call
	for start := 0; start < len(ids); start += positionsPerCall {
		chunk := ids[start:min(start+positionsPerCall, len(ids))]
		calls := []Call{{market, pack(m, "name")}, {r.multicall, pack(contracts.Multicall3, "getCurrentBlockTimestamp")}}
		for _, id := range chunk {
			calls = append(calls, Call{market, pack(m, "ownerOf", id)}, Call{market, pack(m, "opData", id)})
			for i := range pageLegs {
				calls = append(calls, Call{market, pack(m, "opTickMap", id, big.NewInt(int64(i)))})
			}
		}
		batches = append(batches, calls)
	}
	res, err := r.aggregateBatch(ctx, batches)
	if err != nil {
		return nil, err
	}
	var more [][]Call
	var moreIdx []int
	for b, calls := range res {
		name, ts := calls[0], calls[1]
		for j := range (len(calls) - 2) / (2 + pageLegs) {
			i, at := b*positionsPerCall+j, 2+j*(2+pageLegs)
			p, err := decodePosition(market, ids[i], positionReads{calls[at], calls[at+1], name, ts, calls[at+2 : at+2+pageLegs]})
			out[i] = PositionResult{Position: p, Err: err}
			if err == nil && p.Version == MarketV2 && uint64(len(p.Legs)) < p.Data.OpTickArrayLen {
				more, moreIdx = append(more, moreLegCalls(market, ids[i], p.Data.OpTickArrayLen, pageLegs)), append(moreIdx, i)
			}
		}
	}
	if len(more) == 0 {
		return out, nil
	}
	extra, err := r.aggregateBatch(ctx, more)
	if err != nil {
		return nil, err
	}
	for k, i := range moreIdx {
		if err := out[i].Position.addLegs(ids[i], pageLegs, extra[k]); err != nil {
			out[i] = PositionResult{Err: err}
		}
	}
	return out, nil
}

// aggregateBatch runs several aggregate3 calls in one JSON-RPC batch (one
// HTTP round trip), or one after another on a caller that cannot batch.
func (r *Reader) aggregateBatch(ctx context.Context, batches [][]Call) ([][]Result, error) {
	bc, ok := r.rpc.(batchCaller)
	if !ok || len(batches) <= 1 { // an empty JSON-RPC batch is an invalid request
		out := make([][]Result, len(batches))
		for i, calls := range batches {
			res, err := r.AggregateResults(ctx, calls)
			if err != nil {
				return nil, err
			}
			out[i] = res
		}
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	at, err := r.blockParam(ctx)
	if err != nil {
		return nil, err
	}
	raws := make([]hexutil.Bytes, len(batches))
	elems := make([]rpc.BatchElem, len(batches))
	for i, calls := range batches {
		data, err := packAggregate(calls)
		if err != nil {
			return nil, err
		}
		elems[i] = rpc.BatchElem{Method: "eth_call", Result: &raws[i],
			Args: []any{map[string]any{"to": r.multicall, "data": hexutil.Bytes(data)}, at}}
	}
	if err := bc.BatchCallContext(ctx, elems); err != nil {
		return nil, classify(err)
	}
	out := make([][]Result, len(batches))
	for i, el := range elems {
		if el.Error != nil {
			return nil, classify(el.Error)
		}
		res, err := unpackAggregate(raws[i], len(batches[i]))
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	return out, nil
}
