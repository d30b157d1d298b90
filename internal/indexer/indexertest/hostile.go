package indexertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Faults are the ways a Hostile node departs from an honest one, each
// modelled on a provider's real behaviour (attack 5's atknode): zero
// values are honest.
type Faults struct {
	// LogsLag leaves the logs of the newest LogsLag blocks out of every
	// eth_getLogs over a range (a provider whose log index trails its
	// block data); by block hash it answers them.
	LogsLag uint64
	// Race reorganises the chain from block Race right after the first
	// eth_getLogs over a range that holds it (the logs answered are the
	// old branch's), calling OnRace to fill the new branch.
	Race   uint64
	OnRace func(*Chain)
	// HeadersBehind answers null for the newest HeadersBehind blocks'
	// headers (a backend behind the one answering eth_blockNumber).
	HeadersBehind uint64
	// HeadAt, if set, makes the node a replica still syncing at that
	// block: eth_blockNumber answers it and the blocks above are null.
	HeadAt uint64
	// CallHeaderNotFound answers the first eth_call at each block hash
	// -32000 "header not found" (a backend that has not seen the block).
	CallHeaderNotFound bool
	// NoBatch refuses every JSON-RPC batch, as some free tiers do: with
	// an error object in a 200, or with the HTTP status NoBatchStatus.
	NoBatch       bool
	NoBatchStatus int
	// ReceiptsNull answers eth_getBlockReceipts null.
	ReceiptsNull bool
	// DupLog answers every eth_getLogs over a range with its last log
	// twice.
	DupLog bool
	// HeaderAhead answers eth_getBlockByNumber(n, false) with block
	// n+HeaderAhead.
	HeaderAhead uint64
	// Refuse429 answers the next Refuse429 requests HTTP 429 with the
	// Retry-After RetryAfter (if set); with RefuseMethod set, only those
	// that carry a call of it.
	Refuse429    int
	RetryAfter   string
	RefuseMethod string
	// PadMiB pads every eth_getLogs answer over a range with PadMiB MiB
	// of whitespace before its closing brace (valid JSON).
	PadMiB int
	// ErrKiB answers every eth_getLogs over a range with a JSON-RPC error
	// whose message is ErrKiB KiB long.
	ErrKiB int
}

// Hostile is the chain behind a node that lies, lags, refuses and
// floods as Faults say, counting every HTTP request it receives (those
// it refuses too).
type Hostile struct {
	Chain *Chain

	mu    sync.Mutex
	f     Faults
	seen  map[string]bool // block hashes whose first eth_call failed
	raced bool
	sent  atomic.Int64
	hook  func(methods []string)
	log   []Seen
}

// Seen is a request the node received: when, its calls' methods, whether
// it was refused whole (HTTP 429, or a batch refused), and the range of
// its eth_getLogs over a range (if one).
type Seen struct {
	At       time.Time
	Methods  []string
	Refused  bool
	From, To uint64
}

// Seen lists the requests received, in order.
func (h *Hostile) Seen() []Seen {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.log)
}

func (h *Hostile) record(calls []call, refused bool) {
	s := Seen{At: time.Now(), Refused: refused}
	for _, c := range calls {
		s.Methods = append(s.Methods, c.Method)
		var q struct {
			From *hexutil.Uint64 `json:"fromBlock"`
			To   *hexutil.Uint64 `json:"toBlock"`
		}
		if c.Method == "eth_getLogs" && len(c.Params) > 0 && json.Unmarshal(c.Params[0], &q) == nil && q.From != nil && q.To != nil {
			s.From, s.To = uint64(*q.From), uint64(*q.To)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, s)
}

// NewHostile wraps c, honest until Set.
func NewHostile(c *Chain) *Hostile { return &Hostile{Chain: c, seen: map[string]bool{}} }

// Set changes the faults.
func (h *Hostile) Set(f func(*Faults)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(&h.f)
	h.raced = false
}

// Sent is how many HTTP requests the node received.
func (h *Hostile) Sent() int64 { return h.sent.Load() }

// OnRequest, if set, is called with the methods of every request received
// (before any fault), in the request's goroutine.
func (h *Hostile) OnRequest(f func(methods []string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hook = f
}

func (h *Hostile) faults() (Faults, func([]string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.f, h.hook
}

// call is a call as received; answer its answer, its result kept raw to
// be altered.
type call = request

type answer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// ServeHTTP implements http.Handler.
func (h *Hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.sent.Add(1)
	body, _ := io.ReadAll(r.Body)
	f, hook := h.faults()
	batch := len(bytes.TrimSpace(body)) > 0 && bytes.TrimSpace(body)[0] == '['
	var calls []call
	if batch {
		_ = json.Unmarshal(body, &calls)
	} else {
		var one call
		_ = json.Unmarshal(body, &one)
		calls = []call{one}
	}
	if hook != nil {
		var ms []string
		for _, c := range calls {
			ms = append(ms, c.Method)
		}
		hook(ms)
	}
	refused := h.refused(w, f, batch, calls)
	h.record(calls, refused)
	if refused {
		return
	}
	rec := httptest.NewRecorder()
	h.Chain.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	var answers []answer
	if batch {
		_ = json.Unmarshal(rec.Body.Bytes(), &answers)
	} else {
		var one answer
		_ = json.Unmarshal(rec.Body.Bytes(), &one)
		answers = []answer{one}
	}
	byID := map[string]call{}
	for _, c := range calls {
		byID[string(c.ID)] = c
	}
	for i := range answers {
		h.alter(&answers[i], byID[string(answers[i].ID)], f)
	}
	var out []byte
	if batch {
		out, _ = json.Marshal(answers)
	} else {
		out, _ = json.Marshal(answers[0])
	}
	w.Header().Set("Content-Type", "application/json")
	if f.PadMiB > 0 && !batch && calls[0].Method == "eth_getLogs" && !byHash(calls[0]) && len(out) > 1 {
		_, _ = w.Write(out[:len(out)-1])
		pad := bytes.Repeat([]byte(" "), 1<<20)
		for range f.PadMiB {
			if _, err := w.Write(pad); err != nil {
				return
			}
		}
		out = out[len(out)-1:]
	}
	_, _ = w.Write(out)
}

// refused answers a request the node refuses whole: a 429, or a batch.
func (h *Hostile) refused(w http.ResponseWriter, f Faults, batch bool, calls []call) bool {
	carries := f.RefuseMethod == "" || slices.ContainsFunc(calls, func(c call) bool { return c.Method == f.RefuseMethod })
	if f.Refuse429 > 0 && carries {
		h.mu.Lock()
		h.f.Refuse429--
		h.mu.Unlock()
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		http.Error(w, `{"jsonrpc":"2.0","error":{"code":-32005,"message":"rate limited: too many requests"}}`, http.StatusTooManyRequests)
		return true
	}
	if batch && f.NoBatch {
		w.Header().Set("Content-Type", "application/json")
		if f.NoBatchStatus != 0 {
			w.WriteHeader(f.NoBatchStatus)
		}
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}`))
		return true
	}
	return false
}

func byHash(c call) bool {
	return len(c.Params) > 0 && bytes.Contains(c.Params[0], []byte(`"blockHash"`))
}

// alter applies the faults to one answer of call c.
func (h *Hostile) alter(a *answer, c call, f Faults) {
	head := h.Chain.Head()
	if f.HeadAt > 0 {
		head = min(head, f.HeadAt)
	}
	switch c.Method {
	case "eth_blockNumber":
		a.Result, _ = json.Marshal(hexutil.Uint64(head))
	case "eth_getBlockByNumber":
		h.alterHeader(a, c, f, head)
	case "eth_call":
		h.alterCall(a, c, f)
	case "eth_getBlockReceipts":
		if f.ReceiptsNull {
			a.Result = json.RawMessage("null")
		}
	case "eth_getLogs":
		if !byHash(c) {
			h.alterLogs(a, c, f, head)
		}
	}
}

func (h *Hostile) alterHeader(a *answer, c call, f Faults, head uint64) {
	var tag string
	if len(c.Params) == 0 || json.Unmarshal(c.Params[0], &tag) != nil {
		return
	}
	n, err := hexutil.DecodeUint64(tag)
	if err != nil {
		return
	}
	full := len(c.Params) > 1 && string(c.Params[1]) == "true"
	switch {
	case n > head || n+f.HeadersBehind > head:
		a.Result = json.RawMessage("null")
	case f.HeaderAhead > 0 && !full && n+f.HeaderAhead <= head:
		h.Chain.mu.Lock()
		a.Result, _ = json.Marshal(h.Chain.block(n+f.HeaderAhead, false))
		h.Chain.mu.Unlock()
	}
}

func (h *Hostile) alterCall(a *answer, c call, f Faults) {
	if !f.CallHeaderNotFound || len(c.Params) < 2 {
		return
	}
	var at map[string]string
	if json.Unmarshal(c.Params[1], &at) != nil || at["blockHash"] == "" {
		return
	}
	h.mu.Lock()
	first := !h.seen[at["blockHash"]]
	h.seen[at["blockHash"]] = true
	h.mu.Unlock()
	if first {
		a.Result, a.Error = nil, &rpcError{Code: -32000, Message: "header not found"}
	}
}

func (h *Hostile) alterLogs(a *answer, c call, f Faults, head uint64) {
	var lgs []map[string]any
	if a.Error != nil || json.Unmarshal(a.Result, &lgs) != nil {
		return
	}
	kept := lgs[:0]
	for _, lg := range lgs {
		n, _ := hexutil.DecodeUint64(fmt.Sprint(lg["blockNumber"]))
		if n <= head && n+f.LogsLag <= head {
			kept = append(kept, lg)
		}
	}
	if f.DupLog && len(kept) > 0 {
		kept = append(kept, kept[len(kept)-1])
	}
	a.Result, _ = json.Marshal(kept)
	if f.ErrKiB > 0 {
		a.Result, a.Error = nil, &rpcError{Code: -32005, Message: "query returned more than 10000 results " + strings.Repeat("X", f.ErrKiB<<10)}
	}
	h.race(c, f)
}

// race reorganises the chain after the first range answered that holds
// f.Race.
func (h *Hostile) race(c call, f Faults) {
	if f.Race == 0 {
		return
	}
	var q struct {
		From hexutil.Uint64 `json:"fromBlock"`
		To   hexutil.Uint64 `json:"toBlock"`
	}
	if len(c.Params) == 0 || json.Unmarshal(c.Params[0], &q) != nil || f.Race < uint64(q.From) || f.Race > uint64(q.To) {
		return
	}
	h.mu.Lock()
	done := h.raced
	h.raced = true
	h.mu.Unlock()
	if done {
		return
	}
	head := h.Chain.Head()
	h.Chain.Reorg(f.Race)
	if f.OnRace != nil {
		f.OnRace(h.Chain)
	}
	h.Chain.SetHead(head)
}
