package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// failSwappers is the fake subgraph with its Swappers query failing (a
// 502 from the subgraph's host), every other query answered.
type failSwappers struct{ next http.RoundTripper }

func (f failSwappers) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte("query Swappers")) {
		return &http.Response{StatusCode: http.StatusBadGateway, Status: "502 Bad Gateway", Header: http.Header{},
			Body: io.NopCloser(strings.NewReader("upstream down")), Request: req}, nil
	}
	return f.next.RoundTrip(req)
}

// The markets list's swappers are an add-on: with the subgraph's Swappers
// read failing, the markets are served whole, swappers is null and
// unknown.swappers says why, and the answer is degraded (cached briefly).
// With the read answering, the configured swappers are listed.
func TestOptionMarketsListSwappersReadFails(t *testing.T) {
	sc := loadScenario(t, "testdata/scenarios/arbitrum-weth-usdc.json")
	for _, fail := range []bool{false, true} {
		cfg := config.Default()
		ch := cfg.Chains[sc.ChainID]
		if uni := ch.Swappers["uni-v3"]; uni != nil && uni.Quoter == (common.Address{}) {
			uni.Quoter = testQuoter
		}
		f := scenario.NewFakesFor(t, ch, sc)
		cfg.Chains = map[uint64]*config.Chain{sc.ChainID: ch}
		tr := f.Transports()
		if fail {
			tr.Subgraph = failSwappers{next: tr.Subgraph}
		}
		a, err := app.New(app.Options{Config: cfg, Transports: map[uint64]upstream.Transports{sc.ChainID: tr}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Service.OptionMarketsList(context.Background(), sc.ChainID)
		if err != nil {
			t.Fatalf("fail=%v: %v", fail, err)
		}
		if len(got.Markets) != 1 || got.Block != sc.Block.Number {
			t.Fatalf("fail=%v: markets %+v at %d", fail, got.Markets, got.Block)
		}
		if fail {
			if got.Swappers != nil || !strings.HasPrefix(got.Unknown["swappers"], "swappers not read: ") || !got.Degraded() {
				t.Errorf("failed read: swappers %+v unknown %v", got.Swappers, got.Unknown)
			}
			continue
		}
		if len(got.Swappers) != len(ch.Swappers) || got.Unknown != nil || got.Degraded() {
			t.Errorf("swappers %+v unknown %v, configured %d", got.Swappers, got.Unknown, len(ch.Swappers))
		}
		for _, s := range got.Swappers {
			if s.Source != "configured" || !s.Usable || ch.Swappers[s.ID] == nil || s.Address != ch.Swappers[s.ID].Address.Hex() {
				t.Errorf("swapper %+v", s)
			}
		}
	}
}

// checkGoldenMember compares v with one member of a golden object that
// another test writes (the gateway's whole answer, TestGoldenDemo).
func checkGoldenMember(t *testing.T, name, member string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "testdata/golden", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var whole map[string]json.RawMessage
	if err := json.Unmarshal(raw, &whole); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(v)
	var got, want bytes.Buffer
	if json.Compact(&got, body) != nil || json.Compact(&want, whole[member]) != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("differs from %s's %s:\n%s", name, member, body)
	}
}
