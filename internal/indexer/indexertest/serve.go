package indexertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// The scale node shares the cores of the indexer it serves in the
// backfill benchmark, where a provider's CPU would be another machine's:
// its serving is made cheap (a strict request reader, answers appended to
// pooled buffers) while every answer stays the bytes it was.

// bufs are request and answer buffers, reused; one grown past maxPooled
// is left to the collector so that a rare large answer is not kept.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooled = 1 << 20

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooled {
		*b = (*b)[:0]
		bufs.Put(b)
	}
}

// readBody reads a request's body into a pooled buffer as io.ReadAll
// would.
func readBody(r *http.Request) (*[]byte, error) {
	p := bufs.Get().(*[]byte)
	b := (*p)[:0]
	if n := r.ContentLength; n > 0 && n < maxPooled {
		b = slices.Grow(b, int(n)+1)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			*p = b
			return p, err
		}
	}
	*p = b
	return p, nil
}

// ServeHTTP answers JSON-RPC over HTTP: one call or a batch, each HTTP
// request counted once under the methods it carried.
func (s *Scale) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	defer putBuf(body)
	if err != nil {
		refuse(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	qs, batch, err := readRequests(*body)
	if err != nil {
		refuse(w, err)
		return
	}
	out := bufs.Get().(*[]byte)
	defer putBuf(out)
	b := (*out)[:0]
	if batch {
		b = append(b, '[')
	}
	var carried []string
	for i := range qs {
		if i > 0 {
			b = append(b, ',')
		}
		s.add(&s.counts, qs[i].Method)
		if !slices.Contains(carried, qs[i].Method) {
			carried = append(carried, qs[i].Method)
		}
		b = s.answer(b, qs[i])
	}
	if batch {
		b = append(b, ']')
	}
	b = append(b, '\n')
	*out = b
	if len(carried) > 0 {
		slices.Sort(carried)
		s.add(&s.requests, strings.Join(carried, "+"))
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// answer appends q's response object: its result, or its error.
func (s *Scale) answer(b []byte, q request) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, q.ID)
	mark := len(b)
	b = append(b, `,"result":`...)
	b, e := s.result(b, q)
	if e != nil {
		b = append(b[:mark], `,"error":`...)
		b = appendError(b, e)
	}
	return append(b, '}')
}

func invalidArgument(i int) *rpcError {
	return &rpcError{Code: -32602, Message: fmt.Sprintf("invalid argument %d", i)}
}

// unmarshalParam reads q's i-th parameter into v: what json.Unmarshal
// does for a type of its own decoding (it hands the value's bytes to
// UnmarshalJSON, null included), without its reflection.
func unmarshalParam(q request, i int, v json.Unmarshaler) *rpcError {
	if i >= len(q.Params) || v.UnmarshalJSON(q.Params[i]) != nil {
		return invalidArgument(i)
	}
	return nil
}

// stringParam is q's i-th parameter as a string: a plain one read in
// place, any other as encoding/json reads it.
func stringParam(q request, i int) (string, *rpcError) {
	if i < len(q.Params) {
		p := q.Params[i]
		if len(p) >= 2 && p[0] == '"' && plainASCII(p[1:len(p)-1]) && bytes.IndexByte(p[1:len(p)-1], '\\') < 0 {
			return string(p[1 : len(p)-1]), nil
		}
	}
	var v string
	e := paramsOf(q)(i, &v)
	return v, e
}

// boolParam is q's i-th parameter as a bool, as encoding/json reads it.
func boolParam(q request, i int) (bool, *rpcError) {
	if i < len(q.Params) {
		switch string(q.Params[i]) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	var v bool
	e := paramsOf(q)(i, &v)
	return v, e
}

// result appends q's result, or returns its error.
func (s *Scale) result(b []byte, q request) ([]byte, *rpcError) {
	switch q.Method {
	case "eth_chainId":
		return appendQuantity(b, s.ID), nil
	case "eth_blockNumber":
		return appendQuantity(b, s.Head), nil
	case "eth_getLogs":
		f, e := filterParam(q)
		if e != nil {
			return b, e
		}
		return s.appendLogs(b, f)
	case "eth_getBlockByNumber", "eth_getBlockByHash":
		return s.appendBlock(b, q)
	case "eth_getBlockReceipts":
		var n hexutil.Uint64
		if e := unmarshalParam(q, 0, &n); e != nil {
			return b, e
		}
		return s.appendReceipts(b, uint64(n)), nil
	case "eth_getTransactionReceipt":
		var h common.Hash
		if e := unmarshalParam(q, 0, &h); e != nil {
			return b, e
		}
		return s.appendTxReceipt(b, h), nil
	case "eth_call":
		return s.call(b, q)
	}
	return b, &rpcError{Code: -32601, Message: "the method " + q.Method + " does not exist/is not available"}
}

// logRange is the blocks a filter asks (or its error).
func (s *Scale) logRange(f logFilter) (from, to uint64, e *rpcError) {
	switch {
	case f.BlockHash != nil:
		n, ok := s.number(*f.BlockHash)
		if !ok {
			return 0, 0, &rpcError{Code: -32000, Message: "unknown block"}
		}
		from, to = n, n
	case f.FromBlock != nil && f.ToBlock != nil:
		from, to = uint64(*f.FromBlock), min(uint64(*f.ToBlock), s.Head)
	default:
		return 0, 0, &rpcError{Code: -32602, Message: "fromBlock and toBlock, or blockHash"}
	}
	if s.MaxRange > 0 && to >= from && to-from+1 > s.MaxRange {
		return 0, 0, &rpcError{Code: -32600, Message: fmt.Sprintf("eth_getLogs is limited to a %d range", s.MaxRange)}
	}
	return from, to, nil
}

// appendLogs answers a range (or one block's hash) within the node's caps.
func (s *Scale) appendLogs(b []byte, f logFilter) ([]byte, *rpcError) {
	from, to, e := s.logRange(f)
	if e != nil {
		return b, e
	}
	b = append(b, '[')
	if to < from {
		return append(b, ']'), nil
	}
	swaps, count := s.asksPools(f), 0
	for _, n := range s.blocksWithTxs(from, to, swaps) {
		logs := s.logsOf(n, swaps)
		for k := range logs {
			if !f.matches(logs[k].Address, logs[k].Topics) {
				continue
			}
			if count > 0 {
				b = append(b, ',')
			}
			b = appendLog(b, &logs[k])
			count++
		}
		if s.MaxLogs > 0 && count > s.MaxLogs {
			return b, &rpcError{Code: -32005, Message: fmt.Sprintf("query returned more than %d results", s.MaxLogs)}
		}
	}
	return append(b, ']'), nil
}

// blockOf is the block q asks by number or hash: ok false answers null.
func (s *Scale) blockOf(q request) (n uint64, ok bool, e *rpcError) {
	if q.Method == "eth_getBlockByHash" {
		var h common.Hash
		if e := unmarshalParam(q, 0, &h); e != nil {
			return 0, false, e
		}
		n, ok = s.number(h)
		return n, ok, nil
	}
	tag, e := stringParam(q, 0)
	if e != nil {
		return 0, false, e
	}
	switch v, err := hexutil.DecodeUint64(tag); {
	case tag == "latest" || tag == "finalized" || tag == "safe":
		return s.Head, true, nil
	case err != nil:
		return 0, false, &rpcError{Code: -32602, Message: "block number"}
	default:
		return v, true, nil
	}
}

// appendBlock answers eth_getBlockByNumber and eth_getBlockByHash: the
// block (its keys sorted, as encoding/json writes a map), or null.
func (s *Scale) appendBlock(b []byte, q request) ([]byte, *rpcError) {
	n, ok, e := s.blockOf(q)
	if e != nil {
		return b, e
	}
	full, _ := boolParam(q, 1)
	if !ok || n > s.Head {
		return append(b, "null"...), nil
	}
	bh := s.Hash(n)
	parent := common.Hash{}
	if n > 0 {
		parent = s.Hash(n - 1)
	}
	b = append(b, `{"hash":`...)
	b = appendHex(b, bh[:])
	b = append(b, `,"number":`...)
	b = appendQuantity(b, n)
	b = append(b, `,"parentHash":`...)
	b = appendHex(b, parent[:])
	b = append(b, `,"timestamp":`...)
	b = appendQuantity(b, s.Time(n))
	b = append(b, `,"transactions":[`...)
	for i, t := range s.heads(n) {
		if i > 0 {
			b = append(b, ',')
		}
		if full {
			b = appendTx(b, blockRef{n, bh}, i, t)
			continue
		}
		b = appendHex(b, t.hash[:])
	}
	return append(b, "]}"...), nil
}

// appendReceipts appends block n's receipts (none past the head).
func (s *Scale) appendReceipts(b []byte, n uint64) []byte {
	b = append(b, '[')
	if n <= s.Head {
		bh := s.Hash(n)
		logs := s.logsOf(n, true)
		for i, t := range s.heads(n) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendReceipt(b, blockRef{n, bh}, i, t, logs)
		}
	}
	return append(b, ']')
}

// appendTxReceipt appends a transaction's receipt by its hash, or null.
func (s *Scale) appendTxReceipt(b []byte, h common.Hash) []byte {
	n, i, ok := s.txOf(h)
	if !ok {
		return append(b, "null"...)
	}
	return appendReceipt(b, blockRef{n, s.Hash(n)}, i, s.heads(n)[i], s.logsOf(n, true))
}

var reverted = &rpcError{Code: 3, Message: "execution reverted", Data: "0x"}

// call answers eth_call by s.Call at the block asked (by hash, number or
// tag; the head if none is read).
func (s *Scale) call(b []byte, q request) ([]byte, *rpcError) {
	to, data, e := callMsg(q)
	if e != nil {
		return b, e
	}
	n, e := s.callBlock(q)
	if e != nil {
		return b, e
	}
	if s.Call == nil {
		return b, reverted
	}
	ret, rev := s.Call(to, data, n)
	if rev {
		return b, reverted
	}
	return appendHex(b, ret), nil
}

// callMsg reads eth_call's message (its to and data; other fields are
// not read): an object of plain keys in place, matched as encoding/json
// matches a struct's fields (case folded, the last one winning), any
// other as encoding/json reads it.
func callMsg(q request) (common.Address, []byte, *rpcError) {
	var msg struct {
		To   common.Address `json:"to"`
		Data hexutil.Bytes  `json:"data"`
	}
	if len(q.Params) > 0 && q.Params[0][0] == '{' {
		failed := false
		end := skipObject(q.Params[0], 0, 1, func(k, v []byte) bool {
			var err error
			switch {
			case !plainASCII(k):
				return false
			case failed:
			case bytes.EqualFold(k, []byte("to")):
				err = msg.To.UnmarshalJSON(v)
			case bytes.EqualFold(k, []byte("data")):
				err = msg.Data.UnmarshalJSON(v)
			}
			failed = failed || err != nil
			return true
		})
		if end >= 0 && failed {
			return msg.To, nil, invalidArgument(0)
		}
		if end >= 0 {
			return msg.To, msg.Data, nil
		}
		msg.To, msg.Data = common.Address{}, nil
	}
	if e := paramsOf(q)(0, &msg); e != nil {
		return msg.To, nil, e
	}
	return msg.To, msg.Data, nil
}

// callBlock is the block eth_call asks: an object naming a blockHash
// (found, or "header for hash not found"), else a number (a tag or
// anything else not a number: the head).
func (s *Scale) callBlock(q request) (uint64, *rpcError) {
	var at []byte
	found := false
	if len(q.Params) > 1 && q.Params[1][0] == '{' {
		end := skipObject(q.Params[1], 0, 1, func(k, v []byte) bool {
			if string(k) == "blockHash" {
				at = v
			}
			return true
		})
		found = end >= 0
	}
	if !found && len(q.Params) > 1 && q.Params[1][0] == '{' {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(q.Params[1], &m)
		at = m["blockHash"]
	}
	if at != nil {
		var h common.Hash
		_ = h.UnmarshalJSON(at)
		n, ok := s.number(h)
		if !ok {
			return 0, &rpcError{Code: -32000, Message: "header for hash not found"}
		}
		return n, nil
	}
	tag, e := stringParam(q, 1)
	if e != nil {
		return 0, e
	}
	if v, err := hexutil.DecodeUint64(tag); err == nil {
		return v, nil
	}
	return s.Head, nil
}
