package demo

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// post sends one GraphQL request to rt and decodes the answer.
func post(t *testing.T, rt http.RoundTripper, op string, vars map[string]any) (map[string]json.RawMessage, []string, error) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"operationName": op, "variables": vars, "query": "ignored"})
	req, _ := http.NewRequest(http.MethodPost, "https://demo-subgraph.invalid/42161", strings.NewReader(string(body)))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, nil, err
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
	return out.Data, msgs, nil
}

// The demo's subgraph engine pages the recorded entities as Graph Node
// does: newest first, skip then first, exact Bytes matching, and argument
// errors in an HTTP 200.
func TestGraphEngine(t *testing.T) {
	tr, err := Transports(42161)
	if err != nil {
		t.Fatal(err)
	}
	alice := map[string]any{"user": "0xa11ce00000000000000000000000000000000001", "market": "0x501b03bdb431154b8df17bf1c00756e3a8f21744"}
	page := func(first, skip int) []string {
		v := map[string]any{"first": first, "skip": skip}
		for k, x := range alice {
			v[k] = x
		}
		data, errs, err := post(t, tr.Subgraph, "ExerciseHistory", v)
		if err != nil || errs != nil {
			t.Fatalf("first %d skip %d: %v %v", first, skip, err, errs)
		}
		var list []struct{ ID, Timestamp string }
		_ = json.Unmarshal(data["exercises"], &list)
		ids := make([]string, len(list))
		for i, e := range list {
			ids[i] = e.ID
		}
		return ids
	}
	all := page(1000, 0)
	if len(all) != 8 {
		t.Fatalf("alice has %d recorded exercises, the README says 8", len(all))
	}
	if got := page(3, 2); strings.Join(got, ",") != strings.Join(all[2:5], ",") {
		t.Errorf("first 3 skip 2: %v, want %v", got, all[2:5])
	}
	if got := page(5, 7); len(got) != 1 || got[0] != all[7] {
		t.Errorf("past the end: %v", got)
	}
	v := map[string]any{"first": 1001, "skip": 0, "user": alice["user"], "market": alice["market"]}
	if _, errs, _ := post(t, tr.Subgraph, "ExerciseHistory", v); len(errs) != 1 || !strings.Contains(errs[0], "between 0 and 1000") {
		t.Errorf("first 1001: %v", errs)
	}
	v = map[string]any{"first": 5, "skip": 0, "user": strings.ToUpper(alice["user"].(string)), "market": alice["market"]}
	if data, _, _ := post(t, tr.Subgraph, "ExerciseHistory", v); string(data["exercises"]) != "[]" {
		t.Errorf("upper-case Bytes matched: %s", data["exercises"])
	}
	if _, _, err := post(t, tr.Subgraph, "SomethingElse", nil); !errors.Is(err, problem.ErrNotRecorded) {
		t.Errorf("unknown operation: %v", err)
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
