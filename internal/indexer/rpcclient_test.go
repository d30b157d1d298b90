package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// The indexer's JSON-RPC client is checked against go-ethereum's, which it
// replaces: both are sent the same calls by the same node, which answers
// in the shapes JSON-RPC 2.0 and real nodes allow (batches out of order,
// answers missing, given twice or null, error objects, an error object for
// a whole batch, HTTP statuses), and must send the same bytes and come to
// the same results and error values.

// rawNode answers each request with answer(calls), calls being the
// request's calls (one for a single call) as id and method.
type rawNode struct {
	answer func(calls []rawCall, batch bool) (int, string)
	mu     sync.Mutex
	bodies []string
	heads  []http.Header
}

type rawCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (n *rawNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n.mu.Lock()
	n.bodies, n.heads = append(n.bodies, string(body)), append(n.heads, r.Header.Clone())
	n.mu.Unlock()
	var calls []rawCall
	batch := strings.HasPrefix(string(body), "[")
	if batch {
		_ = json.Unmarshal(body, &calls)
	} else {
		calls = make([]rawCall, 1)
		_ = json.Unmarshal(body, &calls[0])
	}
	status, out := n.answer(calls, batch)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, out)
}

// clients are go-ethereum's client and the indexer's, of one node.
func clients(t *testing.T, n *rawNode) (*rpc.Client, *Client) {
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	g, err := rpc.Dial(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	m, err := NewClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return g, m
}

func answerOf(id json.RawMessage, rest string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, id, rest)
}

var (
	h1      = "0x" + strings.Repeat("1a", 32)
	a1      = "0x" + strings.Repeat("2b", 20)
	logJSON = `{"address":"` + a1 + `","topics":["` + h1 + `"],"data":"0x0102","blockNumber":"0x10","transactionHash":"` + h1 +
		`","transactionIndex":"0x1","blockHash":"` + h1 + `","logIndex":"0x3","removed":false}`
	blockJSON = `{"number":"0x10","hash":"` + h1 + `","parentHash":"` + h1 + `","timestamp":"0x5","miner":"` + a1 +
		`","transactions":[{"hash":"` + h1 + `","from":"` + a1 + `","to":null,"input":"0x","transactionIndex":"0x0"}]}`
)

// sameError checks two clients' errors are alike: both nil, or both of
// the same kind (rpc.Error with code, data and text; rpc.HTTPError with
// status and body; a sentinel) or, for a malformed answer, both errors.
func sameError(t *testing.T, what string, g, m error) {
	t.Helper()
	var ge, me rpc.Error
	var gh, mh rpc.HTTPError
	switch {
	case (g == nil) != (m == nil):
		t.Errorf("%s: go-ethereum %v, client %v", what, g, m)
	case errors.As(g, &ge):
		var gd, md rpc.DataError
		errors.As(g, &gd)
		if !errors.As(m, &me) || me.ErrorCode() != ge.ErrorCode() || me.Error() != ge.Error() || !errors.As(m, &md) ||
			!reflect.DeepEqual(md.ErrorData(), gd.ErrorData()) {
			t.Errorf("%s: go-ethereum %#v, client %#v", what, g, m)
		}
	case errors.As(g, &gh):
		if !errors.As(m, &mh) || mh.StatusCode != gh.StatusCode || string(mh.Body) != string(gh.Body) {
			t.Errorf("%s: go-ethereum %#v, client %#v", what, g, m)
		}
	case errors.Is(g, rpc.ErrNoResult), errors.Is(g, rpc.ErrMissingBatchResponse):
		if !errors.Is(m, g) {
			t.Errorf("%s: go-ethereum %v, client %v", what, g, m)
		}
	}
}

func TestClientSingleCallsAsGoEthereum(t *testing.T) {
	answers := []struct {
		status int
		rest   string
	}{
		{200, `"result":[` + logJSON + `]`}, {200, `"result":null`}, {200, `"result":[]`},
		{200, `"error":{"code":-32005,"message":"project ID request rate exceeded","data":{"see":"x"}}`},
		{200, `"error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}`}, {200, `"error":{"code":-32601}`},
		{200, `"error":"a string"`}, {200, `"jsonrpc2":1`}, {429, `"error":{"code":429,"message":"slow down"}`},
		{503, `"x":1`}, {404, `"y":2`}, {200, `"result":[` + logJSON}, {200, `"result":{"a":1}`}, {200, `"result":"0x1"`},
	}
	for i, a := range answers {
		n := &rawNode{answer: func(c []rawCall, _ bool) (int, string) { return a.status, answerOf(c[0].ID, a.rest) }}
		g, m := clients(t, n)
		for _, out := range []func() any{func() any { return new([]types.Log) }, func() any { return new(header) },
			func() any { return new(*header) }, func() any { return new(hexutil.Uint64) }, func() any { return new(map[string]int) }} {
			gv, mv := out(), out()
			ge := g.CallContext(context.Background(), gv, "eth_getLogs", map[string]any{"blockHash": common.HexToHash(h1)})
			me := m.CallContext(context.Background(), mv, "eth_getLogs", map[string]any{"blockHash": common.HexToHash(h1)})
			sameError(t, fmt.Sprintf("answer %d into %T", i, gv), ge, me)
			if comparable(ge) && !reflect.DeepEqual(normal(reflect.ValueOf(gv).Elem().Interface()), normal(reflect.ValueOf(mv).Elem().Interface())) {
				t.Errorf("answer %d into %T: go-ethereum %+v, client %+v", i, gv, gv, mv)
			}
		}
	}
	// a whole block as eth_getBlockByNumber answers it
	n := &rawNode{answer: func(c []rawCall, _ bool) (int, string) { return 200, answerOf(c[0].ID, `"result":`+blockJSON) }}
	_, m := clients(t, n)
	var h header
	if err := m.CallContext(context.Background(), &h, "eth_getBlockByNumber", "0x10", true); err != nil || h.Number != 16 || h.Hash != common.HexToHash(h1) {
		t.Fatalf("block: %+v %v", h, err)
	}
	if txs, err := decodeTxs(h.Txs); err != nil || len(txs) != 1 || txs[0].To != nil || txs[0].From != common.HexToAddress(a1) {
		t.Fatalf("transactions: %+v %v", txs, err)
	}
}

func TestClientBatchesAsGoEthereum(t *testing.T) {
	shapes := map[string]func(c []rawCall) (int, string){
		"in order": func(c []rawCall) (int, string) { return 200, batchOf(c, []int{0, 1, 2, 3}, nil) },
		"reversed": func(c []rawCall) (int, string) { return 200, batchOf(c, []int{3, 2, 1, 0}, nil) },
		"one missing": func(c []rawCall) (int, string) {
			return 200, batchOf(c, []int{2, 0, 3}, nil)
		},
		"null, unknown id, twice": func(c []rawCall) (int, string) {
			// the second answer to call 1 is not taken: the first is
			b := batchOf(c, []int{1, 0, 1, 3, 2}, map[int]string{2: `"error":{"code":-32003,"message":"response too large"}`})
			return 200, "[null," + `{"jsonrpc":"2.0","id":999,"result":"0x1"},{"jsonrpc":"2.0","id":"1","result":"0x1"},` + b[1:]
		},
		"an error each": func(c []rawCall) (int, string) {
			return 200, batchOf(c, []int{0, 1, 2, 3}, map[int]string{1: `"error":{"code":-32601,"message":"the method eth_getBlockReceipts does not exist"}`,
				2: `"jsonrpc":"2.0"`})
		},
		"a malformed result": func(c []rawCall) (int, string) {
			return 200, batchOf(c, []int{0, 1, 2, 3}, map[int]string{0: `"result":{"number":"0x01"}`, 3: `"result":"0x"`})
		},
		// results decoded in place, in the pass that reads the answer,
		// and what must undo or defer that
		"id after result": func(c []rawCall) (int, string) {
			parts := []string{`{"result":` + blockJSON + `,"jsonrpc":"2.0","id":` + string(c[0].ID) + `}`,
				`{"result":[` + logJSON + `],"id":` + string(c[2].ID) + `}`, answerOf(c[3].ID, `"result":null`)}
			return 200, "[" + strings.Join(parts, ",") + "]"
		},
		"result twice, result and error, id twice": func(c []rawCall) (int, string) {
			return 200, batchOf(c, []int{0, 1, 2, 3}, map[int]string{0: `"result":` + blockJSON + `,"result":{"number":"0x1"}`,
				2: `"result":[` + logJSON + `],"error":{"code":-32000,"message":"boom"}`,
				3: `"result":` + blockJSON + `,"id":` + string(c[1].ID)})
		},
		"a result of the wrong type, then a good one": func(c []rawCall) (int, string) {
			return 200, batchOf(c, []int{0, 0, 1, 2, 3}, map[int]string{0: `"result":"0x1"`})
		},
		"one answer with two ids, the first's call answered after": func(c []rawCall) (int, string) {
			other := strings.Replace(blockJSON, `"number":"0x10"`, `"number":"0x11"`, 1)
			return 200, batchOf(c, []int{0, 0, 1, 2}, map[int]string{0: `"result":` + blockJSON + `,"id":` + string(c[3].ID),
				1: `"result":` + other})
		},
		"malformed after results in place": func(c []rawCall) (int, string) {
			b := batchOf(c, []int{0, 1, 2, 3}, map[int]string{3: `"result":` + blockJSON + `,"x":[}`})
			return 200, b
		},
		"not an array": func([]rawCall) (int, string) { return 200, `"batch"` },
		"truncated":    func(c []rawCall) (int, string) { b := batchOf(c, []int{0, 1, 2, 3}, nil); return 200, b[:len(b)-9] },
		"a number":     func(c []rawCall) (int, string) { return 200, "[1]" },
		"HTTP 413":     func([]rawCall) (int, string) { return 413, "too large" },
		"HTTP 429":     func([]rawCall) (int, string) { return 429, `{"error":"rate"}` },
	}
	for name, shape := range shapes {
		n := &rawNode{answer: func(c []rawCall, _ bool) (int, string) { return shape(c) }}
		g, m := clients(t, n)
		gb, mb := batchElems(), batchElems()
		ge, me := g.BatchCallContext(context.Background(), gb), m.BatchCallContext(context.Background(), mb)
		compareBatch(t, name, ge, me, gb, mb)
	}
}

// comparable reports whether go-ethereum's client, failing with err,
// left the result as it was (so the client must too): no error, or an
// error object or HTTP status rather than a result it could not decode
// (encoding/json writes what it can of a malformed value, and the
// indexer reads no result of a failed call).
func comparable(err error) bool {
	var re rpc.Error
	var he rpc.HTTPError
	return err == nil || errors.As(err, &re) || errors.As(err, &he)
}

// batchElems are four calls of the kinds the indexer batches.
func batchElems() []rpc.BatchElem {
	var h header
	var hp *header
	var lgs []types.Log
	var rs []*types.Receipt
	return []rpc.BatchElem{{Method: "eth_getBlockByNumber", Args: []any{"0x10", true}, Result: &h},
		{Method: "eth_getBlockReceipts", Args: []any{"0x10"}, Result: &rs},
		{Method: "eth_getLogs", Args: []any{map[string]any{"blockHash": common.HexToHash(h1)}}, Result: &lgs},
		{Method: "eth_getBlockByHash", Args: []any{common.HexToHash(h1), false}, Result: &hp}}
}

// batchOf answers calls in the order given (indexes into calls; an index
// past them answers an id nobody asked), each as batchElems expects
// unless rest says otherwise.
func batchOf(calls []rawCall, order []int, rest map[int]string) string {
	results := []string{blockJSON, "[]", "[" + logJSON + "]", blockJSON}
	parts := make([]string, 0, len(order))
	for k, i := range order {
		r, ok := rest[k]
		if !ok {
			r = `"result":` + results[i%len(results)]
		}
		id := json.RawMessage("12345")
		if i < len(calls) {
			id = calls[i].ID
		}
		parts = append(parts, answerOf(id, r))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// A batch answered with one error object (a node refusing batches, or
// throttled) fails with that error, which the node's classifiers read
// (go-ethereum fails to decode it instead).
func TestClientBatchRefusedWithOneErrorObject(t *testing.T) {
	for _, c := range []struct {
		body  string
		check func(error) bool
	}{
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"batch requests are not supported"}}`, methodMissing},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"rate limit exceeded"}}`, rateLimited},
		{`{"jsonrpc":"2.0","id":null,"result":"0x1"}`, func(err error) bool { return strings.Contains(err.Error(), "single answer") }},
	} {
		_, m := clients(t, &rawNode{answer: func([]rawCall, bool) (int, string) { return 200, c.body }})
		err := m.BatchCallContext(context.Background(), batchElems())
		if err == nil || !c.check(err) {
			t.Errorf("%s: %v", c.body, err)
		}
	}
}

// The client sends what go-ethereum's sends, byte for byte, for the
// calls the indexer makes: the same ids, params, headers.
func TestClientSendsWhatGoEthereumSends(t *testing.T) {
	n := &rawNode{answer: func(c []rawCall, batch bool) (int, string) {
		if batch {
			return 200, "[]"
		}
		return 200, answerOf(c[0].ID, `"result":null`)
	}}
	g, m := clients(t, n)
	addr, hash := common.HexToAddress(a1), common.HexToHash(h1)
	q := rangeQuery(16, 1<<40, []common.Address{addr, addr}, []common.Hash{hash})
	byHash := ethereum.FilterQuery{BlockHash: &hash, Topics: [][]common.Hash{{hash}}}
	calls := []struct {
		method string
		args   []any
	}{
		{"eth_blockNumber", nil}, {"eth_getLogs", []any{filterArg(q)}}, {"eth_getLogs", []any{filterArg(byHash)}},
		{"eth_call", []any{map[string]any{"to": addr, "data": hexutil.Bytes{1, 2, 0xff}}, map[string]any{"blockHash": hash}}},
		{"eth_getBlockByNumber", []any{blockArg(1 << 33), true}}, {"eth_getBlockByHash", []any{hash, false}},
		{"eth_x", []any{"<&>\u2028\"", 1.5, big.NewInt(-3), []string{"a"}, nil, map[string]any{"b": []any{nil}, "a": hexutil.Bytes(nil)}}},
	}
	var sent [2][]string
	for k, c := range []NodeClient{g, m} {
		n.bodies = nil
		for _, call := range calls {
			var out any
			_ = c.CallContext(context.Background(), &out, call.method, call.args...)
		}
		elems := make([]rpc.BatchElem, len(calls))
		for i, call := range calls {
			elems[i] = rpc.BatchElem{Method: call.method, Args: call.args, Result: new(any)}
		}
		_ = c.BatchCallContext(context.Background(), elems)
		sent[k] = n.bodies
		for _, h := range n.heads {
			if h.Get("Content-Type") != "application/json" || h.Get("Accept") != "application/json" {
				t.Errorf("headers %v", h)
			}
		}
	}
	if len(sent[1]) != len(calls)+1 || !reflect.DeepEqual(sent[0], sent[1]) {
		t.Errorf("go-ethereum sent\n%s\nthe client sent\n%s", strings.Join(sent[0], "\n"), strings.Join(sent[1], "\n"))
	}
}

// A URL's user and password reach the node as basic authentication, as
// through go-ethereum's client; a URL that is not http(s) is refused
// without quoting it.
func TestClientAuthAndURL(t *testing.T) {
	n := &rawNode{answer: func(c []rawCall, _ bool) (int, string) { return 200, answerOf(c[0].ID, `"result":"0x1"`) }}
	srv := httptest.NewServer(n)
	defer srv.Close()
	c, err := NewClient(strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	var h hexutil.Uint64
	if err := c.CallContext(context.Background(), &h, "eth_blockNumber"); err != nil || h != 1 {
		t.Fatal(h, err)
	}
	if u, p, ok := (&http.Request{Header: n.heads[0]}).BasicAuth(); !ok || u != "user" || p != "s3cret" {
		t.Errorf("basic auth %q %q %v", u, p, ok)
	}
	if _, err := NewClient("ws://user:s3cret@host/", nil); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("ws URL: %v", err)
	}
}

// FuzzBatchAnswer: any answer to a batch is read without a panic, a
// result is kept only for a call asked, and each call's error and value
// are go-ethereum's client's on the same bytes (where both read the
// answer: on some answers this client is kinder, as Client says).
func FuzzBatchAnswer(f *testing.F) {
	calls := []rawCall{{ID: json.RawMessage("1")}, {ID: json.RawMessage("2")}, {ID: json.RawMessage("3")}, {ID: json.RawMessage("4")}}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1}, {1, 1, 5}} {
		f.Add([]byte(batchOf(calls, order, nil)))
	}
	f.Add([]byte(batchOf(calls, []int{0, 1, 2, 3}, map[int]string{0: `"result":` + blockJSON + `,"result":{"number":"0x1"}`,
		2: `"result":[` + logJSON + `],"error":{"code":-32000,"message":"boom"}`, 3: `"result":` + blockJSON + `,"id":2`})))
	f.Add([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"batch requests are not supported"}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"result":` + blockJSON + `,"id":4},{"jsonrpc":"2.0","id":1,"result":{"number":"0x2"}}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		b := batchElems()
		ms, err := batchAnswer(body, 1, b)
		if err == nil {
			for i, m := range ms {
				if m == nil {
					continue
				}
				if k, ok := idIndex(m.id, 1, len(b)); !ok || k != i {
					t.Fatalf("answer %s kept for call %d", m.id, i)
				}
			}
		}
		// the values each client takes from the same bytes (each
		// client's calls numbered from 1), over no network
		hc := &http.Client{Transport: answerWith(body)}
		g, err := rpc.DialOptions(context.Background(), "http://node.invalid", rpc.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		m, _ := NewClient("http://node.invalid", hc)
		gb, mb := batchElems(), batchElems()
		ge, me := g.BatchCallContext(context.Background(), gb), m.BatchCallContext(context.Background(), mb)
		if ge == nil && me == nil {
			compareBatch(t, "fuzzed answer", ge, me, gb, mb)
		}
	})
}

// answerWith is a transport answering every request with body.
type answerWith []byte

func (a answerWith) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(a))), ContentLength: int64(len(a)), Request: r}, nil
}

// compareBatch checks the two clients' batch outcomes alike: the
// exchange's error, each call's error, and each result go-ethereum took.
func compareBatch(t *testing.T, name string, ge, me error, gb, mb []rpc.BatchElem) {
	t.Helper()
	sameError(t, name, ge, me)
	if ge != nil {
		for i := range gb {
			gb[i].Error = nil // nothing taken: every result as it was
		}
	}
	for i := range gb {
		sameError(t, fmt.Sprintf("%s: call %d", name, i), gb[i].Error, mb[i].Error)
		if comparable(gb[i].Error) && !reflect.DeepEqual(normal(reflect.ValueOf(gb[i].Result).Elem().Interface()),
			normal(reflect.ValueOf(mb[i].Result).Elem().Interface())) {
			t.Errorf("%s: call %d: go-ethereum %+v, client %+v", name, i, gb[i].Result, mb[i].Result)
		}
	}
}

// One answer naming two ids is the later id's (encoding/json keeps the
// last member), and its result must not land in, nor later wipe, the
// result of the call its first id named, which another answer gives.
func TestClientOneAnswerWithTwoIDs(t *testing.T) {
	n := &rawNode{answer: func(c []rawCall, _ bool) (int, string) {
		return 200, `[{"jsonrpc":"2.0","id":` + string(c[0].ID) + `,"result":"0xaa","id":` + string(c[1].ID) + `},` +
			answerOf(c[0].ID, `"result":"0xbb"`) + `]`
	}}
	g, m := clients(t, n)
	elems := func() []rpc.BatchElem {
		var r0, r1 hexutil.Bytes
		return []rpc.BatchElem{{Method: "eth_call", Result: &r0}, {Method: "eth_call", Result: &r1}}
	}
	gb, mb := elems(), elems()
	ge, me := g.BatchCallContext(context.Background(), gb), m.BatchCallContext(context.Background(), mb)
	compareBatch(t, "two ids", ge, me, gb, mb)
	if got := *mb[0].Result.(*hexutil.Bytes); got.String() != "0xbb" || mb[0].Error != nil {
		t.Errorf("call 0: %v, %v; want 0xbb (its own answer)", got, mb[0].Error)
	}
	if got := *mb[1].Result.(*hexutil.Bytes); got.String() != "0xaa" || mb[1].Error != nil {
		t.Errorf("call 1: %v, %v; want 0xaa (the answer's last id)", got, mb[1].Error)
	}
}

// A call that fails (an error object, a result that does not decode, a
// malformed answer) leaves the caller's value as it was, the backing
// array of a slice included: go-ethereum writes no result on an error
// object, and the indexer may hand in a value it still holds.
func TestClientLeavesValueOnError(t *testing.T) {
	for name, rest := range map[string]string{
		"error object":       `"result":[` + logJSON + `],"error":{"code":-32000,"message":"boom"}`,
		"a malformed log":    `"result":[` + logJSON + `,{"address":"0x1"}]`,
		"a malformed answer": `"result":[` + logJSON + `],"x":[}`,
		"bytes for logs":     `"result":"0x01"`,
	} {
		n := &rawNode{answer: func(c []rawCall, batch bool) (int, string) {
			if batch {
				return 200, "[" + answerOf(c[0].ID, rest) + "]"
			}
			return 200, answerOf(c[0].ID, rest)
		}}
		_, m := clients(t, n)
		old := []types.Log{{Address: common.HexToAddress("0x01"), Data: []byte{9}}, {Index: 7}}
		held := old[:2:2]
		lgs := old[:1]
		if err := m.CallContext(context.Background(), &lgs, "eth_getLogs"); err == nil {
			t.Fatalf("%s: single call: no error", name)
		}
		b := []rpc.BatchElem{{Method: "eth_getLogs", Result: &lgs}}
		if err := m.BatchCallContext(context.Background(), b); err == nil && b[0].Error == nil {
			t.Fatalf("%s: batch: no error", name)
		}
		if len(lgs) != 1 || &lgs[0] != &old[0] || lgs[0].Data[0] != 9 || held[1].Index != 7 || held[0].Address != common.HexToAddress("0x01") {
			t.Errorf("%s: the caller's logs were written: %+v", name, held)
		}
	}
}
