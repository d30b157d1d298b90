package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/replay"
)

// recordedRPC is the demo chain's RPC cassette as embedded.
func recordedRPC(t *testing.T) []byte {
	t.Helper()
	raw, err := fs.ReadFile(recordings, "recordings/42161/rpc.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Every request the cassette holds is answered by the node, from its bytes,
// exactly as the cassette's own replayer (which holds the interactions as
// decoded JSON) answers it: alone, and all of them in one batch.
func TestHeldAnswersMatchTheCassette(t *testing.T) {
	raw := recordedRPC(t)
	n, err := newNode(raw)
	if err != nil {
		t.Fatal(err)
	}
	cassette, err := replay.LoadRPCCassette(raw)
	if err != nil {
		t.Fatal(err)
	}
	var c replay.RPCCassette
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	answer := func(rt http.RoundTripper, body string) string {
		req, _ := http.NewRequest(http.MethodPost, "https://demo-rpc.invalid/42161", strings.NewReader(body))
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	batch := make([]string, len(c.Interactions))
	for i, in := range c.Interactions {
		params := string(in.Params)
		if params == "" {
			params = "[]"
		}
		batch[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, in.Method, params)
		if want, got := answer(cassette, batch[i]), answer(n, batch[i]); got != want {
			t.Fatalf("%s:\n got %.300s\nwant %.300s", batch[i], got, want)
		}
	}
	all := "[" + strings.Join(batch, ",") + "]"
	if want, got := answer(cassette, all), answer(n, all); got != want {
		t.Fatalf("the batch of all %d: got %.300s, want %.300s", len(batch), got, want)
	}
	if len(c.Interactions) < 1000 {
		t.Fatalf("%d interactions: the cassette is not the demo's", len(c.Interactions))
	}
}

// The node holds its answers in a handful of objects with nothing in them
// to scan: the collector marks the recordings in constant time however
// many calls they answer (a map of strings and byte slices was about 9,000
// objects and a megabyte to scan, marked on every collection).
func TestNodeHoldsItsAnswersForTheCollector(t *testing.T) {
	raw := recordedRPC(t)
	live := func() (objects, scan uint64) {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64(), s[1].Value.Uint64()
	}
	objects0, scan0 := live()
	n, err := newNode(raw)
	if err != nil {
		t.Fatal(err)
	}
	objects1, scan1 := live()
	runtime.KeepAlive(n)
	calls := 0
	for range n.calls.all() {
		calls++
	}
	objects, scan := int64(objects1)-int64(objects0), int64(scan1)-int64(scan0)
	t.Logf("%d calls answered: %d objects, %d bytes to scan", calls, objects, scan)
	if calls < 400 {
		t.Fatalf("%d calls indexed: not the demo's recordings", calls)
	}
	if objects > 300 || scan > 64<<10 {
		t.Errorf("the node holds %d objects and %d bytes to scan, want at most 300 and 64 KiB", objects, scan)
	}
}

func TestHeldAnswers(t *testing.T) {
	h := newHeldAnswers()
	h.put("a", callAnswer{ok: true, ret: []byte("one")})
	h.put("b", callAnswer{rpcErr: json.RawMessage(`{"code":3}`)})
	h.put("a", callAnswer{ok: false, ret: []byte("two")}) // replaces, as a map assignment
	h.put("", callAnswer{ok: true, ret: []byte{}})
	h.seal()
	if a, ok := h.get("a"); !ok || a.ok || string(a.ret) != "two" || a.rpcErr != nil {
		t.Errorf("a: %+v %v", a, ok)
	}
	if b, ok := h.get("b"); !ok || string(b.rpcErr) != `{"code":3}` || len(b.ret) != 0 {
		t.Errorf("b: %+v %v", b, ok)
	}
	if _, ok := h.get("c"); ok {
		t.Error("c was never put")
	}
	if e, ok := h.get(""); !ok || !e.ok {
		t.Errorf("the empty key: %+v %v", e, ok)
	}
	var keys []string
	for k := range h.all() {
		keys = append(keys, k)
	}
	if strings.Join(keys, ",") != "a,b," {
		t.Errorf("keys in order put: %q", keys)
	}
	b, _ := h.get("b")
	_ = append(b.rpcErr, 'X') // a caller's append must not write into the arena (b's key follows)
	if b, ok := h.get("b"); !ok || string(b.rpcErr) != `{"code":3}` {
		t.Errorf("an append to an answer changed the arena: %s %v", b.rpcErr, ok)
	}
}
