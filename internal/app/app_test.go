package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// Every configured chain is served in exactly one mode, chosen in one
// place: given transports win, then live URLs, then the demo recordings.
func TestModes(t *testing.T) {
	cfg := config.Default()
	cfg.OrdersPath = filepath.Join(t.TempDir(), "orders.sqlite") // a live chain opens the book
	cfg.Chains[5000].SubgraphURL, cfg.Chains[5000].RPCURL = "http://sg.invalid", "http://rpc.invalid"
	for _, c := range []struct {
		name string
		o    Options
		want map[uint64]string
	}{
		{"demo on", Options{Config: cfg, Demo: true}, map[uint64]string{42161: ModeDemo, 5000: ModeLive}},
		{"demo off", Options{Config: cfg}, map[uint64]string{42161: ModeNotConfigured, 5000: ModeLive}},
		{"transports", Options{Config: cfg, Demo: true, Transports: map[uint64]upstream.Transports{5000: {}}}, map[uint64]string{42161: ModeDemo, 5000: ModeTransports}},
	} {
		a, err := New(c.o)
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range c.want {
			if a.Modes[id] != want {
				t.Errorf("%s: chain %d is %q, want %q", c.name, id, a.Modes[id], want)
			}
		}
		served := 0
		for _, m := range c.want {
			if m != ModeNotConfigured {
				served++
			}
		}
		if got, unserved := a.Service.ChainIDs(), a.Service.UnservedChainIDs(); len(got) != served || len(got)+len(unserved) != len(cfg.ChainIDs()) {
			t.Errorf("%s: service chains %v, unserved %v", c.name, got, unserved)
		}
	}
	if cfg.Chains[42161].SubgraphURL != "" {
		t.Error("the demo's placeholder URLs leaked into the caller's configuration")
	}
	if _, err := New(Options{}); err == nil {
		t.Error("no configuration, no error")
	}
}

// The gateway accepts exactly the service's chains and swappers: a chain
// configured without upstreams (5000 here) is refused like an unknown one.
func TestGatewayAsksTheService(t *testing.T) {
	a, err := New(Options{Config: config.Default(), Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"/clamm/exercise/prepare?chainId=1&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=110&swapperId=uni-v3&slippage=1":                         http.StatusBadRequest,
		"/clamm/exercise/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=110&swapperId=nope&slippage=1":                       http.StatusBadRequest,
		"/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=10&putsReach=10":                                      http.StatusOK,
		"/clamm/exercise/prepare?chainId=5000&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=110&swapperId=nope&slippage=1":                        http.StatusBadRequest,
		"/clamm/exercise/prepare?chainId=5000&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=110&swapperId=" + mantleSwapper(t, a) + "&slippage=1": http.StatusBadRequest,
	} {
		rec := httptest.NewRecorder()
		a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d: %s", path, rec.Code, want, rec.Body)
		}
	}
}

func mantleSwapper(t *testing.T, a *App) string {
	ids := a.Service.Swappers(5000)
	if len(ids) == 0 {
		t.Fatal("chain 5000 names no swapper")
	}
	return ids[0]
}

// A chain with an RPC URL and no subgraph URL is indexed by the gateway;
// an app built without an indexer refuses it, naming what to set.
func TestIndexedChainNeedsAnIndexer(t *testing.T) {
	cfg := config.Default()
	cfg.Chains[42161].RPCURL = "http://127.0.0.1:1"
	_, err := New(Options{Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "CLAMM_CHAIN_42161_SUBGRAPH_URL") {
		t.Fatalf("err = %v", err)
	}
}

// fakeIndex stands for an embedded index: the complete indexed
// configuration opens one, and nothing here runs it.
type fakeIndex struct{ Index }

func (fakeIndex) Close() error { return nil }

// Each chain mode starts with all of its settings and refuses to start
// with any part of them missing, naming what is missing: half of a live
// configuration never serves the demo's data nor the other live mode.
func TestModeNeedsEverySetting(t *testing.T) {
	const (
		sg  = "CLAMM_CHAIN_5000_SUBGRAPH_URL"
		rpc = "CLAMM_CHAIN_5000_RPC_URL"
		src = "CLAMM_CHAIN_5000_INDEX_SOURCES"
		md  = "CLAMM_CHAIN_5000_MODE"
	)
	const sgURL, rpcURL, source = "http://sg.invalid/x", "http://rpc.invalid", "OptionMarket:0x501B03BdB431154b8Df17BF1c00756E3a8F21744@1"
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // the mode of 5000, or "" for a refusal
		// missing are the settings the refusal must name.
		missing []string
	}{
		{"graph-node complete", map[string]string{sg: sgURL, rpc: rpcURL}, ModeLive, nil},
		{"graph-node stated, complete", map[string]string{md: "graph-node", sg: sgURL, rpc: rpcURL}, ModeLive, nil},
		{"graph-node without rpc", map[string]string{sg: sgURL}, "", []string{rpc}},
		{"graph-node stated without rpc", map[string]string{md: "graph-node", sg: sgURL}, "", []string{rpc}},
		{"graph-node stated without subgraph", map[string]string{md: "graph-node", rpc: rpcURL}, "", []string{sg}},
		{"graph-node stated with the subgraph embedded", map[string]string{md: "graph-node", sg: "embedded", rpc: rpcURL}, "", []string{sg}},
		{"graph-node stated with nothing", map[string]string{md: "graph-node"}, "", []string{sg, rpc}},
		{"indexed complete", map[string]string{rpc: rpcURL}, ModeIndexed, nil},
		{"indexed stated, complete", map[string]string{md: "indexed", rpc: rpcURL, src: source}, ModeIndexed, nil},
		{"indexed stated with nothing", map[string]string{md: "indexed"}, "", []string{rpc}},
		{"indexed by embedded, without rpc", map[string]string{sg: "embedded"}, "", []string{rpc}},
		{"indexed by its sources, without rpc", map[string]string{src: source}, "", []string{rpc}},
		{"demo stated on a chain without recordings", map[string]string{md: "demo"}, "", []string{"CLAMM_DEMO"}},
		{"demo stated with a URL", map[string]string{md: "demo", rpc: rpcURL}, "", []string{rpc}},
		{"an unknown mode", map[string]string{md: "live"}, "", []string{md}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Load(func(k string) string { return c.env[k] })
			var a *App
			if err == nil {
				a, err = New(Options{Config: cfg, Demo: true, Index: func(context.Context, *config.Chain) (Index, error) { return fakeIndex{}, nil }})
			}
			if c.want == "" {
				if err == nil {
					t.Fatal("started")
				}
				for _, m := range c.missing {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("refusal %q does not name %s", err, m)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Modes[5000] != c.want {
				t.Errorf("chain 5000 served as %q, want %q", a.Modes[5000], c.want)
			}
		})
	}
	// The demo: nothing set, or the mode stated, on the chain with
	// recordings; stated with the demo off is refused naming CLAMM_DEMO.
	for _, env := range []map[string]string{{}, {"CLAMM_CHAIN_42161_MODE": "demo"}} {
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		a, err := New(Options{Config: cfg, Demo: true})
		if err != nil {
			t.Fatal(err)
		}
		if a.Modes[42161] != ModeDemo || a.Modes[5000] != ModeNotConfigured {
			t.Errorf("%v: modes %v", env, a.Modes)
		}
		if len(env) > 0 {
			if _, err := New(Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), "CLAMM_DEMO") {
				t.Errorf("demo stated with the demo off: %v", err)
			}
		}
	}
}
