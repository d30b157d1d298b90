package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// Every configured chain is served in exactly one mode, chosen in one
// place: given transports win, then live URLs, then the demo recordings.
func TestModes(t *testing.T) {
	cfg := config.Default()
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

// The secret parts of configured URLs (password, path segments,
// query values) are redacted wherever they appear in log text, also when
// an upstream echoes them back alone, escaped, or too short for
// problem.Scrub's key-like tokens.
func TestRedactorHidesSecretPartsAnywhere(t *testing.T) {
	cfg := &config.Config{RedisURL: "redis://cache:R3disPw@redis.internal:6379/0", Chains: map[uint64]*config.Chain{
		42161: {SubgraphURL: "https://gw.example/api/SECRET123/subgraphs/id/Qm", RPCURL: "https://rpc.example/v2/SECRET456?apikey=K3Y+789"},
	}}
	redact := redactor(cfg)
	for _, text := range []string{
		"404 page /v2/SECRET456?apikey=K3Y+789 not found",
		"upstream said: unknown key SECRET123",
		"bad apikey=K3Y%2B789",
		"NOAUTH for user cache password R3disPw",
	} {
		got := redact(text)
		for _, secret := range []string{"SECRET123", "SECRET456", "K3Y+789", "K3Y%2B789", "R3disPw"} {
			if strings.Contains(got, secret) {
				t.Errorf("%q -> %q keeps %q", text, got, secret)
			}
		}
	}
	if got := redact("the v2 market's subgraphs answered"); got != "the v2 market's subgraphs answered" {
		t.Errorf("ordinary words redacted: %q", got)
	}
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
