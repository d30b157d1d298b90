package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

func TestRPCRecordThenReplayEchoesIDs(t *testing.T) {
	t.Parallel()
	real := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body, _ := io.ReadAll(r.Body)
		var batch []map[string]any
		if err := json.Unmarshal(body, &batch); err != nil {
			t.Fatal(err)
		}
		out := make([]map[string]any, len(batch))
		for i, m := range batch {
			out[i] = map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": "0x" + m["method"].(string)[4:]}
		}
		b, _ := json.Marshal(out)
		return &http.Response{StatusCode: 200, Body: io.NopCloser(bytes.NewReader(b)), Header: http.Header{}}, nil
	})
	rec := &RPCRecorder{Real: real}
	send(t, rec, `[{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x01","data":"0x02"},"latest"]},{"jsonrpc":"2.0","id":2,"method":"eth_abcd","params":[]}]`)
	c := rec.Cassette()
	raw, _ := json.Marshal(c)
	rp, err := LoadRPCCassette(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Different ids, same params in another key order: answered, ids echoed.
	got := send(t, rp, `{"jsonrpc":"2.0","id":77,"method":"eth_call","params":[{"data":"0x02","to":"0x01"},"latest"]}`)
	var one map[string]any
	if err := json.Unmarshal(got, &one); err != nil {
		t.Fatal(err)
	}
	if one["id"].(float64) != 77 || one["result"] != "0xcall" {
		t.Fatalf("replay %s", got)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://x", bytes.NewBufferString(`{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x03"},"latest"]}`))
	if _, err := rp.RoundTrip(req); !errors.Is(err, problem.ErrNotRecorded) {
		t.Fatalf("unrecorded call: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func send(t *testing.T, rt http.RoundTripper, body string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://x", bytes.NewBufferString(body))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return b
}
