package indexertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/jsonrpc"
)

// refScale is the scale node as it served before its answers were
// hand-encoded (reflection over maps and go-ethereum's types, the
// envelope through jsonrpc.Handler): the reference its serving is
// checked against, byte for byte.
type refScale struct{ *Scale }

func (s refScale) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

func (s refScale) dispatch(q request) (any, *rpcError) {
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

func (s refScale) getLogs(f logFilter) (any, *rpcError) {
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

func (s refScale) getBlock(q request, param func(int, any) *rpcError) (any, *rpcError) {
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

func (s refScale) block(n uint64, full bool) map[string]any {
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

func (s refScale) receipts(n uint64) []map[string]any {
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

func (s refScale) receiptOf(n uint64, i int, t *Tx, all []types.Log) map[string]any {
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

func (s refScale) receipt(h common.Hash) any {
	n, i, ok := s.txOf(h)
	if !ok {
		return nil
	}
	return s.receiptOf(n, i, s.txs(n, true)[i], s.logsOf(n, true))
}

func (s refScale) call(q request, param func(int, any) *rpcError) (any, *rpcError) {
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
