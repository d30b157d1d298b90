package sqlstore

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	gateway "github.com/clamm-gateway/clamm-gateway/queries"
)

type traced struct {
	q    string
	args []any
}

// Every read the gateway's documents make is planned over an index: no
// statement scans an entity table whole (SQLite plans without statistics,
// so a small store's plans are a large one's).
func TestDocumentsUseIndexes(t *testing.T) {
	st := benchStore(t, 1_000)
	var seen []traced
	traceRead = func(q string, args []any) { seen = append(seen, traced{q, args}) }
	defer func() { traceRead = nil }()
	docs := gateway.Embedded()
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		seen = nil
		doc := docs[name]
		r := st.Query(graphnode.Request{Query: doc.Text, OperationName: doc.OperationName, Variables: benchVars(name)})
		if len(r.Errors) > 0 {
			t.Fatalf("%s: %+v", name, r.Errors)
		}
		done := map[string]bool{}
		for _, s := range seen {
			if done[s.q] {
				continue
			}
			done[s.q] = true
			for _, line := range plan(t, st, s) {
				// a SCAN of a table or of an index reads it whole
				if strings.Contains(line, "SCAN e_") {
					t.Errorf("%s: %s\n  in %s", name, line, s.q)
				}
				t.Logf("%s: %s", name, line)
			}
		}
	}
}

func plan(t *testing.T, st *Store, s traced) []string {
	t.Helper()
	rows, err := st.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+s.q, s.args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	return out
}

// An answer costs a few reads, not one per row: a level of references
// or derived fields (a page's options, each option's legs) is read in one
// statement (prefetch), as Graph Node reads a level. Read a row at a
// time, this store's leaderboard of exercises took 201 reads (an option
// each), the open options 76 (their legs).
func TestAnswersReadByLevel(t *testing.T) {
	st := benchStore(t, 1_000)
	reads := 0
	traceRead = func(string, []any) { reads++ }
	defer func() { traceRead = nil }()
	for name, doc := range gateway.Embedded() {
		reads = 0
		r := st.Query(graphnode.Request{Query: doc.Text, OperationName: doc.OperationName, Variables: benchVars(name)})
		raw, _ := json.Marshal(r)
		if len(r.Errors) > 0 {
			t.Fatalf("%s: %s", name, raw)
		}
		// strikes: its pools, their pool, the strikes, and two derived
		// fields of theirs
		if reads > 5 {
			t.Errorf("%s: %d reads for %d bytes", name, reads, len(raw))
		}
		t.Logf("%s: %d reads, %d bytes", name, reads, len(raw))
	}
}

// A user's page on one market is read by an index on both: by the user
// alone, a page on a market the user seldom trades walks every entry the
// user has on the others (a busy account's whole history) to fill it.
func TestUserPagesSearchByMarket(t *testing.T) {
	st := benchStore(t, 1_000)
	want := map[string]string{
		"purchase_history":   "SEARCH e_Purchase USING INDEX e_Purchase_buyer_market_logOrder (buyer=? AND market=?)",
		"exercise_history":   "SEARCH e_Exercise USING INDEX e_Exercise_user_market_logOrder (user=? AND market=?)",
		"settlement_history": "SEARCH e_Settlement USING INDEX e_Settlement_user_market_logOrder (user=? AND market=?)",
		"purchase_positions": "SEARCH e_Option USING INDEX e_Option_owner_market_mintLogOrder (owner=? AND market=?)",
	}
	var seen []traced
	traceRead = func(q string, args []any) { seen = append(seen, traced{q, args}) }
	defer func() { traceRead = nil }()
	docs := gateway.Embedded()
	for name, line := range want {
		seen = nil
		doc := docs[name]
		if r := st.Query(graphnode.Request{Query: doc.Text, OperationName: doc.OperationName, Variables: benchVars(name)}); len(r.Errors) > 0 {
			t.Fatalf("%s: %+v", name, r.Errors)
		}
		var plans []string
		for _, s := range seen {
			plans = append(plans, plan(t, st, s)...)
		}
		if !slices.Contains(plans, line) {
			t.Errorf("%s: no %q in its plans:\n%s", name, line, strings.Join(plans, "\n"))
		}
	}
}
