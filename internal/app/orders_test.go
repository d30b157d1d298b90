package app

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
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
	if _, err := a.orders.open(); err != nil {
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
	if d.orders != nil {
		t.Error("the demo alone opened a book")
	}
	if _, err := os.Stat(demoCfg.OrdersPath); !os.IsNotExist(err) {
		t.Errorf("the demo alone created %s: %v", demoCfg.OrdersPath, err)
	}
	rec = httptest.NewRecorder()
	d.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/clamm/orders", nil))
	if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /clamm/orders without a book: %d %s", rec.Code, rec.Body)
	}
}
