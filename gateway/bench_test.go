package gateway_test

import (
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/gorilla/mux"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// discard is a ResponseWriter that keeps nothing, so the benchmarks count
// the gateway's allocations and not the recorder's.
type discard struct {
	h    http.Header
	code int
	n    int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(code int)        { d.code = code }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }

// wideScenario is the demo scenario with n extra call ranges above the
// price, for a large strikes-chain answer.
func wideScenario(b *testing.B, n int) *scenario.Scenario {
	scs, err := scenario.Load(filepath.Join(root, "internal/demo/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		b.Fatal(err)
	}
	sc := scs[0]
	sc.Strikes = sc.Strikes[:0]
	h := common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116")
	for i := 0; i < n; i++ {
		lo := -196250 + 10*(i%990)
		hook := common.BigToAddress(big.NewInt(int64(i / 990)))
		sc.Strikes = append(sc.Strikes, scenario.Strike{Handler: h, Pool: sc.Market.PrimePool, Hook: hook, TickLower: lo, TickUpper: lo + 10,
			TotalLiquidity: fmt.Sprint(1_000_000_000_000_000_000 + i), UsedLiquidity: fmt.Sprint(i * 1_000_000_000_000)})
	}
	return sc
}

func benchServer(b *testing.B, sc *scenario.Scenario) *gateway.Server {
	f := scenario.NewFakes(sc)
	cfg := config.Default()
	ch := cfg.Chains[42161]
	ch.SubgraphURL, ch.RPCURL = "http://fake-subgraph.invalid", "http://fake-rpc.invalid"
	u, err := service.Connect(ch, service.ConnectOptions{SubgraphTransport: transport(f.Subgraph), RPCTransport: transport(f.Node), QuoteTransport: transport(f.OneInch)})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := gateway.New(gateway.Options{Service: service.New(map[uint64]*service.Upstreams{42161: u}), ChainIDs: []uint64{42161},
		Swappers: cfg.SwapperIDs(), CacheMaxEntries: 1000, CacheMaxBytes: 1 << 30, StrikesTTL: 1 << 62, HistoryTTL: 1 << 62, PrepareTTL: 1 << 62})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

func benchHit(b *testing.B, h http.Handler, path string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	w := &discard{h: http.Header{}}
	h.ServeHTTP(w, req) // fill
	if w.code != http.StatusOK && w.code != 0 {
		b.Fatalf("status %d", w.code)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(w.h)
		w.n = 0
		h.ServeHTTP(w, req)
	}
	b.StopTimer()
	if w.h.Get("X-Cache") != "HIT" && w.h.Get("Content-Length") == "" {
		if _, ok := h.(*gateway.Server); ok {
			b.Fatalf("not a hit: %v", w.h)
		}
	}
	b.SetBytes(int64(w.n))
}

// bare is a gorilla/mux router writing fixed bytes at the same path: the
// floor a cached read is measured against.
func bare(path string, body []byte) http.Handler {
	r := mux.NewRouter()
	r.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}).Methods(http.MethodGet)
	return r
}

func body(b *testing.B, h http.Handler, path string) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Body.Bytes()
}

func BenchmarkHit(b *testing.B) {
	large := wideScenario(b, 1000)
	small := wideScenario(b, 10)
	demo, err := scenario.Load(filepath.Join(root, "internal/demo/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		sc   *scenario.Scenario
		path string
	}{
		{"strikes-10", small, strikes},
		{"strikes-1000", large, strikes},
		{"history", demo[0], gateway.PathExerciseHistory + "?chainId=42161&user=" + alice + "&optionMarket=" + wethUSDC + "&first=100&skip=0"},
		{"prepare", demo[0], gateway.PathExercisePrepare + "?chainId=42161&optionMarket=" + wethUSDC + "&optionId=110&swapperId=uni-v3&slippage=1"},
	}
	for _, c := range cases {
		srv := benchServer(b, c.sc)
		b.Run(c.name+"/gateway", func(b *testing.B) { benchHit(b, srv, c.path) })
		route := pathOnly(c.path)
		b.Run(c.name+"/bare-mux", func(b *testing.B) { benchHit(b, bare(route, body(b, srv, c.path)), c.path) })
	}
}

func pathOnly(p string) string {
	for i := range p {
		if p[i] == '?' {
			return p[:i]
		}
	}
	return p
}
