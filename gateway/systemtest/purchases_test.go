package systemtest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

const bob = "0xB0B0000000000000000000000000000000000002"

func purchasedIDs(t *testing.T, srv http.Handler, user string) map[string]bool {
	t.Helper()
	rec := get(t, srv, gateway.PathPurchaseHistory+"?"+query(historyParams, "user", user, false))
	if rec.Code != http.StatusOK || rec.Header().Get("X-Subgraph-Block") == "" || rec.Header().Get("ETag") == "" {
		t.Fatalf("status %d headers %v: %s", rec.Code, rec.Header(), rec.Body)
	}
	var recs []struct {
		OptionID string `json:"optionId"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &recs); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range recs {
		ids[r.OptionID] = true
	}
	return ids
}

// A purchase belongs to whoever paid for it: option 114, bought by alice
// and transferred to bob, stays in alice's history and not in bob's.
func TestPurchaseHistoryFollowsBuyerNotOwner(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	if a, b := purchasedIDs(t, srv, alice), purchasedIDs(t, srv, bob); !a["114"] || b["114"] || !b["109"] {
		t.Fatalf("alice %v, bob %v", a, b)
	}
}

// A second identical request is a cache hit with the same bytes; the
// purchase and exercise histories of the same user do not share an entry.
func TestPurchaseHistoryCached(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	path := gateway.PathPurchaseHistory + "?" + query(historyParams, "", "", false)
	a := get(t, srv, path)
	n := f.Subgraph.Requests()
	b := get(t, srv, path)
	if a.Code != 200 || b.Header().Get("X-Cache") != "HIT" || a.Body.String() != b.Body.String() || f.Subgraph.Requests() != n {
		t.Fatalf("second request: %d %s", b.Code, b.Header().Get("X-Cache"))
	}
	e := get(t, srv, gateway.PathExerciseHistory+"?"+query(historyParams, "", "", false))
	if e.Header().Get("X-Cache") != "MISS" || e.Body.String() == a.Body.String() {
		t.Fatalf("exercise history answered from the purchase entry: %s", e.Header().Get("X-Cache"))
	}
}
