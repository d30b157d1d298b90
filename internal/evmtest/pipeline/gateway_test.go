package pipeline

import (
	"encoding/json"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// gatewayHistory asks the gateway itself (configured with the fake Graph
// Node over the indexed store as its subgraph, and the simulated node as
// its RPC) for each owner's exercise history, and checks every record
// against the receipts and the chain: amounts from LogExerciseOption, ttl
// from opData, the exercise price from the swap the exercise made.
//
// created maps each exercised option's id to the receipt that created it:
// its premium is that receipt's LogMintOption.premiumAmount (0 for a split
// option, whose premium was paid for its parent), its ttl runs from that
// block's time.
// liveGateway is the gateway as the command builds it (internal/app), live
// on chain 42161 with the fake Graph Node over the indexed store as its
// subgraph and the simulated node as its RPC; it returns the subgraph's URL
// too. Both servers close when the test ends. adjust, if any, changes the
// chain's configuration first.
func liveGateway(t *testing.T, p *pt.Protocol, ix *Indexer, adjust ...func(*config.Chain)) (*app.App, string) {
	t.Helper()
	return liveGatewayWith(t, p, ix, func(cfg *config.Config) {
		for _, f := range adjust {
			f(cfg.Chains[42161])
		}
	})
}

// liveGatewayWith is liveGateway with the whole configuration adjusted.
func liveGatewayWith(t *testing.T, p *pt.Protocol, ix *Indexer, adjust func(*config.Config)) (*app.App, string) {
	t.Helper()
	sub := httptest.NewServer(ix.Serve())
	t.Cleanup(sub.Close)
	node := httptest.NewServer(RPCHandler(p.Chain.RPC()))
	t.Cleanup(node.Close)
	cfg := config.Default()
	ch := cfg.Chains[42161]
	ch.SubgraphURL, ch.RPCURL = sub.URL, node.URL
	// The chain's auto-exerciser is the test protocol's: positions read
	// it, and the registry's Arbitrum one has no code here.
	ch.AutoExerciser = p.AutoExercise
	// Its swapper and QuoterV2 too: positions value exercises through
	// them, and the registry's have no code here.
	ch.Swappers = map[string]*config.Swapper{"uni-v3": {Kind: "uniswap-v3", Address: p.Swapper, Quoter: p.Quoter}}
	adjust(cfg)
	a, err := app.New(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if a.Modes[42161] != app.ModeLive {
		t.Fatalf("chain 42161 served as %q", a.Modes[42161])
	}
	return a, sub.URL
}

func gatewayHistory(t *testing.T, p *pt.Protocol, ix *Indexer, exercised map[common.Address][]*types.Receipt, created map[string]*types.Receipt) {
	t.Helper()
	a, _ := liveGateway(t, p, ix)
	gw := a.Server
	for owner, rcs := range exercised {
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathExerciseHistory+"?chainId=42161&first=10&skip=0&user="+owner.Hex()+"&optionMarket="+p.Market.Hex(), nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("history of %s: %d %s", owner, rec.Code, rec.Body)
		}
		var got []map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(rcs) {
			t.Fatalf("history of %s: %d records, want %d: %s", owner, len(got), len(rcs), rec.Body)
		}
		for i, rc := range rcs {
			r := got[len(got)-1-i]
			ex, price := exerciseIn(t, p, rc, p.Market)
			id := ex.Args["tokenId"].(*big.Int)
			d := p.OpData(id)
			header, err := p.Chain.Client().HeaderByNumber(t.Context(), rc.BlockNumber)
			if err != nil {
				t.Fatal(err)
			}
			mint := created[id.String()]
			if mint == nil {
				t.Fatalf("no creation receipt for option %s", id)
			}
			premium := "0"
			if ev := p.Find(mint, "LogMintOption"); ev != nil {
				premium = ev.Args["premiumAmount"].(*big.Int).String()
			}
			// a split option's ttl runs from its parent's mint
			if ev := p.Find(mint, "LogSplitOption"); ev != nil {
				mint = created[ev.Args["tokenId"].(*big.Int).String()]
			}
			minted, err := p.Chain.Client().HeaderByNumber(t.Context(), mint.BlockNumber)
			if err != nil {
				t.Fatal(err)
			}
			wantTTL := new(big.Int).Sub(d.Expiry, new(big.Int).SetUint64(minted.Time)).Int64()
			want := map[string]any{
				"optionId": id.String(), "profit": ex.Args["totalProfit"].(*big.Int).String(),
				"size": ex.Args["totalAssetRelocked"].(*big.Int).String(), "premium": premium,
				"timestamp": big.NewInt(int64(header.Time)).String(), "txHash": strings.ToLower(rc.TxHash.Hex()),
				"type": map[bool]string{true: "call", false: "put"}[d.IsCall], "ttl": float64(wantTTL),
			}
			// who was paid and what reached the owner, as indexed (checked
			// against the receipts' transfers and balances by checkExercise)
			x := ix.Store.Get("Exercise", hashID(rc, ex))
			want["exerciser"], want["delegated"] = "0x"+common.Bytes2Hex(x["exerciser"].Bytes), x["delegated"].Bool
			want["profitToOwner"] = x["profitToOwner"].Big.String()
			for k, v := range want {
				g := r[k]
				if s, ok := g.(string); ok && k == "txHash" {
					g = strings.ToLower(s)
				}
				if g != v {
					t.Errorf("%s record %d: %s = %v, want %v", owner, i, k, r[k], v)
				}
			}
			// put-asset units per call asset, from the swap's sqrtPriceX96
			sp, _ := new(big.Float).Quo(new(big.Float).SetInt(price), new(big.Float).SetInt(new(big.Int).Lsh(big.NewInt(1), 96))).Float64()
			raw := sp * sp // token1 per token0, raw units
			if p.CallAsset == p.Token1 {
				raw = 1 / raw
			}
			wantPrice := raw * math.Pow(10, float64(int(p.CallDecimals)-int(p.PutDecimals)))
			if gotPrice, _ := r["exercisePrice"].(float64); math.Abs(gotPrice-wantPrice) > 1e-9*wantPrice {
				t.Errorf("%s record %d: exercisePrice %v, want %v", owner, i, r["exercisePrice"], wantPrice)
			}
		}
	}
}
