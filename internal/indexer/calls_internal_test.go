package indexer

import (
	"fmt"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

var (
	keyA  = trigger{common.HexToAddress("0xa1"), common.HexToHash("0x01")}
	keyB  = trigger{common.HexToAddress("0xa1"), common.HexToHash("0x02")}
	poolX = call{common.HexToAddress("0xb1"), "\x38\x50\xc7\xbd"}
	poolY = call{common.HexToAddress("0xb2"), "\x38\x50\xc7\xbd"}
)

// blocksOf are blocks with one log of key each, numbered from 1.
func blocksOf(key trigger, n int) []*blockData {
	out := make([]*blockData, n)
	for i := range out {
		h := common.BigToHash(common.Big1)
		h[0] = byte(i + 1)
		out[i] = &blockData{header: header{Hash: h}, logs: []types.Log{{Address: key.addr, Topics: []common.Hash{key.topic}, BlockNumber: uint64(i + 1), BlockHash: h}}}
	}
	return out
}

// A call is prefetched for a key's events once at least 80 % of the key's
// last ten events asked it (after four), and no longer once fewer do: a
// handler whose events name many pools is not prefetched for.
func TestPredictsWhatMostRecentEventsAsked(t *testing.T) {
	var p predictor
	blocks := blocksOf(keyA, 3)
	for i := range predictMin - 1 {
		p.observe(keyA, []call{poolX})
		if got := p.predict(blocks, 100); len(got) != 0 {
			t.Fatalf("after %d events: predicted %v before %d were seen", i+1, got, predictMin)
		}
	}
	p.observe(keyA, []call{poolX})
	got := p.predict(blocks, 100)
	if len(got) != 3 || got[0].call != poolX || got[0].block != blocks[0].header.Hash || got[2].block != blocks[2].header.Hash {
		t.Fatalf("predicted %v, want poolX at each of the 3 blocks", got)
	}
	if got := p.predict(blocksOf(keyB, 2), 100); len(got) != 0 {
		t.Errorf("another topic of the same address predicted %v", got)
	}
	if got := p.predict(blocks, 2); len(got) != 2 {
		t.Errorf("limit 2: %d predicted", len(got))
	}
	// Events alternating between two pools: neither reaches 80 %.
	var q predictor
	for i := range 20 {
		q.observe(keyA, []call{[]call{poolX, poolY}[i%2]})
	}
	if got := q.predict(blocks, 100); len(got) != 0 {
		t.Errorf("alternating pools predicted %v", got)
	}
	// Eight of the last ten on poolY: poolY is predicted, poolX no more.
	for range 8 {
		p.observe(keyA, []call{poolY})
	}
	got = p.predict(blocksOf(keyA, 1), 100)
	if len(got) != 1 || got[0].call != poolY {
		t.Errorf("after the switch predicted %v, want poolY alone", got)
	}
}

// Two events of one block asking the same call are asked it once.
func TestPredictsEachCallOnceABlock(t *testing.T) {
	var p predictor
	for range predictMin {
		p.observe(keyA, []call{poolX})
		p.observe(keyB, []call{poolX, poolY})
	}
	b := blocksOf(keyA, 1)[0]
	b.logs = append(b.logs, types.Log{Address: keyB.addr, Topics: []common.Hash{keyB.topic}}, b.logs[0])
	got := p.predict([]*blockData{b}, 100)
	if len(got) != 2 {
		t.Fatalf("predicted %v, want poolX and poolY once", got)
	}
}

// What is learnt stays bounded: an event's calls past callsPerEvent and
// calldata past maxCallData are not kept, nor more than maxKeys keys: past
// them the least recently seen are forgotten, and new keys still learnt.
func TestLearningIsBounded(t *testing.T) {
	var r recording
	var p predictor
	r.begin(&p, keyA)
	r.ask(poolX.to, make([]byte, maxCallData+1))
	for i := range callsPerEvent + 3 {
		r.ask(common.BigToAddress(common.Big1), []byte{byte(i)})
	}
	r.ask(poolX.to, []byte(poolX.data))
	if len(r.calls) != callsPerEvent {
		t.Errorf("%d calls recorded, at most %d", len(r.calls), callsPerEvent)
	}
	r.end(&p)
	key := func(i int) trigger {
		return trigger{addr: common.BigToAddress(common.Big2), topic: common.HexToHash(fmt.Sprint(i))}
	}
	for i := range maxKeys + 10 {
		p.observe(key(i), nil)
		if i >= 20 {
			p.observe(key(5), nil) // seen all along
		}
	}
	if len(p.keys) > maxKeys {
		t.Errorf("%d keys kept, at most %d", len(p.keys), maxKeys)
	}
	if p.keys[key(5)] == nil || p.keys[key(6)] != nil || p.keys[key(maxKeys+9)] == nil {
		t.Errorf("kept: key 5 (seen last) %v, key 6 (least recently seen) %v, the newest %v; want true, false, true",
			p.keys[key(5)] != nil, p.keys[key(6)] != nil, p.keys[key(maxKeys+9)] != nil)
	}
	// a key first seen past the bound is learnt and predicted
	newest := key(5 * maxKeys)
	for range predictMin {
		p.observe(newest, []call{poolX})
	}
	if got := p.predict(blocksOf(newest, 1), 10); len(got) != 1 || got[0].call != poolX {
		t.Errorf("a key learnt past maxKeys predicts %v, want poolX", got)
	}
}

// A prefetched answer is an answer only for its very block: asked at
// another block of the same number (a reorg's), the call is not in the
// cache.
func TestCachedAnswerIsKeyedByBlockHash(t *testing.T) {
	old, replaced := common.HexToHash("0x0100"), common.HexToHash("0x0200")
	ix := &Indexer{calls: callCache{{old, poolX}: {ret: []byte{1, 2, 3}}}}
	if _, ok := ix.cached(poolX.to, []byte(poolX.data), replaced); ok {
		t.Fatal("an answer prefetched at another block hash was used")
	}
	if _, ok := ix.cached(poolY.to, []byte(poolY.data), old); ok {
		t.Fatal("an answer of another contract was used")
	}
	a, ok := ix.cached(poolX.to, []byte(poolX.data), old)
	if !ok || string(a.ret) != "\x01\x02\x03" {
		t.Fatalf("the answer at its block: %v %v", a, ok)
	}
	ix.cached(poolX.to, []byte(poolX.data), old)
	if n := ix.stats.usedCalls.Load(); n != 1 {
		t.Errorf("%d answers counted used, want 1 (each once)", n)
	}
}
