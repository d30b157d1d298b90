package demo

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/queries"
)

// post sends one of the gateway's documents to rt and decodes the answer.
func post(t *testing.T, rt http.RoundTripper, doc string, vars map[string]any) (map[string]json.RawMessage, []string) {
	t.Helper()
	d := queries.Embedded()[doc]
	body, _ := json.Marshal(map[string]any{"operationName": d.OperationName, "variables": vars, "query": d.Text})
	req, _ := http.NewRequest(http.MethodPost, "https://demo-subgraph.invalid/42161", strings.NewReader(string(body)))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s: %v", resp.StatusCode, raw, err)
	}
	var msgs []string
	for _, e := range out.Errors {
		msgs = append(msgs, e.Message)
	}
	return out.Data, msgs
}

// The demo's subgraph is the Graph Node emulator over the recorded store:
// it pages the entities as Graph Node does (newest first, skip then first),
// reads Bytes as Graph Node parses them (hex of either case), and answers
// argument errors in an HTTP 200.
func TestSubgraphIsTheEmulator(t *testing.T) {
	tr, err := Transports(42161)
	if err != nil {
		t.Fatal(err)
	}
	alice := map[string]any{"user": "0xa11ce00000000000000000000000000000000001", "market": "0x501b03bdb431154b8df17bf1c00756e3a8f21744"}
	page := func(first, skip int, user string) []string {
		data, errs := post(t, tr.Subgraph, queries.ExerciseHistory, map[string]any{"first": first, "skip": skip, "user": user, "market": alice["market"]})
		if errs != nil {
			t.Fatalf("first %d skip %d: %v", first, skip, errs)
		}
		var list []struct{ ID, Timestamp string }
		_ = json.Unmarshal(data["exercises"], &list)
		ids := make([]string, len(list))
		for i, e := range list {
			ids[i] = e.ID
		}
		return ids
	}
	all := page(1000, 0, alice["user"].(string))
	if len(all) != 8 {
		t.Fatalf("alice has %d recorded exercises, the README says 8", len(all))
	}
	if got := page(3, 2, alice["user"].(string)); strings.Join(got, ",") != strings.Join(all[2:5], ",") {
		t.Errorf("first 3 skip 2: %v, want %v", got, all[2:5])
	}
	if got := page(5, 7, alice["user"].(string)); len(got) != 1 || got[0] != all[7] {
		t.Errorf("past the end: %v", got)
	}
	if got := page(1000, 0, "0xA11CE00000000000000000000000000000000001"); len(got) != 8 {
		t.Errorf("checksummed Bytes: %d exercises, Graph Node parses the hex and finds 8", len(got))
	}
	v := map[string]any{"first": 1001, "skip": 0, "user": alice["user"], "market": alice["market"]}
	if _, errs := post(t, tr.Subgraph, queries.ExerciseHistory, v); len(errs) != 1 || errs[0] != "The `first` argument must be between 0 and 1000, but is 1001" {
		t.Errorf("first 1001: %v", errs)
	}
	data, errs := post(t, tr.Subgraph, queries.Meta, nil)
	if errs != nil || !strings.Contains(string(data["_meta"]), `"hasIndexingErrors":false`) {
		t.Errorf("meta: %s %v", data["_meta"], errs)
	}
}

// The demo's node answers a batch it never saw whole from its calls, and
// refuses a call it never saw.
func TestNodeAnswersCallByCall(t *testing.T) {
	tr, err := Transports(42161)
	if err != nil {
		t.Fatal(err)
	}
	call := func(body string) (string, error) {
		req, _ := http.NewRequest(http.MethodPost, "https://demo-rpc.invalid/42161", strings.NewReader(body))
		resp, err := tr.RPC.RoundTrip(req)
		if err != nil {
			return "", err
		}
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	// slot0() of the demo pool: recorded only inside batches.
	out, err := call(`{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[{"to":"0xc6962004f452be9203591991d15f6b388e09e8d0","data":"0x3850c7bd"},"latest"]}`)
	if err != nil || !strings.Contains(out, `"id":7`) || !strings.Contains(out, `"result":"0x`) {
		t.Fatalf("slot0: %s %v", out, err)
	}
	if _, err := call(`{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001","data":"0x3850c7bd"},"latest"]}`); !errors.Is(err, problem.ErrNotRecorded) {
		t.Errorf("a call never recorded: %v", err)
	}
	if _, err := call(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]}`); !errors.Is(err, problem.ErrNotRecorded) {
		t.Errorf("a method never recorded: %v", err)
	}
}
