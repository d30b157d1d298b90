package app

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
)

// TestOrderBookOpensForNetworkChains: a chain served from the network
// has a book, its store at CLAMM_ORDERS_PATH opened on first use (not
// at start), and the order routes answer (a
// missing parameter is a 400, not a 404); with only the demo's
// recordings there is no book, no file, and the routes are 404.
func TestOrderBookOpensForNetworkChains(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.OrdersPath = filepath.Join(dir, "live.sqlite")
	cfg.Chains[5000].SubgraphURL, cfg.Chains[5000].RPCURL = "http://sg.invalid", "http://rpc.invalid"
	a, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if a.orders == nil {
		t.Fatal("a live chain has no book")
	}
	if _, err := os.Stat(cfg.OrdersPath); !os.IsNotExist(err) {
		t.Fatalf("the store was opened before any order request: %v", err)
	}
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/clamm/orders?chainId=5000", nil))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("GET /clamm/orders without user: %d %s", rec.Code, rec.Body)
	}
	if _, err := a.orders.open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.OrdersPath); err != nil {
		t.Fatalf("the book's store: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	demoCfg := config.Default()
	demoCfg.OrdersPath = filepath.Join(dir, "demo.sqlite")
	d, err := New(Options{Config: demoCfg, Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.orders == nil || len(d.orders.chains) != 0 {
		t.Error("the demo's chains have no read-only book, or a book of network chains")
	}
	if _, err := os.Stat(demoCfg.OrdersPath); !os.IsNotExist(err) {
		t.Errorf("the demo alone created %s: %v", demoCfg.OrdersPath, err)
	}
	rec = httptest.NewRecorder()
	d.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/clamm/orders?chainId=42161&user=0xA11CE00000000000000000000000000000000001", nil))
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != "[]" {
		t.Errorf("GET /clamm/orders on the demo: %d %s", rec.Code, rec.Body)
	}
}

// The demo checks a POSTed order by itself (its signature over the
// chain's domain) and refuses to store it, saying so: a good order is 422
// DEMO_STORES_NOTHING naming its signer, a forged one the check's 400;
// nothing is written.
func TestDemoChecksAnOrderAndStoresNothing(t *testing.T) {
	cfg := config.Default()
	cfg.OrdersPath = filepath.Join(t.TempDir(), "demo.sqlite")
	d, err := New(Options{Config: cfg, Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	key, _ := crypto.ToECDSA(crypto.Keccak256([]byte("demo maker")))
	maker := crypto.PubkeyToAddress(key.PublicKey)
	data, _ := contracts.EncodeExerciseData(big.NewInt(50_000_000), big.NewInt(110), common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744"))
	o := contracts.LimitOrder{CreatedAt: big.NewInt(1763726400), Deadline: big.NewInt(1763800000), Maker: maker, Flags: orders.FlagsExercise, Data: data}
	digest := orders.Digest(42161, cfg.Chains[42161].LimitOrders, o)
	sig, _ := crypto.Sign(digest[:], key)
	body := func(sig []byte) string {
		b, _ := json.Marshal(map[string]any{"chainId": 42161, "createdAt": "1763726400", "deadline": "1763800000", "maker": maker.Hex(),
			"validator": common.Address{}.Hex(), "flags": "0x00000110", "data": hexutil.Encode(data), "signature": hexutil.Encode(sig)})
		return string(b)
	}
	forged := append([]byte{}, sig...)
	forged[10] ^= 1
	for _, c := range []struct {
		sig    []byte
		status int
		code   string
	}{{sig, http.StatusUnprocessableEntity, "DEMO_STORES_NOTHING"}, {forged, http.StatusBadRequest, "INVALID_PARAMETER"}} {
		for _, path := range []string{"/clamm/orders", "/clamm/orders/create"} {
			rec := httptest.NewRecorder()
			d.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body(c.sig))))
			var e struct {
				Error struct{ Code, Message string }
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			if rec.Code != c.status || e.Error.Code != c.code || (c.status == 422 && !strings.Contains(e.Error.Message, maker.Hex())) {
				t.Errorf("POST %s: %d %s", path, rec.Code, rec.Body)
			}
		}
	}
	if _, err := os.Stat(cfg.OrdersPath); !os.IsNotExist(err) {
		t.Errorf("the demo created %s: %v", cfg.OrdersPath, err)
	}
}

// A store that cannot open is the book's outage, 503
// ORDER_BOOK_UNAVAILABLE naming the setting, never a 500; the next
// request tries again.
func TestOrderBookThatCannotOpenIs503(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.OrdersPath = filepath.Join(file, "orders.sqlite") // under a file: no directory to create it in
	cfg.Chains[5000].SubgraphURL, cfg.Chains[5000].RPCURL = "http://sg.invalid", "http://rpc.invalid"
	a, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i := 0; i < 2; i++ {
		rec := httptest.NewRecorder()
		a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/clamm/orders?chainId=5000&user=0xA11CE00000000000000000000000000000000001", nil))
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusServiceUnavailable || body.Error.Code != "ORDER_BOOK_UNAVAILABLE" || !strings.Contains(body.Error.Message, "CLAMM_ORDERS_PATH") {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
}

// A database that accepts the connection and never answers holds no
// request past its own end and no lock: a request whose context ended
// returns at once while the open goes on, and the open itself ends with
// 503 once CLAMM_REQUEST_TIMEOUT passes.
func TestOrderBookOpenIsBoundedAndHoldsNoLock(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // read nothing, answer nothing
		}
	}()
	cfg := config.Default()
	cfg.OrdersDatabaseURL = "postgres://u@" + ln.Addr().String() + "/db?sslmode=disable"
	cfg.RequestTimeout = config.Duration(300 * time.Millisecond)
	cfg.Chains[5000].SubgraphURL, cfg.Chains[5000].RPCURL = "http://sg.invalid", "http://rpc.invalid"
	a, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.orders.List(gone, orders.ListRequest{ChainID: 5000}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a request whose context ended: %v", err)
	}
	if _, err := a.orders.List(gone, orders.ListRequest{ChainID: 5000}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a second request while the open goes on: %v", err)
	}
	_, err = a.orders.open(context.Background())
	if p := problem.As(err); p.Code != problem.OrderBookUnavailable || !strings.Contains(p.Message, "CLAMM_ORDERS_DATABASE_URL") {
		t.Fatalf("the open past its bound: %v", err)
	}
}
