package indexertest

import (
	"bytes"
	"fmt"
	"maps"
	"math/big"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// servePair is a scale node served as it is and the same history served
// by the reference (refScale: the reflective encoder and jsonrpc.Handler).
type servePair struct {
	fast, ref *Scale
}

func newServePair(t testing.TB, maxLogs int) servePair {
	t.Helper()
	mk := func() *Scale {
		var hs []*Handler
		for i := range 2 {
			h, err := NewHandler(common.BigToAddress(big.NewInt(int64(0xa0001+i))), common.BigToAddress(big.NewInt(int64(0xb0001+i))))
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, h)
		}
		s := ArbitrumScale(42161, hs, 20_000)
		s.Head = 1_000_000
		s.MaxLogs = maxLogs
		slot0 := hs[0].Slot0(big.NewInt(1<<40), -7)
		s.Call = func(to common.Address, data []byte, n uint64) ([]byte, bool) {
			if n%2 == 1 {
				return []byte{}, false // an empty answer (a call to no code)
			}
			return slot0(to, data, n)
		}
		return s
	}
	return servePair{fast: mk(), ref: mk()}
}

type served struct {
	code int
	kind string
	body []byte
}

func serve(h http.Handler, body string) served {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", strings.NewReader(body)))
	return served{w.Code, w.Header().Get("Content-Type"), w.Body.Bytes()}
}

// check sends body to both and fails on any difference in the answer.
func (p servePair) check(t *testing.T, body string) {
	t.Helper()
	got, want := serve(p.fast, body), serve(refScale{p.ref}, body)
	if got.code != want.code || got.kind != want.kind || !bytes.Equal(got.body, want.body) {
		t.Fatalf("request %.300q:\nanswered %d %s %.600s\nwant      %d %s %.600s", body, got.code, got.kind, got.body, want.code, want.kind, want.body)
	}
}

// counted fails unless both counted the same requests and calls.
func (p servePair) counted(t *testing.T) {
	t.Helper()
	if got, want := p.fast.Requests(), p.ref.Requests(); !maps.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	for _, m := range []string{"eth_call", "eth_getLogs", "eth_getBlockByNumber", "eth_getBlockByHash", "eth_getBlockReceipts", "eth_chainId", ""} {
		if got, want := p.fast.Calls(m), p.ref.Calls(m); got != want {
			t.Errorf("%q: %d calls, want %d", m, got, want)
		}
	}
}

func q(v any) string {
	switch v := v.(type) {
	case uint64:
		return fmt.Sprintf(`"0x%x"`, v)
	case common.Hash:
		return `"` + v.Hex() + `"`
	case common.Address:
		return `"` + strings.ToLower(v.Hex()) + `"`
	}
	return fmt.Sprint(v)
}

func rpcCall(id int, method string, params ...string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":[%s]}`, id, method, strings.Join(params, ","))
}

// interesting are blocks of every kind: a protocol event's, a swap's, one
// holding both, empty ones, the history's ends and past the head.
func interesting(s *Scale) []uint64 {
	out := []uint64{0, s.First(), s.First() + 1, s.eventBlock(3), s.eventBlock(3) + 1, s.swapBlock(2), s.Head - 1, s.Head, s.Head + 1}
	for i := uint64(0); i < s.Events; i++ {
		if n := s.eventBlock(i); s.swapBlock(s.firstSwap(n)) == n {
			return append(out, n)
		}
	}
	return out
}

// corpus are requests of every method the node answers, well and badly
// formed, one at a time and in batches.
func corpus(s *Scale) []string {
	var out []string
	h := s.Markets[0]
	addr := []string{"", `"address":` + q(h.Address) + `,`, `"address":[` + q(h.Pool) + `],`, `"address":[` + q(s.Markets[1].Address) + `,` + q(s.Markets[1].Pool) + `],`, `"address":null,`}
	topics := []string{"", `"topics":[[` + q(h.SwapTopic()) + `]],`, `"topics":[null],`, `"topics":[` + q(common.Hash{1}) + `],`}
	for i, from := range []uint64{s.First() - 5, s.First() + 3_000, s.Head - 2_000} {
		for _, width := range []uint64{1, 2_500, 10_000, 10_001} {
			for k, a := range addr {
				t := topics[(i+k)%len(topics)]
				out = append(out, rpcCall(k, "eth_getLogs", fmt.Sprintf(`{%s%s"fromBlock":%s,"toBlock":%s}`, a, t, q(from), q(from+width-1))))
			}
		}
	}
	out = append(out, rpcCall(1, "eth_getLogs", `{"fromBlock":"0x10"}`), rpcCall(1, "eth_getLogs", `{"fromBlock":"0x10","toBlock":"0x5"}`), rpcCall(1, "eth_getLogs"),
		rpcCall(1, "eth_getLogs", `{"blockHash":`+q(s.Hash(s.eventBlock(3)))+`}`), rpcCall(1, "eth_getLogs", `{"blockHash":`+q(common.Hash{7})+`}`), rpcCall(1, "eth_getLogs", `5`))
	out = append(out, oddFilters(s)...)
	var batch []string
	for _, n := range interesting(s) {
		bh := s.Hash(n)
		for _, full := range []string{"false", "true", `"true"`, "null"} {
			out = append(out, rpcCall(2, "eth_getBlockByNumber", q(n), full))
		}
		out = append(out, rpcCall(3, "eth_getBlockByHash", q(bh), "true"), rpcCall(3, "eth_getBlockByHash", q(bh)), rpcCall(4, "eth_getBlockReceipts", q(n)),
			rpcCall(5, "eth_getTransactionReceipt", q(txHash(bh, 0))), rpcCall(5, "eth_getTransactionReceipt", q(txHash(bh, 1))), rpcCall(5, "eth_getTransactionReceipt", q(bh)))
		batch = append(batch, rpcCall(6, "eth_getBlockByNumber", q(n), "false"), rpcCall(7, "eth_getBlockReceipts", q(n)))
		for _, at := range []string{`{"blockHash":` + q(bh) + `}`, q(n), `"latest"`, `{"blockNumber":` + q(n) + `}`, `null`, `{"blockHash":null}`, `{"blockHash":"0x12"}`, `5`, `{"blockHash":` + q(bh) + `,"blockHash":` + q(common.Hash{}) + `}`} {
			out = append(out, rpcCall(8, "eth_call", `{"to":`+q(h.Pool)+`,"data":"0x3850c7bd"}`, at))
		}
	}
	out = append(out, "["+strings.Join(batch, ",")+"]", "[\n"+strings.Join(batch, " ,\n\t")+"\r\n]\n")
	return append(out, oddCalls(s)...)
}

// oddCalls are calls of odd shapes: tags, messages, ids and envelopes.
func oddCalls(s *Scale) []string {
	h := s.Markets[0]
	at := `{"blockHash":` + q(s.Hash(s.eventBlock(3))) + `}`
	var out []string
	for _, tag := range []string{`"latest"`, `"finalized"`, `"safe"`, `"pending"`, `"0x"`, `"0x0"`, `"0x00"`, `"0X1f"`, `"0x1g"`, `12`, `null`, `"\u0030x1"`, `"é"`, `{}`} {
		out = append(out, rpcCall(1, "eth_getBlockByNumber", tag, "false"), rpcCall(1, "eth_getBlockReceipts", tag), rpcCall(1, "eth_getBlockByHash", tag), rpcCall(1, "eth_getTransactionReceipt", tag))
	}
	pool := q(h.Pool)
	for _, msg := range []string{`{"to":` + pool + `,"data":"0x3850c7bd"}`, `{"To":` + pool + `,"DATA":"0x3850c7bd"}`, `{"from":"0x01","to":` + pool + `,"data":"0x3850c7bd","gas":"0x5"}`,
		`{"to":null,"data":"0x3850c7bd"}`, `{"to":` + pool + `,"data":null}`, `{"to":` + pool + `}`, `{}`, `null`, `[]`, `"x"`, `{"to":"0x12","data":"0x3850c7bd"}`,
		`{"to":` + pool + `,"data":"0x3850c7bd","to":"0x0000000000000000000000000000000000000001"}`, `{"t\u006f":` + pool + `,"data":"0x3850c7bd"}`, `{"tö":1,"to":` + pool + `,"data":"0x3850c7bd"}`,
		`{"to":` + pool + `,"data":"0x3850c7b"}`, `{"to":` + pool + `,"data":"0xzz"}`, `{"input":"0x3850c7bd","to":` + pool + `}`} {
		out = append(out, rpcCall(9, "eth_call", msg, at), rpcCall(9, "eth_call", msg, `"latest"`), rpcCall(9, "eth_call", msg))
	}
	ok := rpcCall(1, "eth_chainId")
	for _, id := range []string{`0`, `-5`, `1.5`, `1e3`, `"abc"`, `"a<b>&"`, `null`, `{"x": [1, 2]}`, `[ 1 ,2 ]`, `18446744073709551617`, `true`} {
		out = append(out, `{"jsonrpc":"2.0","id":`+id+`,"method":"eth_blockNumber","params":[]}`)
	}
	return append(out, ok, " \n"+ok+"\t\n", `{"method":"eth_chainId"}`, `{"id":1,"method":"eth_chainId","params":null}`, `{"id":1,"method":"eth_chainId","params":{}}`,
		`{"id":1,"method":"eth_chainId","params":[],"extra":[1,{"a":"b"}]}`, `{"id":1,"Method":"eth_chainId"}`, `{"id":1,"method":"eth_chainId","id":2}`,
		`{"id":1,"method":null}`, `{"id":1,"method":5}`, `{"id":1,"method":"eth_foo<&>"}`, `{"id":1,"method":"eth_c\u0061ll"}`, `{"id":1,"method":"ethé"}`,
		`{"id":1,"method":"eth_chainId","jsonrpc":2}`, `[]`, `[ ]`, `[null]`, `[1]`, `[`+ok+`,]`, `[`+ok+`,`+ok+`]`, `null`, ``, `{}`, `{`, `[`, `"x"`, ok+`x`, ok+ok,
		`[`+ok+`]x`, `{"id":01,"method":"eth_chainId"}`, `{"id":1,"method":"eth_chainId","params":[1,]}`, `{"id":1,"method":"eth_chainId","params":[tru]}`,
		"{\"id\":1,\"method\":\"eth_chainId\",\"params\":[\"a\x01\"]}", strings.Repeat("[", 70)+strings.Repeat("]", 70),
		`{"id":1,"method":"eth_chainId","params":[`+strings.Repeat("[", 70)+strings.Repeat("]", 70)+`]}`)
}

// The scale node's hand-written serving answers every request, well or
// badly formed, with the bytes (and status) the reflective encoder and
// encoding/json's reading gave, and counts the same requests and calls.
func TestScaleServesAsTheReference(t *testing.T) {
	for _, maxLogs := range []int{10_000, 3} {
		p := newServePair(t, maxLogs)
		if len(interesting(p.fast)) != 10 {
			t.Fatal("no block holds both a protocol event and swaps")
		}
		for _, body := range corpus(p.fast) {
			p.check(t, body)
		}
		p.counted(t)
	}
}

// Mutated requests (bytes dropped, repeated, swapped for JSON's own
// characters, bodies cut short) are read and answered as encoding/json
// and the reference read and answer them.
func TestScaleServesMutatedRequestsAsTheReference(t *testing.T) {
	p := newServePair(t, 10_000)
	bodies := corpus(p.fast)
	rng := rand.New(rand.NewSource(45))
	const marks = `{}[],:"\ 0123456789-+.eEtrufalsn` + "\t\n\x00\x7fé"
	n := 4_000
	if testing.Short() {
		n = 400
	}
	for range n {
		b := []byte(bodies[rng.Intn(len(bodies))])
		for range 1 + rng.Intn(3) {
			if len(b) == 0 {
				break
			}
			i := rng.Intn(len(b))
			switch rng.Intn(4) {
			case 0:
				b = append(b[:i:i], b[i+1:]...)
			case 1:
				b = append(b[:i:i], append([]byte{marks[rng.Intn(len(marks))]}, b[i:]...)...)
			case 2:
				b[i] = marks[rng.Intn(len(marks))]
			default:
				b = b[:i]
			}
		}
		p.check(t, string(b))
	}
	p.counted(t)
}

// FuzzScaleServe checks any body against the reference (its seeds run
// with the tests: go test -fuzz FuzzScaleServe explores further).
func FuzzScaleServe(f *testing.F) {
	p := newServePair(f, 10_000)
	for _, body := range corpus(p.fast)[:40] {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) { p.check(t, body) })
}

// oddFilters are eth_getLogs filters of odd shapes: keys misspelt or
// repeated, values of the wrong type, nulls, empty sets.
func oddFilters(s *Scale) []string {
	h := s.Markets[0]
	rng := `"fromBlock":` + q(s.First()) + `,"toBlock":` + q(s.First()+3_000)
	var out []string
	for _, extra := range []string{``, `"address":` + q(h.Address), `"address":"0x12"`, `"address":[null]`, `"address":[]`, `"address":5`, `"address":[` + q(h.Address) + `,5]`,
		`"topics":"x"`, `"topics":[[]]`, `"topics":[[null]]`, `"topics":[5]`, `"topics":[["0x12"]]`, `"topics":null`, `"topics":[null,[` + q(common.Hash{}) + `]]`,
		`"topics":[` + q(h.SwapTopic()) + `,null]`, `"topics":[[` + q(h.SwapTopic()) + `,` + q(common.Hash{}) + `]]`, `"blockHash":null`, `"extra":1`,
		`"FromBlock":"0x1"`, `"fromBlock":"0x2"`, `"toBlock":null`, `"address":null`, `"blockHash":` + q(s.Hash(s.eventBlock(2))), `"blockHash":"0x1"`} {
		if extra != "" {
			extra = "," + extra
		}
		out = append(out, rpcCall(1, "eth_getLogs", "{"+rng+extra+"}"))
	}
	for _, f := range []string{`{"fromBlock":null,"toBlock":"0x5"}`, `{"fromBlock":"0x01","toBlock":"0x2"}`, `{"fromBlock":1,"toBlock":2}`, `{}`, `null`, `[]`,
		`{"fromBlock":"0x1","toBlock":"0x2","address":["0x12",5]}`, `{"fromBlock":"0x1","toBlock":"0x2","address":[` + q(h.Address) + `],"topics":[[5]]}`} {
		out = append(out, rpcCall(1, "eth_getLogs", f))
	}
	return out
}
