package systemtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// A subgraph whose `_meta` names no block (block 0 and a null hash: an
// embedded index before its first commit, a store indexed again from the
// start, a Graph Node answering after a quiet spell) leaves the routes that
// pin to the indexed head nothing to pin to. Each answers 503
// SUBGRAPH_UNAVAILABLE with Retry-After, naming that the subgraph has no
// block yet, never 500 INTERNAL (attack 5, S4: IX 11, NEW 162, 226).
func TestIndexedHeadRoutesAtASubgraphOfNoBlockAre503(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	f.Subgraph.Store.SetHead(graphnode.Block{})
	for _, path := range []string{
		gateway.PathStrikesChain + "?optionMarket=" + wethUSDC + "&chainId=42161&callsReach=10&putsReach=10",
		quoteQuery,
		chainQuery,
		gateway.PathStats + "?" + statsQuery + "&from=1700000000&to=1731622400",
		gateway.PathChainStats + "?chainId=42161&from=1763553600&to=1763704800",
		gateway.PathExpiringOptions + "?chainId=42161&optionMarket=" + wethUSDC + "&within=86400&first=100&skip=0",
	} {
		rec := get(t, srv, path)
		var body struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusServiceUnavailable || body.Error.Code != "SUBGRAPH_UNAVAILABLE" ||
			!strings.Contains(body.Error.Message, "no block yet") || rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s: %d Retry-After %q %s, want 503 SUBGRAPH_UNAVAILABLE naming no block yet, with Retry-After",
				path[:strings.IndexByte(path, '?')], rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
}
