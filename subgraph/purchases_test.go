package subgraph_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The positions page reads the user's delegates beside its options: known
// when the answer holds the field, unknown (for the caller to ask) when a
// replacing document leaves it out, and garbage (502 SUBGRAPH_ERROR) when
// the field is not a list of the user's complete delegates.
func TestPositionsPageReadsTheUsersDelegates(t *testing.T) {
	const user, other = "0xb0b0000000000000000000000000000000000002", "0xa11ce00000000000000000000000000000000001"
	del := func(owner, updated string) string {
		return fmt.Sprintf(`{"id":"m-%s-d","owner":"%s","delegate":"0xde1e6a7e00000000000000000000000000000005","updatedAt":%s}`, owner, owner, updated)
	}
	for _, c := range []struct {
		name, field string
		known       bool
		dels        int
		garbage     bool
	}{
		{"read", `,"exerciseDelegates":[` + del(user, `"7"`) + `]`, true, 1, false},
		{"none enabled", `,"exerciseDelegates":[]`, true, 0, false},
		{"not asked", ``, false, 0, false},
		{"null", `,"exerciseDelegates":null`, false, 0, true},
		{"another owner's", `,"exerciseDelegates":[` + del(other, `"7"`) + `]`, false, 0, true},
		{"incomplete", `,"exerciseDelegates":[` + del(user, `null`) + `]`, false, 0, true},
		{"listed twice", `,"exerciseDelegates":[` + del(user, `"7"`) + `,` + del(user, `"7"`) + `]`, false, 0, true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"data":{"_meta":{"block":{"number":7,"hash":"0x%064x","timestamp":9000},"hasIndexingErrors":false},"options":[]%s}}`, 7, c.field)
		}))
		cl := testenv.NewSubgraph(t, srv.URL, subgraph.Options{})
		page, _, err := cl.PurchasePositions(context.Background(), subgraph.HistoryQuery{User: common.HexToAddress(user), Market: common.HexToAddress(other), First: 10})
		switch {
		case c.garbage && problem.As(err).Code != problem.SubgraphError:
			t.Errorf("%s: %v, want SUBGRAPH_ERROR", c.name, err)
		case !c.garbage && (err != nil || page.DelegatesRead != c.known || len(page.Delegates) != c.dels):
			t.Errorf("%s: %+v, %v; want known %v with %d delegates", c.name, page, err, c.known, c.dels)
		}
		srv.Close()
	}
}
