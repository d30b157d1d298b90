package pipelinetest

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// gatewayPurchases asks the gateway (live over the indexed store and the
// simulated node) for purchase history and checks it against the
// receipts: every LogMintOption is in its buyer's history with the event's
// premium, fees and size. The subgraph's positions query must name each
// option under its ownerOf.
func gatewayPurchases(t *testing.T, p *pt.Protocol, ix *Indexer, created map[string]*types.Receipt) {
	t.Helper()
	a, subURL := liveGateway(t, p, ix)
	read := func(path string, user common.Address) map[string]map[string]any {
		rec := httptest.NewRecorder()
		a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path+"?chainId=42161&first=100&skip=0&user="+user.Hex()+"&optionMarket="+p.Market.Hex(), nil))
		var list []map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil {
			t.Fatalf("%s of %s: %d %s", path, user, rec.Code, rec.Body)
		}
		out := map[string]map[string]any{}
		for _, r := range list {
			out[r["optionId"].(string)] = r
		}
		return out
	}
	owners := map[common.Address]bool{}
	for id, rc := range created {
		owners[p.OwnerOf(new(big.Int).SetBytes(mustDec(t, id)))] = true
		ev := p.Find(rc, "LogMintOption")
		if ev == nil {
			continue // a split is not a purchase
		}
		buyer := ev.Args["user"].(common.Address)
		r := read(gateway.PathPurchaseHistory, buyer)[id]
		want := map[string]string{
			"premium": ev.Args["premiumAmount"].(*big.Int).String(), "protocolFees": ev.Args["protocolFees"].(*big.Int).String(),
			"size": ev.Args["totalAssetWithdrawn"].(*big.Int).String(), "txHash": strings.ToLower(rc.TxHash.Hex()),
		}
		for k, v := range want {
			if r == nil || r[k] != v {
				t.Errorf("purchase of option %s by %s: %s = %v, want %s", id, buyer, k, r[k], v)
			}
		}
	}
	// Positions: the gateway's own chain reader needs Multicall3, which
	// the simulated chain lacks (preparetest says the same), so the chain
	// half is not run here; the subgraph half is: the PurchasePositions
	// query names, for each owner, exactly the options whose ownerOf is
	// that owner (ownership followed through the ERC721 Transfer events).
	client := subgraph.New(subURL, subgraph.Options{})
	for owner := range owners {
		held, _, err := client.PurchasePositions(t.Context(), subgraph.HistoryQuery{User: owner, Market: p.Market, First: 100})
		if err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}
		for _, h := range held {
			named[h.TokenID.String()] = true
		}
		for id := range created {
			if want := p.OwnerOf(new(big.Int).SetBytes(mustDec(t, id))) == owner; named[id] != want {
				t.Errorf("subgraph positions of %s: option %s named %v, want %v", owner, id, named[id], want)
			}
		}
	}
}

func mustDec(t *testing.T, s string) []byte {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("option id %q", s)
	}
	return v.Bytes()
}
