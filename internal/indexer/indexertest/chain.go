// Package indexertest is a synthetic chain behind a real JSON-RPC server
// for the embedded indexer's tests and benchmark: blocks with
// deterministic hashes (a reorg gives the blocks from a height new ones),
// transactions carrying ABI-encoded protocol logs, receipts, eth_getLogs
// with a node's limits (a result cap and a range cap, refused with the
// providers' errors), and eth_call answered by a function. Only blocks
// with transactions are stored, so a history of a million blocks costs
// what its events cost. Every call is counted by method.
//
// Scale is the same node at a real chain's scale, computing its history
// on demand. It shares the benchmark's cores with the indexer, so it
// reads requests and writes answers by hand (serve.go, jsonread.go,
// encode.go) in the bytes Chain's reflective encoding writes, checked
// against that encoding byte for byte (scale_ref_test.go).
package indexertest

import (
	"encoding/binary"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Tx is one transaction: its sender and target and the logs it emits
// (address, topics, data; the chain numbers them).
type Tx struct {
	From common.Address
	To   common.Address
	Logs []types.Log
}

// Chain is the synthetic chain.
type Chain struct {
	ID uint64
	// MaxLogs, if set, refuses an eth_getLogs answer of more logs (as
	// Infura and Alchemy refuse, "query returned more than N results").
	MaxLogs int
	// MaxRange, if set, refuses an eth_getLogs range wider than it.
	MaxRange uint64
	// Call answers eth_call (to, calldata, block number); nil reverts all.
	Call func(to common.Address, data []byte, block uint64) (ret []byte, reverted bool)
	// NoBlockReceipts answers eth_getBlockReceipts "method not found".
	NoBlockReceipts bool
	// MaxBatchReceipts, if set, answers the eth_getBlockReceipts calls of
	// one batch past that many with geth's -32003 "response too large"
	// (geth stops a batch's answers at 25 MB; a block's receipts on an L2
	// are 0.5-2 MB).
	MaxBatchReceipts int
	// StateFrom, if set, makes eth_call at an older block fail as a
	// pruned node's does (geth's "missing trie node").
	StateFrom uint64

	mu     sync.Mutex
	head   uint64
	txs    map[uint64][]*Tx // by block
	sorted []uint64         // blocks with transactions, ascending
	forks  []fork           // ascending by from

	counts sync.Map // method -> *atomic.Int64
	// requests counts HTTP requests by the methods they carried (sorted,
	// joined with "+"): a JSON-RPC batch is one request.
	requests sync.Map // methods -> *atomic.Int64
	largest  atomic.Int64
}

// fork gives the blocks from `from` on a branch id of their own.
type fork struct{ from, id uint64 }

// New returns an empty chain whose head is block head.
func New(id, head uint64) *Chain {
	return &Chain{ID: id, head: head, txs: map[uint64][]*Tx{}}
}

// Add puts transactions into block n (at its end), moving the head up to
// it if needed.
func (c *Chain) Add(n uint64, txs ...*Tx) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.txs[n]; !ok {
		i := sort.Search(len(c.sorted), func(i int) bool { return c.sorted[i] >= n })
		c.sorted = append(c.sorted, 0)
		copy(c.sorted[i+1:], c.sorted[i:])
		c.sorted[i] = n
	}
	c.txs[n] = append(c.txs[n], txs...)
	c.head = max(c.head, n)
}

// SetHead moves the head (blocks above it do not exist yet).
func (c *Chain) SetHead(n uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.head = n
}

// Head is the head block's number.
func (c *Chain) Head() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head
}

// Reorg replaces every block from `from` on with new ones (new hashes, no
// transactions); the caller adds the new branch's.
func (c *Chain) Reorg(from uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forks = append(c.forks, fork{from: from, id: uint64(len(c.forks) + 1)})
	kept := c.sorted[:0]
	for _, n := range c.sorted {
		if n < from {
			kept = append(kept, n)
		} else {
			delete(c.txs, n)
		}
	}
	c.sorted = kept
}

// Hash is block n's hash on the current branch.
func (c *Chain) Hash(n uint64) common.Hash {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hash(n)
}

func (c *Chain) hash(n uint64) common.Hash {
	var id uint64
	for _, f := range c.forks {
		if f.from <= n {
			id = f.id
		}
	}
	return blockHash(c.ID, n, id)
}

// blockHash is the hash of block n of chain id on branch fork: a digest
// of the three, its last 8 bytes replaced by n, so that a node computing
// its blocks on demand (Scale) finds a block by its hash without
// remembering it, and checks the hash by computing it again.
func blockHash(id, n, fork uint64) common.Hash {
	h := crypto.Keccak256Hash([]byte("synthetic block"), binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, id), n),
		binary.BigEndian.AppendUint64(nil, fork))
	binary.BigEndian.PutUint64(h[24:], n)
	return h
}

// blockOfHash is the number a blockHash carries (not checked).
func blockOfHash(h common.Hash) uint64 { return binary.BigEndian.Uint64(h[24:]) }

// number finds the block of a hash on the current branch: the number the
// hash carries, if that block's hash on the branch is it and the block
// holds transactions or is near the head (the tests ask those by hash
// after a reorg check).
func (c *Chain) number(h common.Hash) (uint64, bool) {
	n := blockOfHash(h)
	if c.hash(n) != h {
		return 0, false
	}
	if _, ok := c.txs[n]; ok || (n <= c.head && c.head-n < 4096) {
		return n, true
	}
	return 0, false
}

// Time is block n's timestamp.
func Time(n uint64) uint64 { return 1_700_000_000 + 2*n }

// txHash is the hash of transaction i of a block: a digest of the block's
// hash and i, its last 12 bytes replaced by the block's number (its
// hash's last 8 bytes) and i, which txOfHash reads back.
func txHash(block common.Hash, i int) common.Hash {
	h := crypto.Keccak256Hash(block.Bytes(), strconv.AppendInt(nil, int64(i), 10))
	copy(h[20:28], block[24:])
	binary.BigEndian.PutUint32(h[28:], uint32(i))
	return h
}

// txOfHash is the block number and index a txHash carries (not checked).
func txOfHash(h common.Hash) (uint64, int) {
	return binary.BigEndian.Uint64(h[20:28]), int(binary.BigEndian.Uint32(h[28:]))
}

// logsOf are block n's logs, numbered, with their block and transaction.
func (c *Chain) logsOf(n uint64) []types.Log {
	bh := c.hash(n)
	var out []types.Log
	for i, t := range c.txs[n] {
		for _, l := range t.Logs {
			l.BlockNumber, l.BlockHash, l.TxHash, l.TxIndex, l.Index = n, bh, txHash(bh, i), uint(i), uint(len(out))
			l.BlockTimestamp = Time(n)
			out = append(out, l)
		}
	}
	return out
}

func (c *Chain) count(method string) {
	v, _ := c.counts.LoadOrStore(method, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (c *Chain) countRequest(methods []string, calls int) {
	if len(methods) == 0 {
		return
	}
	for {
		old := c.largest.Load()
		if int64(calls) <= old || c.largest.CompareAndSwap(old, int64(calls)) {
			break
		}
	}
	slices.Sort(methods)
	v, _ := c.requests.LoadOrStore(strings.Join(methods, "+"), new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Requests is how many HTTP requests the chain answered, by the methods
// each carried (sorted, joined with "+"; a batch is one request).
func (c *Chain) Requests() map[string]int64 {
	out := map[string]int64{}
	c.requests.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// LargestBatch is the most calls one HTTP request carried.
func (c *Chain) LargestBatch() int { return int(c.largest.Load()) }

// Calls is how many calls of method the chain answered (each call of a
// batch counted).
func (c *Chain) Calls(method string) int64 {
	v, ok := c.counts.Load(method)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// EventsOf is how many logs of the chain addr emitted.
func (c *Chain) EventsOf(addr common.Address) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, txs := range c.txs {
		for _, t := range txs {
			for _, l := range t.Logs {
				if l.Address == addr {
					n++
				}
			}
		}
	}
	return n
}

// Events is how many logs the chain holds.
func (c *Chain) Events() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, txs := range c.txs {
		for _, t := range txs {
			n += len(t.Logs)
		}
	}
	return n
}
