package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// node is the chain's JSON-RPC node as the indexer uses it: a handful of
// methods, each call counted by method (a batch's calls one by one, as
// providers bill them) and each HTTP request once (a batch is one).
type node struct {
	rpc NodeClient
	// timeout bounds each request (a batch is one request).
	timeout time.Duration
	// maxBatch is the most calls one batch request carries (Options.Batch).
	maxBatch int
	counts   *methodCounts
	// The node's capabilities, probed once: noBatch, it refuses JSON-RPC
	// batches (calls are sent one at a time); noBlockReceipts, it has no
	// eth_getBlockReceipts or answers it without the receipts asked.
	noBatch, noBlockReceipts atomic.Bool
	// hasBlockReceipts: the node has answered eth_getBlockReceipts with every
	// receipt asked, so a range may ask them with its blocks (receiptAsk).
	hasBlockReceipts atomic.Bool
	// callRetries are the pauses before an eth_call that failed as a
	// pruned node's does is asked again: a provider's backend that has not
	// seen the block yet answers so too, once.
	callRetries []time.Duration
}

// callRetries are node.callRetries by default: about 4 s in all.
var callRetries = []time.Duration{250 * time.Millisecond, time.Second, 2500 * time.Millisecond}

// The methods the indexer calls, in the order /metrics lists them.
var methods = []string{"eth_chainId", "eth_blockNumber", "eth_getLogs", "eth_getBlockByNumber", "eth_getBlockByHash",
	"eth_getBlockReceipts", "eth_getTransactionReceipt", "eth_call"}

// methodCounts counts calls by method, and the requests that carried them.
type methodCounts struct {
	n        [8]atomic.Int64
	requests atomic.Int64
}

func (m *methodCounts) add(method string, k int) {
	for i, name := range methods {
		if name == method {
			m.n[i].Add(int64(k))
		}
	}
}

// snapshot returns the counts by method.
func (m *methodCounts) snapshot() map[string]int64 {
	out := map[string]int64{}
	for i, name := range methods {
		out[name] = m.n[i].Load()
	}
	return out
}

func (n *node) call(ctx context.Context, out any, method string, args ...any) error {
	n.counts.add(method, 1)
	n.counts.requests.Add(1)
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	return n.rpc.CallContext(ctx, out, method, args...)
}

// batch sends calls as JSON-RPC batches of at most maxBatch calls each
// (providers refuse larger batches, or answers too large), one after the
// other; the first failed call's error is returned (every call must
// succeed).
func (n *node) batch(ctx context.Context, calls []rpc.BatchElem) error {
	for len(calls) > 0 {
		k := min(len(calls), max(n.maxBatch, 1))
		if err := n.sendSplitting(ctx, calls[:k]); err != nil {
			return err
		}
		calls = calls[k:]
	}
	return nil
}

// sendSplitting sends calls as one batch and, when the node refuses it or
// answers some of it with an error, again as two halves, down to single
// calls: geth answers the calls of a batch past 25 MB of answers with
// -32003 "response too large", and a block's receipts on an L2 can be
// megabytes, so a batch the node cannot answer whole costs round trips,
// never the range. A missing method (the caller falls back) and an ended
// context are returned at once; a call that fails alone fails the batch.
func (n *node) sendSplitting(ctx context.Context, calls []rpc.BatchElem) error {
	err := n.send(ctx, calls)
	if err == nil || len(calls) == 1 || methodMissing(err) || ctx.Err() != nil {
		return err
	}
	for i := range calls {
		calls[i].Error = nil
	}
	half := len(calls) / 2
	if err := n.sendSplitting(ctx, calls[:half]); err != nil {
		return err
	}
	return n.sendSplitting(ctx, calls[half:])
}

// send sends calls as one batch request; a batch of one, or every call
// to a node that refuses batches, as single calls (a batch of one is still
// a JSON array, which such a node refuses).
func (n *node) send(ctx context.Context, calls []rpc.BatchElem) error {
	if len(calls) == 1 || n.noBatch.Load() {
		for _, c := range calls {
			if err := n.call(ctx, c.Result, c.Method, c.Args...); err != nil {
				return fmt.Errorf("%s%v: %w", c.Method, c.Args, err)
			}
		}
		return nil
	}
	for _, c := range calls {
		n.counts.add(c.Method, 1)
	}
	n.counts.requests.Add(1)
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	if err := n.rpc.BatchCallContext(ctx, calls); err != nil {
		return err
	}
	for _, c := range calls {
		if c.Error != nil {
			return fmt.Errorf("%s%v: %w", c.Method, c.Args, c.Error)
		}
	}
	return nil
}

// probe asks the node's chain id, in a batch of two calls (with
// eth_blockNumber): a node that answers the batch otherwise than with
// answers (an error object, "batch requests are not supported") but
// answers the call alone refuses batches, and is sent every call alone
// from then on. A transport failure (refused, timed out, 429 or 5xx) is
// returned: the probe is tried again, nothing concluded.
func (n *node) probe(ctx context.Context) (chainID uint64, batches bool, err error) {
	var id, head hexutil.Uint64
	calls := []rpc.BatchElem{{Method: "eth_chainId", Result: &id}, {Method: "eth_blockNumber", Result: &head}}
	err = n.send(ctx, calls)
	if err == nil {
		return uint64(id), true, nil
	}
	if transportFailed(err) || ctx.Err() != nil {
		return 0, false, err
	}
	if err := n.call(ctx, &id, "eth_chainId"); err != nil {
		return 0, false, err
	}
	n.noBatch.Store(true)
	return uint64(id), false, nil
}

// transportFailed reports an error of the HTTP exchange itself, rather
// than of the node's answer: no answer (refused, reset, timed out), a
// refusal for the moment (429, 5xx) or a Retry-After still running. A 4xx
// refusal of a batch (400, 405, 413: some providers' way of refusing
// arrays) is the node's answer.
func transportFailed(err error) bool {
	var he rpc.HTTPError
	var backoff *problem.BackoffError
	var ne net.Error
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusTooManyRequests || he.StatusCode >= 500
	}
	return errors.As(err, &backoff) || errors.As(err, &ne) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// unreachable reports a node that did not answer at all or failed as a
// server (connection refused or reset, HTTP 5xx): retrying the same range
// later is the remedy, not a smaller one. A timeout is not: a range too
// large for the node can take longer than the call's deadline.
func unreachable(err error) bool {
	var he rpc.HTTPError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &he) && he.StatusCode >= 500
}

// rateLimited reports a node refusing for the rate of requests (HTTP 429,
// a Retry-After, or a JSON-RPC error saying so, as Infura's -32005
// "project ID request rate exceeded"): not a range too large.
func rateLimited(err error) bool {
	var he rpc.HTTPError
	var backoff *problem.BackoffError
	if errors.As(err, &backoff) || errors.As(err, &he) && he.StatusCode == http.StatusTooManyRequests {
		return true
	}
	m := strings.ToLower(err.Error())
	for _, s := range []string{"rate limit", "rate-limit", "ratelimit", "too many requests", "rate exceeded", "request rate", "throttl"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func (n *node) head(ctx context.Context) (uint64, error) {
	var h hexutil.Uint64
	err := n.call(ctx, &h, "eth_blockNumber")
	return uint64(h), err
}

// header is what the indexer keeps of a block.
type header struct {
	Number     hexutil.Uint64 `json:"number"`
	Hash       common.Hash    `json:"hash"`
	ParentHash common.Hash    `json:"parentHash"`
	Timestamp  hexutil.Uint64 `json:"timestamp"`
	// Bloom is the block's logsBloom: near the head it says whether an
	// answer without logs for the block can be true (fetch.go).
	Bloom types.Bloom     `json:"logsBloom"`
	Txs   json.RawMessage `json:"transactions"`
}

// errNoBlock is a node without a block it was asked for: a node (or a
// provider's backend) behind the head it reports, never a reorg.
var errNoBlock = errors.New("the node has no block")

// check refuses a header that is not block n: null (the node does not
// have it yet) or another block's (a lying node: the gateway's own header
// reads refuse it too).
func (h *header) check(n uint64) error {
	if h.Hash == (common.Hash{}) {
		return fmt.Errorf("%w %d yet", errNoBlock, n)
	}
	if uint64(h.Number) != n {
		return fmt.Errorf("eth_getBlockByNumber(%d) answered block %d", n, uint64(h.Number))
	}
	return nil
}

// tx is a transaction as the mappings see it. Decoded by hand rather than
// as a types.Transaction: `from` is the node's (no signature recovery), and
// a chain's own transaction types (Arbitrum's system transactions) decode.
type tx struct {
	Hash  common.Hash     `json:"hash"`
	From  common.Address  `json:"from"`
	To    *common.Address `json:"to"`
	Input hexutil.Bytes   `json:"input"`
	Index hexutil.Uint64  `json:"transactionIndex"`
}

func blockArg(n uint64) string { return hexutil.EncodeUint64(n) }

// headerCall is eth_getBlockByNumber of n into h, with the transactions
// when full.
func headerCall(n uint64, full bool, h *header) rpc.BatchElem {
	return rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{blockArg(n), full}, Result: h}
}

// blockReceipts reads the receipts of several blocks by number, in
// batches: eth_getBlockReceipts of each block (every receipt of it), or,
// on a node without that method, eth_getTransactionReceipt of each
// transaction of want (want[i] are the hashes block i's handlers need).
func (n *node) blockReceipts(ctx context.Context, numbers []uint64, want [][]common.Hash) ([]map[common.Hash]*types.Receipt, error) {
	out := make([]map[common.Hash]*types.Receipt, len(numbers))
	k := max(n.maxBatch, 1)
	for i := 0; i < len(numbers) && !n.noBlockReceipts.Load(); i += k {
		j := min(i+k, len(numbers))
		if err := n.blockReceiptsBatch(ctx, numbers[i:j], want[i:j], out[i:j]); err != nil {
			return nil, err
		}
	}
	var all []common.Hash
	for i, w := range want {
		if out[i] == nil {
			all = append(all, w...)
		}
	}
	if len(all) == 0 {
		return out, nil
	}
	got, err := n.receipts(ctx, all)
	if err != nil {
		return nil, err
	}
	for i, w := range want {
		if out[i] != nil {
			continue
		}
		out[i] = make(map[common.Hash]*types.Receipt, len(w))
		for _, h := range w {
			out[i][h] = got[h]
		}
	}
	return out, nil
}

// blockReceiptsBatch reads one batch of blocks' receipts into out. A node
// without the method ("method not found"), or answering without the
// receipts asked (null, [], some left out), is asked per transaction from
// then on (noBlockReceipts), this batch's blocks too: out left nil.
func (n *node) blockReceiptsBatch(ctx context.Context, numbers []uint64, want [][]common.Hash, out []map[common.Hash]*types.Receipt) error {
	rs := make([][]*types.Receipt, len(numbers))
	calls := make([]rpc.BatchElem, len(numbers))
	for i, b := range numbers {
		calls[i] = rpc.BatchElem{Method: "eth_getBlockReceipts", Args: []any{blockArg(b)}, Result: &rs[i]}
	}
	err := n.batch(ctx, calls)
	if err != nil && !methodMissing(err) {
		return err
	}
	if err != nil || !complete(rs, want) {
		n.noBlockReceipts.Store(true)
		return nil
	}
	n.hasBlockReceipts.Store(true)
	for i := range rs {
		out[i] = make(map[common.Hash]*types.Receipt, len(rs[i]))
		for _, r := range rs[i] {
			out[i][r.TxHash] = r
		}
	}
	return nil
}

// complete reports whether every block's receipts hold those wanted.
func complete(rs [][]*types.Receipt, want [][]common.Hash) bool {
	for i, w := range want {
		have := make(map[common.Hash]bool, len(rs[i]))
		for _, r := range rs[i] {
			if r != nil {
				have[r.TxHash] = true
			}
		}
		for _, h := range w {
			if !have[h] {
				return false
			}
		}
	}
	return true
}

// receipts reads the receipts of the transactions hashes, in batches of
// at most the configured size (n.batch).
func (n *node) receipts(ctx context.Context, hashes []common.Hash) (map[common.Hash]*types.Receipt, error) {
	rs := make([]*types.Receipt, len(hashes))
	calls := make([]rpc.BatchElem, len(hashes))
	for i, h := range hashes {
		calls[i] = rpc.BatchElem{Method: "eth_getTransactionReceipt", Args: []any{h}, Result: &rs[i]}
	}
	if err := n.batch(ctx, calls); err != nil {
		return nil, err
	}
	out := map[common.Hash]*types.Receipt{}
	for i, r := range rs {
		if r == nil {
			return nil, fmt.Errorf("no receipt of transaction %s", hashes[i].Hex())
		}
		out[hashes[i]] = r
	}
	return out, nil
}

func methodMissing(err error) bool {
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == -32601 {
		return true
	}
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "method not found") || strings.Contains(m, "does not exist") || strings.Contains(m, "not supported")
}

// filterArg is an eth_getLogs filter: a block range or one block's hash.
func filterArg(q ethereum.FilterQuery) map[string]any {
	arg := map[string]any{"address": q.Addresses}
	topics := make([]any, len(q.Topics))
	for i, t := range q.Topics {
		topics[i] = t
	}
	arg["topics"] = topics
	if q.BlockHash != nil {
		arg["blockHash"] = *q.BlockHash
		return arg
	}
	arg["fromBlock"] = hexutil.EncodeBig(q.FromBlock)
	arg["toBlock"] = hexutil.EncodeBig(q.ToBlock)
	return arg
}

func (n *node) logs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	var out []types.Log
	err := n.call(ctx, &out, "eth_getLogs", filterArg(q))
	return out, err
}

func rangeQuery(from, to uint64, addrs []common.Address, topics []common.Hash) ethereum.FilterQuery {
	return ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
		Addresses: addrs, Topics: [][]common.Hash{topics}}
}

// ethCall runs a mapping's eth_call at the trigger's block, named by hash
// (EIP-1898) so a reorg cannot answer it from another block. A revert is
// the call's answer; a node without the block's state (a pruned node) is
// a prunedError, once it has refused through callRetries (a transient
// "header not found" is not).
func (n *node) ethCall(ctx context.Context, to common.Address, data []byte, block common.Hash, number uint64) ([]byte, bool, error) {
	var out hexutil.Bytes
	args := []any{map[string]any{"to": to, "data": hexutil.Bytes(data)}, map[string]any{"blockHash": block}}
	err := n.call(ctx, &out, "eth_call", args...)
	for i := 0; err != nil && !reverted(err) && pruned(err) && i < len(n.callRetries); i++ {
		// A pruned node's refusal, or a backend behind the block: asked
		// again a few times over seconds before it is taken for the first.
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(n.callRetries[i]):
		}
		out = nil
		err = n.call(ctx, &out, "eth_call", args...)
	}
	if err == nil {
		return out, false, nil
	}
	if reverted(err) {
		return nil, true, nil
	}
	if pruned(err) && n.knows(ctx, block) {
		return nil, false, &prunedError{block: number, err: err}
	}
	return nil, false, err
}

// knows reports whether the node has the block: a call at a block it does
// not have fails as a pruned node's does, but means a reorg took the
// block away (retried), not that its state is gone (fatal).
func (n *node) knows(ctx context.Context, hash common.Hash) bool {
	var h *header
	if err := n.call(ctx, &h, "eth_getBlockByHash", hash, false); err != nil {
		return false
	}
	return h != nil && h.Hash == hash
}

// reverted reports an eth_call that ran and reverted (or failed in the
// EVM), which graph-ts's try_ calls answer as reverted: geth's code 3
// ("execution reverted" with the revert data), or the EVM's failure in
// the message. Any other error of the node is not a revert: every JSON-RPC
// error carries a data member to go-ethereum (rpc.DataError), so that
// alone would make a pruned node's refusal look like a revert and index
// wrong values.
func reverted(err error) bool {
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == 3 {
		return true
	}
	m := strings.ToLower(err.Error())
	for _, s := range []string{"execution reverted", "revert", "invalid opcode", "invalid jump", "out of gas", "stack underflow"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// pruned reports a node that no longer holds the state a call asks for:
// geth's, Erigon's, Nitro's and the providers' ways of saying so.
func pruned(err error) bool {
	m := strings.ToLower(err.Error())
	for _, s := range []string{"missing trie node", "historical state", "state not available", "state is not available",
		"pruned", "header not found", "unknown block", "archive", "state histories haven't been fully indexed"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// prunedError says the node cannot answer calls at an old block: the
// indexer needs an archive node for history.
type prunedError struct {
	block uint64
	err   error
}

func (e *prunedError) Error() string {
	return fmt.Sprintf("the RPC node has no state at block %d (%v): indexing history needs an archive node", e.block, e.err)
}

func (e *prunedError) Unwrap() error { return e.err }
