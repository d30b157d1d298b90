package indexertest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
)

func scaleMarkets(t *testing.T) []*indexertest.Handler {
	t.Helper()
	var out []*indexertest.Handler
	for i := range 2 {
		h, err := indexertest.NewHandler(common.BigToAddress(common.Big1.SetUint64(uint64(0xa0001+i))), common.BigToAddress(common.Big1.SetUint64(uint64(0xb0001+i))))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

// stamps are the blocks' times in logs, which the two nodes set apart.
var stamps = regexp.MustCompile(`"blockTimestamp":"0x[0-9a-f]+"`)

func ask(t *testing.T, h http.Handler, method string, params ...any) json.RawMessage {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", bytes.NewReader(body)))
	var out struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Error != nil {
		return json.RawMessage(`{"error":` + fmt.Sprintf("%q", out.Error.Message) + `}`)
	}
	return stamps.ReplaceAll(out.Result, []byte(`"blockTimestamp":"-"`))
}

// The history the scale node computes on demand is the one a stored
// chain holding the same transactions serves: the same logs for every
// range (swaps and protocol logs interleaved in block order), blocks and
// receipts; and its counts are the ones asked for.
func TestScaleAnswersAsTheStoredHistory(t *testing.T) {
	s := indexertest.ArbitrumScale(42161, scaleMarkets(t), 20_000)
	s.Head = 1_000_000
	c := indexertest.New(s.ID, s.Head)
	c.MaxLogs, c.MaxRange = s.MaxLogs, s.MaxRange
	protocol, swaps := s.Materialize(c)
	if protocol != int(s.Events) || swaps != int(s.Swaps())*len(s.Markets) {
		t.Fatalf("%d protocol transactions and %d swaps, want %d and %d", protocol, swaps, s.Events, s.Swaps()*uint64(len(s.Markets)))
	}
	// 11,000 blocks at four a second: 0.03 days of 60,000 swaps
	if want := 11_000 * 60_000 / 345_600; swaps/2 < want-1 || swaps/2 > want+1 {
		t.Fatalf("%d swaps a pool, want about %d", swaps/2, want)
	}
	hex := func(n uint64) string { return fmt.Sprintf("0x%x", n) }
	for from := s.First() - 5; from <= s.Head; from += 1_000 {
		f := map[string]any{"fromBlock": hex(from), "toBlock": hex(from + 2_499)}
		if got, want := ask(t, s, "eth_getLogs", f), ask(t, c, "eth_getLogs", f); !bytes.Equal(got, want) {
			t.Fatalf("logs of [%d, %d]: %.300s, want %.300s", from, from+2_499, got, want)
		}
	}
	for _, n := range []uint64{s.First() + 1, s.First() + 6, s.Head - 1, s.Head} {
		for _, m := range []string{"eth_getBlockReceipts"} {
			if got, want := ask(t, s, m, hex(n)), ask(t, c, m, hex(n)); !bytes.Equal(got, want) {
				t.Errorf("%s %d: %s, want %s", m, n, got, want)
			}
		}
	}
	var b struct{ Timestamp string }
	if err := json.Unmarshal(ask(t, s, "eth_getBlockByNumber", hex(s.Head), false), &b); err != nil || b.Timestamp != hex(s.Genesis+s.Head/4) {
		t.Errorf("head's timestamp %s, want four blocks a second from %d (%v)", b.Timestamp, s.Genesis, err)
	}
	// a range past the cap is refused as the provider refuses it
	if got := ask(t, s, "eth_getLogs", map[string]any{"fromBlock": hex(s.First()), "toBlock": hex(s.First() + 10_000)}); !strings.Contains(string(got), "limited to a 10000 range") {
		t.Errorf("a range of 10,001 blocks: %s", got)
	}
}

// The scale node finds a block or a transaction by its hash without having
// served it (it remembers nothing: a backfill's blocks asked by hash long
// after, by a mapping's eth_call, are found), and a hash of no block it
// holds, however close to one, is not found.
func TestScaleFindsHashesItNeverServed(t *testing.T) {
	s := indexertest.ArbitrumScale(42161, scaleMarkets(t), 20_000)
	n := s.First() + 1 // the first protocol event's block, never asked
	h := s.Hash(n)
	var b struct {
		Number       string
		Hash         common.Hash
		Transactions []common.Hash
	}
	if err := json.Unmarshal(ask(t, s, "eth_getBlockByHash", h, false), &b); err != nil || b.Hash != h || b.Number != fmt.Sprintf("0x%x", n) || len(b.Transactions) == 0 {
		t.Fatalf("block %d by its hash: %+v (%v)", n, b, err)
	}
	var rc struct {
		TransactionHash common.Hash
		BlockNumber     string
		Logs            []json.RawMessage
	}
	if err := json.Unmarshal(ask(t, s, "eth_getTransactionReceipt", b.Transactions[0]), &rc); err != nil || rc.TransactionHash != b.Transactions[0] || rc.BlockNumber != b.Number || len(rc.Logs) == 0 {
		t.Fatalf("receipt of %s: %+v (%v)", b.Transactions[0].Hex(), rc, err)
	}
	at := map[string]any{"blockHash": h}
	if got := ask(t, s, "eth_call", map[string]any{"to": s.Markets[0].Pool, "data": "0x3850c7bd"}, at); strings.Contains(string(got), "not found") {
		t.Errorf("eth_call at block %d's hash: %s", n, got)
	}
	forged := h
	forged[0] ^= 1 // the same number, another digest
	tx := b.Transactions[0]
	tx[0] ^= 1
	for _, q := range []struct {
		method string
		params []any
	}{{"eth_getBlockByHash", []any{forged, false}}, {"eth_getTransactionReceipt", []any{tx}}, {"eth_getTransactionReceipt", []any{h}}} {
		if got := ask(t, s, q.method, q.params...); string(got) != "null" {
			t.Errorf("%s of a hash no block has: %s", q.method, got)
		}
	}
	if got := ask(t, s, "eth_call", map[string]any{"to": s.Markets[0].Pool, "data": "0x3850c7bd"}, map[string]any{"blockHash": forged}); !strings.Contains(string(got), "header for hash not found") {
		t.Errorf("eth_call at a hash no block has: %s", got)
	}
}
