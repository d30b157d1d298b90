package indexertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/jsonrpc"
)

// rpcError is a JSON-RPC error object.
type rpcError = jsonrpc.Error

type request = jsonrpc.Request

// FullBlocks is what Calls counts eth_getBlockByNumber with the
// transactions under (they are also counted as eth_getBlockByNumber).
const FullBlocks = "eth_getBlockByNumber(full)"

// ServeHTTP answers JSON-RPC over HTTP: one call or a batch. Each HTTP
// request is counted once (Requests), under the methods it carried.
func (c *Chain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var carried []string
	n, receipts := 0, 0
	defer func() { c.countRequest(carried, n) }()
	jsonrpc.Handler(func(_ *http.Request, q request) jsonrpc.Response {
		c.count(q.Method)
		n++
		if !slices.Contains(carried, q.Method) {
			carried = append(carried, q.Method)
		}
		if q.Method == "eth_getBlockReceipts" && !c.NoBlockReceipts {
			if receipts++; c.MaxBatchReceipts > 0 && receipts > c.MaxBatchReceipts {
				return jsonrpc.Answer(q, nil, &rpcError{Code: -32003, Message: "response too large"})
			}
		}
		if full := false; q.Method == "eth_getBlockByNumber" && len(q.Params) > 1 && json.Unmarshal(q.Params[1], &full) == nil && full {
			c.count(FullBlocks)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		result, e := c.dispatch(q)
		return jsonrpc.Answer(q, result, e)
	}).ServeHTTP(w, r)
}

// paramsOf reads q's i-th parameter into v, refusing a missing or
// malformed one as a node does (-32602); both synthetic nodes use it.
func paramsOf(q request) func(i int, v any) *rpcError {
	return func(i int, v any) *rpcError {
		if i >= len(q.Params) || json.Unmarshal(q.Params[i], v) != nil {
			return &rpcError{Code: -32602, Message: fmt.Sprintf("invalid argument %d", i)}
		}
		return nil
	}
}

func (c *Chain) dispatch(q request) (any, *rpcError) {
	param := paramsOf(q)
	switch q.Method {
	case "eth_chainId":
		return hexutil.Uint64(c.ID), nil
	case "eth_blockNumber":
		return hexutil.Uint64(c.head), nil
	case "eth_getLogs":
		var f logFilter
		if e := param(0, &f); e != nil {
			return nil, e
		}
		return c.getLogs(f)
	case "eth_getBlockByNumber", "eth_getBlockByHash":
		return c.getBlock(q, param)
	case "eth_getBlockReceipts":
		if c.NoBlockReceipts {
			return nil, &rpcError{Code: -32601, Message: "the method eth_getBlockReceipts does not exist/is not available"}
		}
		var n hexutil.Uint64
		if e := param(0, &n); e != nil {
			return nil, e
		}
		return c.receipts(uint64(n)), nil
	case "eth_getTransactionReceipt":
		var h common.Hash
		if e := param(0, &h); e != nil {
			return nil, e
		}
		return c.receipt(h), nil
	case "eth_call":
		return c.call(q, param)
	}
	return nil, &rpcError{Code: -32601, Message: "the method " + q.Method + " does not exist/is not available"}
}

type logFilter struct {
	FromBlock *hexutil.Uint64 `json:"fromBlock"`
	ToBlock   *hexutil.Uint64 `json:"toBlock"`
	BlockHash *common.Hash    `json:"blockHash"`
	Address   []common.Address
	Topics    [][]common.Hash
}

func (f *logFilter) UnmarshalJSON(b []byte) error {
	var raw struct {
		FromBlock *hexutil.Uint64   `json:"fromBlock"`
		ToBlock   *hexutil.Uint64   `json:"toBlock"`
		BlockHash *common.Hash      `json:"blockHash"`
		Address   json.RawMessage   `json:"address"`
		Topics    []json.RawMessage `json:"topics"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	f.FromBlock, f.ToBlock, f.BlockHash = raw.FromBlock, raw.ToBlock, raw.BlockHash
	if len(raw.Address) > 0 && raw.Address[0] == '[' {
		if err := json.Unmarshal(raw.Address, &f.Address); err != nil {
			return err
		}
	} else if len(raw.Address) > 0 && string(raw.Address) != "null" {
		var a common.Address
		if err := json.Unmarshal(raw.Address, &a); err != nil {
			return err
		}
		f.Address = []common.Address{a}
	}
	for _, t := range raw.Topics {
		var set []common.Hash
		if len(t) > 0 && t[0] == '[' {
			if err := json.Unmarshal(t, &set); err != nil {
				return err
			}
		} else if string(t) != "null" {
			var h common.Hash
			if err := json.Unmarshal(t, &h); err != nil {
				return err
			}
			set = []common.Hash{h}
		}
		f.Topics = append(f.Topics, set)
	}
	return nil
}

func (f *logFilter) match(lg logLike) bool { return f.matches(lg.address(), lg.topics()) }

// matches reports whether a log of address a and topics ts passes f.
func (f *logFilter) matches(a common.Address, ts []common.Hash) bool {
	if len(f.Address) > 0 && !hasAddress(f.Address, a) {
		return false
	}
	for i, set := range f.Topics {
		if len(set) == 0 {
			continue
		}
		if i >= len(ts) || !hasHash(set, ts[i]) {
			return false
		}
	}
	return true
}

type logLike interface {
	address() common.Address
	topics() []common.Hash
}

func hasAddress(list []common.Address, a common.Address) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}

func hasHash(list []common.Hash, h common.Hash) bool {
	for _, x := range list {
		if x == h {
			return true
		}
	}
	return false
}

// getLogs answers a range (or one block's hash) within the node's limits.
func (c *Chain) getLogs(f logFilter) (any, *rpcError) {
	var from, to uint64
	switch {
	case f.BlockHash != nil:
		n, ok := c.number(*f.BlockHash)
		if !ok {
			return nil, &rpcError{Code: -32000, Message: "unknown block"}
		}
		from, to = n, n
	case f.FromBlock != nil && f.ToBlock != nil:
		from, to = uint64(*f.FromBlock), min(uint64(*f.ToBlock), c.head)
	default:
		return nil, &rpcError{Code: -32602, Message: "fromBlock and toBlock, or blockHash"}
	}
	if c.MaxRange > 0 && to >= from && to-from+1 > c.MaxRange {
		return nil, &rpcError{Code: -32600, Message: fmt.Sprintf("eth_getLogs is limited to a %d range", c.MaxRange)}
	}
	out := []json.RawMessage{}
	i := sort.Search(len(c.sorted), func(i int) bool { return c.sorted[i] >= from })
	for ; i < len(c.sorted) && c.sorted[i] <= to; i++ {
		for _, lg := range c.logsOf(c.sorted[i]) {
			if f.match(wrapped{lg.Address, lg.Topics}) {
				raw, _ := json.Marshal(lg)
				out = append(out, raw)
			}
		}
		if c.MaxLogs > 0 && len(out) > c.MaxLogs {
			return nil, &rpcError{Code: -32005, Message: fmt.Sprintf("query returned more than %d results", c.MaxLogs)}
		}
	}
	return out, nil
}

type wrapped struct {
	a common.Address
	t []common.Hash
}

func (w wrapped) address() common.Address { return w.a }
func (w wrapped) topics() []common.Hash   { return w.t }

func (c *Chain) getBlock(q request, param func(int, any) *rpcError) (any, *rpcError) {
	var n uint64
	if q.Method == "eth_getBlockByHash" {
		var h common.Hash
		if e := param(0, &h); e != nil {
			return nil, e
		}
		found, ok := c.number(h)
		if !ok {
			return nil, nil
		}
		n = found
	} else {
		var tag string
		if e := param(0, &tag); e != nil {
			return nil, e
		}
		if tag == "latest" {
			n = c.head
		} else {
			v, err := hexutil.DecodeUint64(tag)
			if err != nil {
				return nil, &rpcError{Code: -32602, Message: "block number"}
			}
			n = v
		}
	}
	var full bool
	_ = param(1, &full)
	if n > c.head {
		return nil, nil
	}
	return c.block(n, full), nil
}

func (c *Chain) block(n uint64, full bool) map[string]any {
	bh := c.hash(n)
	parent := common.Hash{}
	if n > 0 {
		parent = c.hash(n - 1)
	}
	txs := []any{}
	for i, t := range c.txs[n] {
		h := txHash(bh, i)
		if !full {
			txs = append(txs, h)
			continue
		}
		to := t.To
		txs = append(txs, map[string]any{"hash": h, "from": t.From, "to": &to, "input": hexutil.Bytes{},
			"transactionIndex": hexutil.Uint64(i), "blockHash": bh, "blockNumber": hexutil.Uint64(n)})
	}
	return map[string]any{"number": hexutil.Uint64(n), "hash": bh, "parentHash": parent, "timestamp": hexutil.Uint64(Time(n)),
		"transactions": txs, "logsBloom": c.bloom(n)}
}

// bloom is block n's logsBloom: its logs' addresses and topics, as a
// node computes it.
func (c *Chain) bloom(n uint64) types.Bloom {
	var b types.Bloom
	for _, lg := range c.logsOf(n) {
		b.Add(lg.Address.Bytes())
		for _, t := range lg.Topics {
			b.Add(t.Bytes())
		}
	}
	return b
}

func (c *Chain) receipts(n uint64) []map[string]any {
	out := []map[string]any{}
	for i := range c.txs[n] {
		out = append(out, c.receiptOf(n, i))
	}
	return out
}

func (c *Chain) receiptOf(n uint64, i int) map[string]any {
	bh := c.hash(n)
	var logs []json.RawMessage
	for _, lg := range c.logsOf(n) {
		if lg.TxIndex == uint(i) {
			raw, _ := json.Marshal(lg)
			logs = append(logs, raw)
		}
	}
	if logs == nil {
		logs = []json.RawMessage{}
	}
	t := c.txs[n][i]
	return map[string]any{"transactionHash": txHash(bh, i), "transactionIndex": hexutil.Uint64(i), "blockHash": bh,
		"blockNumber": hexutil.Uint64(n), "from": t.From, "to": t.To, "cumulativeGasUsed": "0x0", "gasUsed": "0x0",
		"contractAddress": nil, "logs": logs, "logsBloom": hexutil.Bytes(make([]byte, 256)), "status": "0x1", "type": "0x2",
		"effectiveGasPrice": "0x0"}
}

func (c *Chain) receipt(h common.Hash) any {
	for _, n := range c.sorted {
		bh := c.hash(n)
		for i := range c.txs[n] {
			if txHash(bh, i) == h {
				return c.receiptOf(n, i)
			}
		}
	}
	return nil
}

func (c *Chain) call(q request, param func(int, any) *rpcError) (any, *rpcError) {
	var msg struct {
		To   common.Address `json:"to"`
		Data hexutil.Bytes  `json:"data"`
	}
	if e := param(0, &msg); e != nil {
		return nil, e
	}
	var at map[string]json.RawMessage
	var n uint64
	if param(1, &at) == nil && at["blockHash"] != nil {
		var h common.Hash
		_ = json.Unmarshal(at["blockHash"], &h)
		found, ok := c.number(h)
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
		} else if !strings.EqualFold(tag, "latest") {
			return nil, &rpcError{Code: -32602, Message: "block"}
		} else {
			n = c.head
		}
	}
	if n < c.StateFrom {
		return nil, &rpcError{Code: -32000, Message: fmt.Sprintf("missing trie node %x (path ) state %x is not available", n, n)}
	}
	if c.Call == nil {
		return nil, &rpcError{Code: 3, Message: "execution reverted", Data: "0x"}
	}
	ret, reverted := c.Call(msg.To, msg.Data, n)
	if reverted {
		return nil, &rpcError{Code: 3, Message: "execution reverted", Data: "0x"}
	}
	return hexutil.Bytes(ret), nil
}

// typedReceipt is receiptOf as go-ethereum decodes it.
func (c *Chain) typedReceipt(n uint64, i int) *types.Receipt {
	c.mu.Lock()
	raw, err := json.Marshal(c.receiptOf(n, i))
	c.mu.Unlock()
	if err != nil {
		return nil
	}
	var r types.Receipt
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	return &r
}
