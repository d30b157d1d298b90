package indexertest

import (
	"encoding/binary"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
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
	// hashes are block hashes computed lately, by number modulo its
	// size: a cache, as recent is.
	hashMu sync.Mutex
	hashes [1024]struct {
		n   uint64
		h   common.Hash
		set bool
	}
	txHashes [1024]struct {
		n   uint64
		i   int
		h   common.Hash
		set bool
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
// The latest computed are kept (a block is asked for its logs, header and
// receipts in turn, and its parent's hash with its header).
func (s *Scale) Hash(n uint64) common.Hash {
	s.hashMu.Lock()
	e := &s.hashes[n%uint64(len(s.hashes))]
	if e.set && e.n == n {
		defer s.hashMu.Unlock()
		return e.h
	}
	s.hashMu.Unlock()
	h := blockHash(s.ID, n, 0)
	s.hashMu.Lock()
	e.n, e.h, e.set = n, h, true
	s.hashMu.Unlock()
	return h
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

// txHead is a transaction's sender and target: what a block's full
// transactions and its receipts carry besides the logs.
type txHead struct {
	from, to common.Address
	hash     common.Hash
}

// protocolHead is protocol event i's sender and target.
func (s *Scale) protocolHead(i uint64) txHead {
	cycle := i / 5
	return txHead{from: user(cycle % s.Users), to: s.Markets[cycle%uint64(len(s.Markets))].Address}
}

// heads are block n's transactions' senders and targets (txs' order),
// computed without their logs (a header or a receipt's envelope needs
// no ABI packing).
func (s *Scale) heads(n uint64) []txHead {
	var out []txHead
	if i, ok := s.eventAt(n); ok {
		out = append(out, s.protocolHead(i))
	}
	if j, ok := s.swapAt(n); ok {
		for _, h := range s.Markets {
			out = append(out, txHead{from: user(j % s.Users), to: h.Pool})
		}
	}
	for i := range out {
		out[i].hash = s.txHash(n, i)
	}
	return out
}

// txHash is the hash of block n's transaction i (txHash), kept as the
// block hashes are: a block's transactions are hashed for its logs, its
// header and its receipts in turn.
func (s *Scale) txHash(n uint64, i int) common.Hash {
	s.hashMu.Lock()
	e := &s.txHashes[(n*4+uint64(i))%uint64(len(s.txHashes))]
	if e.set && e.n == n && e.i == i {
		defer s.hashMu.Unlock()
		return e.h
	}
	s.hashMu.Unlock()
	h := txHash(s.Hash(n), i)
	s.hashMu.Lock()
	e.n, e.i, e.h, e.set = n, i, h, true
	s.hashMu.Unlock()
	return h
}

// eventAt is the protocol event of block n, if it holds one.
func (s *Scale) eventAt(n uint64) (uint64, bool) {
	if n <= s.First() || n > s.Head {
		return 0, false
	}
	i := s.firstEvent(n)
	return i, i < s.Events && s.eventBlock(i) == n
}

// swapAt is the swap the pools make at block n, if they swap there.
func (s *Scale) swapAt(n uint64) (uint64, bool) {
	if n <= s.First() || n > s.Head || s.SwapsPerDay == 0 {
		return 0, false
	}
	j := s.firstSwap(n)
	return j, s.swapBlock(j) == n
}

// computeTx computes protocol event i's transaction.
func (s *Scale) computeTx(i uint64) *Tx {
	cycle := i / 5
	m := uint64(len(s.Markets))
	h := s.Markets[cycle%m]
	tl := -200_000 + 10*int64(cycle/m%s.Ranges)
	u := s.protocolHead(i).from
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
	var out []*Tx
	if i, ok := s.eventAt(n); ok {
		out = append(out, s.protocolTx(i))
	}
	if !swaps {
		return out
	}
	if j, ok := s.swapAt(n); ok {
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
		th := s.txHash(n, i)
		for _, l := range t.Logs {
			l.BlockNumber, l.BlockHash, l.TxHash, l.TxIndex, l.Index = n, bh, th, uint(i), uint(len(out))
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
	v, ok := m.Load(key)
	if !ok {
		v, _ = m.LoadOrStore(key, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
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
