package demo

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"iter"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/replay"
)

// heldAnswers holds recorded answers by key as bytes the garbage collector
// never scans: keys and answers back to back in one arena, entries of
// offsets into it, and a map from a key's hash to its first entry (neither
// key nor value a pointer, so the map's memory is not scanned either).
//
// Why not a map[string]callAnswer: the served binary keeps the demo's
// recordings live for its whole life, and a map of strings and byte slices
// is one object per key and per answer (about 9,000 for the demo's RPC
// node), each marked on every collection. Under a hit-only load every mark
// phase slows the hits beside it (the hit path's p99, BENCHMARKS.md), and
// this way the recordings are a handful of objects whatever their size.
type heldAnswers struct {
	arena   []byte
	entries []heldEntry
	first   map[uint64]uint32 // hash -> 1 + index of its first entry
	seed    maphash.Seed
}

// heldEntry is one key's answer: spans of the arena, and the next entry
// whose key has the same hash (1 + its index; 0: none).
type heldEntry struct {
	key, ret, rpcErr byteSpan
	ok               bool
	next             uint32
}

type byteSpan struct{ off, n uint32 }

func newHeldAnswers() *heldAnswers {
	return &heldAnswers{first: map[uint64]uint32{}, seed: maphash.MakeSeed()}
}

// span appends b to the arena.
func (h *heldAnswers) span(b []byte) byteSpan {
	s := byteSpan{uint32(len(h.arena)), uint32(len(b))}
	h.arena = append(h.arena, b...)
	return s
}

// bytes is a span's bytes, capped so an append by a caller copies.
func (h *heldAnswers) bytes(s byteSpan) []byte {
	return h.arena[s.off : s.off+s.n : s.off+s.n]
}

// find is the index of key's entry, or -1.
func (h *heldAnswers) find(hash uint64, key string) int {
	for i := h.first[hash]; i != 0; i = h.entries[i-1].next {
		if string(h.bytes(h.entries[i-1].key)) == key {
			return int(i - 1)
		}
	}
	return -1
}

// put sets key's answer; a later answer of a key replaces the earlier one,
// as a map assignment does.
func (h *heldAnswers) put(key string, a callAnswer) {
	hash := maphash.String(h.seed, key)
	e := heldEntry{ret: h.span(a.ret), ok: a.ok}
	if a.rpcErr != nil {
		e.rpcErr = h.span(a.rpcErr)
	}
	if i := h.find(hash, key); i >= 0 {
		e.key, e.next = h.entries[i].key, h.entries[i].next
		h.entries[i] = e
		return
	}
	e.key, e.next = h.span([]byte(key)), h.first[hash]
	h.entries = append(h.entries, e)
	h.first[hash] = uint32(len(h.entries))
}

// get is key's answer. Its slices share the arena: read them, never write.
func (h *heldAnswers) get(key string) (callAnswer, bool) {
	i := h.find(maphash.String(h.seed, key), key)
	if i < 0 {
		return callAnswer{}, false
	}
	return h.answer(h.entries[i]), true
}

func (h *heldAnswers) answer(e heldEntry) callAnswer {
	a := callAnswer{ok: e.ok, ret: h.bytes(e.ret)}
	if e.rpcErr.n > 0 {
		a.rpcErr = h.bytes(e.rpcErr)
	}
	return a
}

// all yields every key and its answer, in the order first put.
func (h *heldAnswers) all() iter.Seq2[string, callAnswer] {
	return func(yield func(string, callAnswer) bool) {
		for _, e := range h.entries {
			if !yield(string(h.bytes(e.key)), h.answer(e)) {
				return
			}
		}
	}
}

// seal trims the arena and the entries to their length, once every answer
// is put: growth by doubling leaves up to half of each unused.
func (h *heldAnswers) seal() {
	h.arena = append([]byte(nil), h.arena...)
	h.entries = append([]heldEntry(nil), h.entries...)
}

// exactMessage is a JSON-RPC request as the cassette keys it: its
// parameters as sent.
type exactMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// replayExact answers a request every message of which the cassette holds
// as recorded (replay.RPCReplayer's answer, from the held bytes); false:
// some message it does not hold, or a body it cannot read.
func (n *node) replayExact(req *http.Request, body []byte) (*http.Response, bool) {
	msgs, batch, err := decodeRPC[exactMessage](body)
	if err != nil {
		return nil, false
	}
	out := make([]rpcMessage, len(msgs))
	for i, m := range msgs {
		k, err := replay.Key(m.Method, m.Params)
		if err != nil {
			return nil, false
		}
		a, ok := n.exact.get(k)
		if !ok {
			return nil, false
		}
		out[i] = rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: a.ret, Error: a.rpcErr}
	}
	var resp *http.Response
	if batch {
		resp, err = replay.JSONAnswer(req, out)
	} else {
		resp, err = replay.JSONAnswer(req, out[0])
	}
	return resp, err == nil
}

// decodeRPC reads a JSON-RPC request body: a batch, or one message.
func decodeRPC[M any](body []byte) (msgs []M, batch bool, err error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err = json.Unmarshal(trimmed, &msgs)
		return msgs, true, err
	}
	msgs = make([]M, 1)
	return msgs, false, json.Unmarshal(trimmed, &msgs[0])
}
