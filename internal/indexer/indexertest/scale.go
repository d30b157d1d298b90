package indexertest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/jsonrpc"
)

// Scale is a synthetic history at a real chain's scale whose blocks and
// logs are computed from their numbers when asked, never held: a first
// market Span blocks before the head, BlocksPerSecond blocks a second,
// Events protocol events spread evenly over the span (one every
// Span/Events blocks, a transaction of one log or two) across the
// markets' handlers, and each market's pool swapping
// SwapsPerDay times a day over the same span. A history of 220 million
// blocks and 38 million swaps costs a few kilobytes; what a node answers
// is the same at every ask (hashes, timestamps, logs, receipts).
//
// The protocol's logs are a handler's, in cycles of five per range and
// user, a cycle's five on one market, the markets in turn: a deposit (LogMintedPosition), a purchase (LogUsePosition with
// its premium's LogDonation), an exercise and a settlement (each a
// LogUnusePosition: the liquidity an option gives back to the range) and
// a withdrawal (LogBurnedPosition of part of the deposit); a cycle's
// range is one of Ranges and its user one of Users. The markets' own
// logs (LogMintOption, LogExerciseOption, LogSettleOption) are not
// generated: their handlers read the market's option data by eth_call,
// which this node does not model.
type Scale struct {
	ID uint64
	// Head is the head block; First = Head - Span is the first market's.
	Head, Span uint64
	// BlocksPerSecond sets the timestamps: block n is at Genesis +
	// n/BlocksPerSecond.
	BlocksPerSecond uint64
	Genesis         uint64
	// Events is the number of protocol events; Users and Ranges how many
	// distinct users and ranges (per market) they cycle through.
	Events, Users, Ranges uint64
	// SwapsPerDay is how often each market's pool swaps (0: never).
	SwapsPerDay uint64
	// Markets are the handlers (each over its own pool) the events go to
	// in turn.
	Markets []*Handler
	// MaxLogs and MaxRange are the node's caps on one eth_getLogs answer
	// and range (refused with the providers' errors).
	MaxLogs  int
	MaxRange uint64
	// Call answers eth_call (to, calldata, block number); nil reverts all.
	Call func(to common.Address, data []byte, block uint64) ([]byte, bool)

	counts   sync.Map // method -> *atomic.Int64
	requests sync.Map // methods -> *atomic.Int64

	// recent are the protocol transactions computed lately, by event
	// index modulo its size: a block is asked for its logs, then whole,
	// then for its receipts, each computing its transaction (ABI packing
	// its logs) anew. Bounded: a cache, never what an answer depends on.
	recentMu sync.Mutex
	recent   [4096]struct {
		i  uint64
		tx *Tx
	}
}

// ArbitrumScale is the history: a first market 220 million blocks
// before the head at four blocks a second, 1,000,000 protocol events over
// 20,000 users and 50 ranges a market, each market's pool swapping 60,000
// times a day, behind a provider's caps (10,000 logs an answer, 10,000
// blocks a range). scale divides the events and the span (1: the full
// history); the density of events and swaps per block is kept.
func ArbitrumScale(id uint64, markets []*Handler, scale uint64) *Scale {
	span := 220_000_000 / scale
	return &Scale{ID: id, Head: 300_000_000, Span: span, BlocksPerSecond: 4, Genesis: 1_622_000_000,
		Events: 1_000_000 / scale, Users: 20_000, Ranges: 50, SwapsPerDay: 60_000, Markets: markets,
		MaxLogs: 10_000, MaxRange: 10_000}
}

// First is the block of the first market (the first protocol event is in
// the block after it).
func (s *Scale) First() uint64 { return s.Head - s.Span }

// Time is block n's timestamp.
func (s *Scale) Time(n uint64) uint64 { return s.Genesis + n/s.BlocksPerSecond }

// Hash is block n's hash: a Chain's of the same id before any reorg.
func (s *Scale) Hash(n uint64) common.Hash {
	return (&Chain{ID: s.ID}).hash(n)
}

// eventBlock is the block of protocol event i (0 <= i < Events).
func (s *Scale) eventBlock(i uint64) uint64 { return s.First() + 1 + i*(s.Span-1)/s.Events }

// firstEvent is the first protocol event at block n or later.
func (s *Scale) firstEvent(n uint64) uint64 {
	if n <= s.First()+1 {
		return 0
	}
	d := n - s.First() - 1
	return min(s.Events, (d*s.Events+s.Span-2)/(s.Span-1))
}

// blocksPerDay is how many blocks a day holds.
func (s *Scale) blocksPerDay() uint64 { return 86_400 * s.BlocksPerSecond }

// swapBlock is the block of pool swap j (every pool swaps at the same
// blocks, in market order).
func (s *Scale) swapBlock(j uint64) uint64 { return s.First() + 1 + j*s.blocksPerDay()/s.SwapsPerDay }

// Swaps is how many swaps each pool makes over the span.
func (s *Scale) Swaps() uint64 {
	if s.SwapsPerDay == 0 {
		return 0
	}
	return s.firstSwap(s.Head + 1)
}

// firstSwap is the first swap at block n or later.
func (s *Scale) firstSwap(n uint64) uint64 {
	if s.SwapsPerDay == 0 {
		return 0
	}
	if n <= s.First()+1 {
		return 0
	}
	d := n - s.First() - 1
	return (d*s.SwapsPerDay + s.blocksPerDay() - 1) / s.blocksPerDay()
}

// SwapPrice is pool swap j's sqrtPriceX96 and tick: a walk within 1/16 of
// 2^96 of 2^96, computed from j alone (a hash), so that every swap's
// price is known without the ones before it.
func SwapPrice(j uint64) (*big.Int, int64) {
	h := crypto.Keccak256(binary.BigEndian.AppendUint64([]byte("swap"), j))
	off := new(big.Int).SetBytes(h[:8])
	off.Lsh(off, 28) // up to 2^92 = 2^96/16
	p := new(big.Int).Lsh(big.NewInt(1), 96)
	if h[8]&1 == 1 {
		p.Sub(p, off)
	} else {
		p.Add(p, off)
	}
	return p, int64(h[9]) - 128
}

// SwapAmounts are pool swap j's amount0 and amount1 (one in, one out).
func SwapAmounts(j uint64) (*big.Int, *big.Int) {
	a := int64(j%1000 + 1)
	if j%2 == 0 {
		return big.NewInt(a * 1_000_000_000_000), big.NewInt(-a * 3_000_000)
	}
	return big.NewInt(-a * 1_000_000_000_000), big.NewInt(a * 3_000_000)
}

// user is the address of user u.
func user(u uint64) common.Address {
	return common.BytesToAddress(append([]byte{0x05, 0xca, 0x1e}, binary.BigEndian.AppendUint64(nil, u+1)...))
}

// protocolTx is the transaction of protocol event i (its one or two
// logs), computed or recent; the caller does not change it.
func (s *Scale) protocolTx(i uint64) *Tx {
	s.recentMu.Lock()
	r := &s.recent[i%uint64(len(s.recent))]
	if r.tx != nil && r.i == i {
		defer s.recentMu.Unlock()
		return r.tx
	}
	s.recentMu.Unlock()
	tx := s.computeTx(i)
	s.recentMu.Lock()
	r.i, r.tx = i, tx
	s.recentMu.Unlock()
	return tx
}

// computeTx computes protocol event i's transaction.
func (s *Scale) computeTx(i uint64) *Tx {
	cycle := i / 5
	m := uint64(len(s.Markets))
	h := s.Markets[cycle%m]
	tl := -200_000 + 10*int64(cycle/m%s.Ranges)
	u := user(cycle % s.Users)
	var logs []types.Log
	switch i % 5 {
	case 0:
		logs = []types.Log{h.Mint(u, tl, 1_000_000)}
	case 1:
		logs = []types.Log{h.Use(tl, 10), h.Donate(tl, 1)}
	case 2, 3:
		logs = []types.Log{h.Unuse(tl, 5)}
	default:
		logs = []types.Log{h.Burn(u, tl, 500_000)}
	}
	return &Tx{From: u, To: h.Address, Logs: logs}
}

// swapTx is pool p's swap j.
func (s *Scale) swapTx(p int, j uint64) *Tx {
	h := s.Markets[p]
	sq, tick := SwapPrice(j)
	a0, a1 := SwapAmounts(j)
	u := user(j % s.Users)
	return &Tx{From: u, To: h.Pool, Logs: []types.Log{h.SwapAmounts(u, a0, a1, sq, tick)}}
}

// txs are block n's transactions: its protocol event's, then its pools'
// swaps in market order (without swaps: the protocol one alone).
func (s *Scale) txs(n uint64, swaps bool) []*Tx {
	if n <= s.First() || n > s.Head {
		return nil
	}
	var out []*Tx
	if i := s.firstEvent(n); i < s.Events && s.eventBlock(i) == n {
		out = append(out, s.protocolTx(i))
	}
	if !swaps {
		return out
	}
	if j := s.firstSwap(n); s.SwapsPerDay > 0 && s.swapBlock(j) == n {
		for p := range s.Markets {
			out = append(out, s.swapTx(p, j))
		}
	}
	return out
}

// asksPools reports whether a filter may match a pool's logs: a filter of
// addresses that names no pool is answered without computing the swaps
// (a block's protocol transaction comes first, so its logs' indexes do
// not depend on them), which a node's index of addresses does too.
func (s *Scale) asksPools(f logFilter) bool {
	if len(f.Address) == 0 {
		return true
	}
	for _, h := range s.Markets {
		if slices.Contains(f.Address, h.Pool) {
			return true
		}
	}
	return false
}

// blocksWithTxs are the blocks in [from, to] holding a transaction
// (without swaps: holding a protocol one), ascending.
func (s *Scale) blocksWithTxs(from, to uint64, swaps bool) []uint64 {
	var out []uint64
	for i := s.firstEvent(from); i < s.Events && s.eventBlock(i) <= to; i++ {
		out = append(out, s.eventBlock(i))
	}
	if swaps && s.SwapsPerDay > 0 {
		for j := s.firstSwap(from); s.swapBlock(j) <= min(to, s.Head); j++ {
			out = append(out, s.swapBlock(j))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// logsOf are block n's logs, numbered, with their block and transaction
// (without swaps: its protocol transaction's alone).
func (s *Scale) logsOf(n uint64, swaps bool) []types.Log {
	bh := s.Hash(n)
	var out []types.Log
	for i, t := range s.txs(n, swaps) {
		for _, l := range t.Logs {
			l.BlockNumber, l.BlockHash, l.TxHash, l.TxIndex, l.Index = n, bh, txHash(bh, i), uint(i), uint(len(out))
			l.BlockTimestamp = s.Time(n)
			out = append(out, l)
		}
	}
	return out
}

// Burn is a withdrawal of liquidity from [tl, tl+10) by user.
func (h *Handler) Burn(user common.Address, tl, liquidity int64) types.Log {
	return log(h.handler, "LogBurnedPosition", h.Address, h.ID(tl), big.NewInt(liquidity), h.Pool, h.Hook, user, big.NewInt(tl), big.NewInt(tl+10))
}

// SwapAmounts is a swap of the pool moving amount0 and amount1 (positive
// into the pool) to sqrtPriceX96 at tick.
func (h *Handler) SwapAmounts(user common.Address, amount0, amount1, sqrtPriceX96 *big.Int, tick int64) types.Log {
	ev := h.pool.Events["Swap"]
	for name, e := range h.pool.Events {
		if len(e.Inputs) == 7 { // Uniswap's (Pancake's has two more fields)
			ev = h.pool.Events[name]
		}
	}
	return log(h.pool, ev.Name, h.Pool, user, user, amount0, amount1, sqrtPriceX96, big.NewInt(1000), big.NewInt(tick))
}

// SwapTopic is the topic of the Uniswap V3 Swap event.
func (h *Handler) SwapTopic() common.Hash {
	for _, e := range h.pool.Events {
		if len(e.Inputs) == 7 {
			return e.ID
		}
	}
	return common.Hash{}
}

// Requests is how many HTTP requests the node answered, by the methods
// each carried (sorted, joined with "+"; a batch is one request).
func (s *Scale) Requests() map[string]int64 {
	out := map[string]int64{}
	s.requests.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// Calls is how many calls of method the node answered (each call of a
// batch counted).
func (s *Scale) Calls(method string) int64 {
	v, ok := s.counts.Load(method)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func (s *Scale) add(m *sync.Map, key string) {
	v, _ := m.LoadOrStore(key, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// ServeHTTP answers JSON-RPC over HTTP: one call or a batch, each HTTP
// request counted once under the methods it carried.
func (s *Scale) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var carried []string
	defer func() {
		if len(carried) > 0 {
			slices.Sort(carried)
			s.add(&s.requests, strings.Join(carried, "+"))
		}
	}()
	jsonrpc.Handler(func(_ *http.Request, q request) jsonrpc.Response {
		s.add(&s.counts, q.Method)
		if !slices.Contains(carried, q.Method) {
			carried = append(carried, q.Method)
		}
		result, e := s.dispatch(q)
		return jsonrpc.Answer(q, result, e)
	}).ServeHTTP(w, r)
}

func (s *Scale) dispatch(q request) (any, *rpcError) {
	param := paramsOf(q)
	switch q.Method {
	case "eth_chainId":
		return hexutil.Uint64(s.ID), nil
	case "eth_blockNumber":
		return hexutil.Uint64(s.Head), nil
	case "eth_getLogs":
		var f logFilter
		if e := param(0, &f); e != nil {
			return nil, e
		}
		return s.getLogs(f)
	case "eth_getBlockByNumber", "eth_getBlockByHash":
		return s.getBlock(q, param)
	case "eth_getBlockReceipts":
		var n hexutil.Uint64
		if e := param(0, &n); e != nil {
			return nil, e
		}
		return s.receipts(uint64(n)), nil
	case "eth_getTransactionReceipt":
		var h common.Hash
		if e := param(0, &h); e != nil {
			return nil, e
		}
		return s.receipt(h), nil
	case "eth_call":
		return s.call(q, param)
	}
	return nil, &rpcError{Code: -32601, Message: "the method " + q.Method + " does not exist/is not available"}
}

// number finds the block of a block's hash: the number it carries
// (blockHash), if computing that block's hash gives it back. Nothing
// served is remembered, so a hash is found however long ago it was served.
func (s *Scale) number(h common.Hash) (uint64, bool) {
	n := blockOfHash(h)
	if n > s.Head || s.Hash(n) != h {
		return 0, false
	}
	return n, true
}

// txOf finds the block and index of a transaction's hash (txHash), if the
// block holds that transaction and its hash is h.
func (s *Scale) txOf(h common.Hash) (uint64, int, bool) {
	n, i := txOfHash(h)
	if n > s.Head || txHash(s.Hash(n), i) != h || i >= len(s.txs(n, true)) {
		return 0, 0, false
	}
	return n, i, true
}

// getLogs answers a range (or one block's hash) within the node's caps.
func (s *Scale) getLogs(f logFilter) (any, *rpcError) {
	var from, to uint64
	switch {
	case f.BlockHash != nil:
		n, ok := s.number(*f.BlockHash)
		if !ok {
			return nil, &rpcError{Code: -32000, Message: "unknown block"}
		}
		from, to = n, n
	case f.FromBlock != nil && f.ToBlock != nil:
		from, to = uint64(*f.FromBlock), min(uint64(*f.ToBlock), s.Head)
	default:
		return nil, &rpcError{Code: -32602, Message: "fromBlock and toBlock, or blockHash"}
	}
	if s.MaxRange > 0 && to >= from && to-from+1 > s.MaxRange {
		return nil, &rpcError{Code: -32600, Message: fmt.Sprintf("eth_getLogs is limited to a %d range", s.MaxRange)}
	}
	out := []json.RawMessage{}
	if to < from {
		return out, nil
	}
	swaps := s.asksPools(f)
	for _, n := range s.blocksWithTxs(from, to, swaps) {
		for _, lg := range s.logsOf(n, swaps) {
			if f.match(wrapped{lg.Address, lg.Topics}) {
				raw, _ := json.Marshal(lg)
				out = append(out, raw)
			}
		}
		if s.MaxLogs > 0 && len(out) > s.MaxLogs {
			return nil, &rpcError{Code: -32005, Message: fmt.Sprintf("query returned more than %d results", s.MaxLogs)}
		}
	}
	return out, nil
}

func (s *Scale) getBlock(q request, param func(int, any) *rpcError) (any, *rpcError) {
	var n uint64
	if q.Method == "eth_getBlockByHash" {
		var h common.Hash
		if e := param(0, &h); e != nil {
			return nil, e
		}
		found, ok := s.number(h)
		if !ok {
			return nil, nil
		}
		n = found
	} else {
		var tag string
		if e := param(0, &tag); e != nil {
			return nil, e
		}
		switch v, err := hexutil.DecodeUint64(tag); {
		case tag == "latest" || tag == "finalized" || tag == "safe":
			n = s.Head
		case err != nil:
			return nil, &rpcError{Code: -32602, Message: "block number"}
		default:
			n = v
		}
	}
	var full bool
	_ = param(1, &full)
	if n > s.Head {
		return nil, nil
	}
	return s.block(n, full), nil
}

func (s *Scale) block(n uint64, full bool) map[string]any {
	bh := s.Hash(n)
	parent := common.Hash{}
	if n > 0 {
		parent = s.Hash(n - 1)
	}
	list := s.txs(n, true)
	txs := []any{}
	for i, t := range list {
		h := txHash(bh, i)
		if !full {
			txs = append(txs, h)
			continue
		}
		to := t.To
		txs = append(txs, map[string]any{"hash": h, "from": t.From, "to": &to, "input": hexutil.Bytes{},
			"transactionIndex": hexutil.Uint64(i), "blockHash": bh, "blockNumber": hexutil.Uint64(n)})
	}
	return map[string]any{"number": hexutil.Uint64(n), "hash": bh, "parentHash": parent, "timestamp": hexutil.Uint64(s.Time(n)),
		"transactions": txs}
}

func (s *Scale) receipts(n uint64) []map[string]any {
	out := []map[string]any{}
	if n > s.Head {
		return out
	}
	list := s.txs(n, true)
	logs := s.logsOf(n, true)
	for i, t := range list {
		out = append(out, s.receiptOf(n, i, t, logs))
	}
	return out
}

func (s *Scale) receiptOf(n uint64, i int, t *Tx, all []types.Log) map[string]any {
	bh := s.Hash(n)
	logs := []json.RawMessage{}
	for _, lg := range all {
		if lg.TxIndex == uint(i) {
			raw, _ := json.Marshal(lg)
			logs = append(logs, raw)
		}
	}
	return map[string]any{"transactionHash": txHash(bh, i), "transactionIndex": hexutil.Uint64(i), "blockHash": bh,
		"blockNumber": hexutil.Uint64(n), "from": t.From, "to": t.To, "cumulativeGasUsed": "0x0", "gasUsed": "0x0",
		"contractAddress": nil, "logs": logs, "logsBloom": hexutil.Bytes(make([]byte, 256)), "status": "0x1", "type": "0x2",
		"effectiveGasPrice": "0x0"}
}

func (s *Scale) receipt(h common.Hash) any {
	n, i, ok := s.txOf(h)
	if !ok {
		return nil
	}
	return s.receiptOf(n, i, s.txs(n, true)[i], s.logsOf(n, true))
}

func (s *Scale) call(q request, param func(int, any) *rpcError) (any, *rpcError) {
	var msg struct {
		To   common.Address `json:"to"`
		Data hexutil.Bytes  `json:"data"`
	}
	if e := param(0, &msg); e != nil {
		return nil, e
	}
	var at map[string]json.RawMessage
	n := s.Head
	if param(1, &at) == nil && at["blockHash"] != nil {
		var h common.Hash
		_ = json.Unmarshal(at["blockHash"], &h)
		found, ok := s.number(h)
		if !ok {
			return nil, &rpcError{Code: -32000, Message: "header for hash not found"}
		}
		n = found
	} else {
		var tag string
		if e := param(1, &tag); e != nil {
			return nil, e
		}
		if v, err := hexutil.DecodeUint64(tag); err == nil {
			n = v
		}
	}
	if s.Call == nil {
		return nil, &rpcError{Code: 3, Message: "execution reverted", Data: "0x"}
	}
	ret, reverted := s.Call(msg.To, msg.Data, n)
	if reverted {
		return nil, &rpcError{Code: 3, Message: "execution reverted", Data: "0x"}
	}
	return hexutil.Bytes(ret), nil
}

// Materialize adds the whole history to c, block by block (c's blocks
// keep their own timestamps): what the on-demand answers must equal. It returns the protocol transactions and
// swaps added. For tests of small histories only.
func (s *Scale) Materialize(c *Chain) (protocol, swaps int) {
	for _, n := range s.blocksWithTxs(s.First(), s.Head, true) {
		for _, t := range s.txs(n, true) {
			if t.To == s.Markets[0].Pool || (len(s.Markets) > 1 && t.To == s.Markets[1].Pool) {
				swaps++
			} else {
				protocol++
			}
			c.Add(n, t)
		}
	}
	c.SetHead(s.Head)
	return protocol, swaps
}
