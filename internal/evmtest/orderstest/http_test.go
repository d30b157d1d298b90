package orderstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// routes is the gateway over the world's chain with its book, as the
// composition root builds it (default configuration).
func (w *world) routes(t *testing.T, chains vocab.Chains) http.Handler {
	t.Helper()
	c := config.Default()
	pins, _ := block.New(nil, block.HeadAges{})
	srv, err := gateway.New(gateway.Options{
		Service: service.New(chains), Pins: pins, Orders: w.svc, RequestTimeout: c.RequestTimeout.D(), StrikesTTL: c.StrikesTTL.D(),
		HistoryTTL: c.HistoryTTL.D(), PrepareTTL: c.PrepareTTL.D(), CacheMaxEntries: c.CacheMaxEntries,
		CacheMaxBytes: c.CacheMaxBytes, StaleGrace: c.StaleGrace.D(), MaxFills: c.MaxFills, MaxLagBlocks: c.MaxLagBlocks,
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

type answer struct {
	code int
	body []byte
	hdr  http.Header
}

func (a answer) errCode() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Error.Code
}

func do(h http.Handler, method, target string, body []byte) answer {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Body.Bytes(), rec.Header()}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTakeProfitThroughTheRoutes: the take-profit end to end over HTTP:
// GET prepare, sign the typed data as a wallet does, POST it (201; the
// same again is 200 and stores nothing), not fillable below the minimum,
// fillable after a price move, the prepared fill sent as built pays alice
// minProfit, and the order then reads filled on GET /clamm/orders.
func TestTakeProfitThroughTheRoutes(t *testing.T) {
	w := newWorld(t)
	h := w.routes(t, w.chains)
	minProfit := big.NewInt(50_000_000)
	q := url.Values{"chainId": {fmt.Sprint(chainID)}, "kind": {"exercise"}, "user": {w.alice.Addr.Hex()},
		"optionMarket": {w.p.Market.Hex()}, "optionId": {w.id.String()}, "minProfit": {minProfit.String()}}
	a := do(h, http.MethodGet, gateway.PathOrdersPrepare+"?"+q.Encode(), nil)
	if a.code != http.StatusOK || a.hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("prepare: %d %s", a.code, a.body)
	}
	var prep orders.Prepared
	if err := json.Unmarshal(a.body, &prep); err != nil {
		t.Fatal(err)
	}
	for _, st := range prep.Before {
		if _, err := w.p.Chain.SendRaw(w.alice, common.HexToAddress(st.Tx.To), hexutil.MustDecode(st.Tx.Data), "step"); err != nil {
			t.Fatal(err)
		}
	}
	so := prep.Order
	so.Signature = sign(t, w.alice, prep.TypedData)
	body := mustJSON(t, so)
	if a := do(h, http.MethodPost, gateway.PathOrders, body); a.code != http.StatusCreated {
		t.Fatalf("POST: %d %s", a.code, a.body)
	}
	if a := do(h, http.MethodPost, gateway.PathOrdersCreate, body); a.code != http.StatusOK {
		t.Fatalf("the duplicate through the hosted shape: %d %s", a.code, a.body)
	}
	if n, _ := w.repo.Count(w.ctx); n != 1 {
		t.Fatalf("the book holds %d orders after one and its duplicate", n)
	}
	fq := gateway.PathOrdersFillable + "?" + url.Values{"chainId": {fmt.Sprint(chainID)}, "swapperId": {w.swapperID}, "filler": {w.filler.Addr.Hex()}}.Encode()
	if a := do(h, http.MethodGet, fq, nil); a.code != http.StatusOK || strings.TrimSpace(string(a.body)) != "[]" {
		t.Fatalf("below the minimum: %d %s", a.code, a.body)
	}
	if _, err := w.p.SwapToTick(w.p.Users[3], 500, w.tick+300); err != nil {
		t.Fatal(err)
	}
	a = do(h, http.MethodGet, fq, nil)
	var fills []orders.Fill
	if err := json.Unmarshal(a.body, &fills); err != nil || a.code != http.StatusOK || len(fills) != 1 || fills[0].Order.Hash != prep.Hash {
		t.Fatalf("after the move: %d %s", a.code, a.body)
	}
	aliceBefore := w.p.Balance(w.p.PutAsset, w.alice.Addr)
	if _, err := w.p.Chain.SendRaw(w.filler, common.HexToAddress(fills[0].Tx.To), hexutil.MustDecode(fills[0].Tx.Data), "fill"); err != nil {
		t.Fatal(err)
	}
	if got := new(big.Int).Sub(w.p.Balance(w.p.PutAsset, w.alice.Addr), aliceBefore); got.Cmp(minProfit) != 0 {
		t.Fatalf("alice got %s, want minProfit %s", got, minProfit)
	}
	lq := gateway.PathOrders + "?" + url.Values{"chainId": {fmt.Sprint(chainID)}, "user": {w.alice.Addr.Hex()}, "status": {"filled"}}.Encode()
	var views []orders.View
	a = do(h, http.MethodGet, lq, nil)
	if err := json.Unmarshal(a.body, &views); err != nil || len(views) != 1 || views[0].Closed == nil || views[0].Closed.Commission != fills[0].Commission {
		t.Fatalf("after the fill: %d %s", a.code, a.body)
	}
}

// TestBadOrdersOverHTTP: each bad POST is a clear 4xx with its code, and
// the book stays empty; then a flood over the per-maker bound (3) stores
// exactly the bound.
func TestBadOrdersOverHTTP(t *testing.T) {
	w := newWorld(t)
	h := w.routes(t, w.chains)
	good := w.takeProfit(t, big.NewInt(10), w.alice)
	mutate := func(f func(*orders.SignedOrder)) []byte {
		so := good
		f(&so)
		return mustJSON(t, so)
	}
	withField := bytes.Replace(mustJSON(t, good), []byte(`{`), []byte(`{"extra":1,`), 1)
	cases := []struct {
		name   string
		body   []byte
		status int
		code   string
	}{
		{"another key's signature", mustJSON(t, w.takeProfit(t, big.NewInt(11), w.bob)), 400, "INVALID_PARAMETER"},
		{"wrong domain", mutate(func(so *orders.SignedOrder) { so.Signature = otherDomainSig(t, w, *so) }), 400, "INVALID_PARAMETER"},
		{"wrong chain", mutate(func(so *orders.SignedOrder) { so.ChainID = 42161 }), 400, "INVALID_PARAMETER"},
		{"unknown flags", mutate(func(so *orders.SignedOrder) { so.Flags = orders.Uint{Int: big.NewInt(0x111)} }), 400, "INVALID_PARAMETER"},
		{"past deadline", mustJSON(t, w.signed(t, w.alice, func(so *orders.SignedOrder) {
			so.Deadline = orders.Uint{Int: big.NewInt(int64(w.p.Chain.Now()) - 10)}
		})), 400, "INVALID_PARAMETER"},
		{"maker without the option", mustJSON(t, w.signed(t, w.bob, func(so *orders.SignedOrder) { so.Maker = w.bob.Addr.Hex() })), 422, "ORDER_NOT_FILLABLE"},
		{"an unknown field", withField, 400, "INVALID_PARAMETER"},
		{"malformed JSON", []byte(`{"chainId":`), 400, "INVALID_PARAMETER"},
		{"two JSON values", append(mustJSON(t, good), mustJSON(t, good)...), 400, "INVALID_PARAMETER"},
		{"an empty body", nil, 400, "INVALID_PARAMETER"},
		{"an oversized body", append(mustJSON(t, good), bytes.Repeat([]byte(" "), 17<<10)...), 413, "BODY_TOO_LARGE"},
	}
	for _, c := range cases {
		a := do(h, http.MethodPost, gateway.PathOrders, c.body)
		if a.code != c.status || a.errCode() != c.code || a.hdr.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s, want %d %s", c.name, a.code, a.body, c.status, c.code)
		}
	}
	if n, _ := w.repo.Count(w.ctx); n != 0 {
		t.Fatalf("the book holds %d orders after only bad ones", n)
	}
	if a := do(h, http.MethodPut, gateway.PathOrders, mustJSON(t, good)); a.code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d %s", a.code, a.body)
	}
	for i := 0; i < 4; i++ {
		so := w.signed(t, w.alice, func(so *orders.SignedOrder) { so.CreatedAt = orders.Uint{Int: big.NewInt(int64(100 + i))} })
		a := do(h, http.MethodPost, gateway.PathOrders, mustJSON(t, so))
		if (i < 3 && a.code != http.StatusCreated) || (i == 3 && (a.code != http.StatusTooManyRequests || a.errCode() != "ORDER_BOOK_FULL")) {
			t.Fatalf("order %d: %d %s", i, a.code, a.body)
		}
	}
	if n, _ := w.repo.Count(w.ctx); n != 3 {
		t.Fatalf("the book holds %d orders, want the bound 3", n)
	}
}

// TestOrderReadsRefuseBadParameters: the reads name what is wrong.
func TestOrderReadsRefuseBadParameters(t *testing.T) {
	w := newWorld(t)
	h := w.routes(t, w.chains)
	id := fmt.Sprint(chainID)
	for _, target := range []string{
		gateway.PathOrders + "?chainId=" + id,
		gateway.PathOrders + "?chainId=" + id + "&user=" + w.alice.Addr.Hex() + "&status=pending",
		gateway.PathOrders + "?chainId=" + id + "&user=" + w.alice.Addr.Hex() + "&tokenId=1",
		gateway.PathOrders + "?chainId=" + id + "&user=" + w.alice.Addr.Hex() + "&page=2",
		gateway.PathOrdersPrepare + "?chainId=" + id + "&kind=sell&user=" + w.alice.Addr.Hex() + "&optionMarket=" + w.p.Market.Hex(),
		gateway.PathOrdersFillable + "?chainId=" + id + "&swapperId=nope",
		gateway.PathOrdersCancelPrepare + "?chainId=" + id + "&hash=0x12",
	} {
		if a := do(h, http.MethodGet, target, nil); a.code != http.StatusBadRequest || a.errCode() != "INVALID_PARAMETER" {
			t.Errorf("%s: %d %s", target, a.code, a.body)
		}
	}
}
