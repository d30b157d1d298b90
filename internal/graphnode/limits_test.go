package graphnode_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// lpFields are the 16 fields attack 5 selected of each LP deposit.
const lpFields = "id user caller handler tokenId pool hook tickLower tickUpper liquidity shares sqrtPriceX96 blockNumber timestamp logOrder txHash"

// fragmentBomb is attack 5's: L fragments, each spreading the next twice
// through two aliased single-entity collections (2^L leaves in 2 KB).
func fragmentBomb(levels int) string {
	var frs []string
	for i := range levels {
		next := fmt.Sprintf("...F%d", i+1)
		if i+1 == levels {
			next = "id"
		}
		frs = append(frs, fmt.Sprintf("fragment F%d on Strike { a: dailyDonations(first: 1) { strike { %s } } b: dailyDonations(first: 1) { strike { %s } } }", i, next, next))
	}
	return "query { strikes(first: 1) { ...F0 } } " + strings.Join(frs, " ")
}

func aliases(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: lpDeposits(first: 1000) { %s }", i, lpFields)
	}
	return b.String() + " }"
}

func repeated(n int) string {
	return "{" + strings.Repeat(" _meta { block { number } }", n) + " }"
}

// Attack 5's S3 documents, and the other shapes that multiply a query's
// work, are refused before anything runs, each with its bound named: the
// answer is the error alone, as Graph Node answers its complexity and
// depth errors. A document just within each bound runs.
func TestQueryCostIsBoundedBeforeItRuns(t *testing.T) {
	st := graphnode.NewStore(schema(t))
	st.SetHead(graphnode.Block{Number: 10, Hash: "0x0a", Timestamp: 1000})
	nested := "{ strikes(first: 1000) { dailyDonations(first: 1000) { id } } }"
	deep := "id"
	for range 150 {
		deep = "dailyDonations(first: 1) { strike { " + deep + " } }"
	}
	deep = "{ strikes(first: 1) { " + deep + " } }"
	for _, c := range []struct{ name, query, want string }{
		{"fragment bomb of 8 levels (510 aliases)", fragmentBomb(8), "query has `510` aliased fields or more and thereby exceeds the limit of `32` aliases"},
		{"fragment bomb of 16 levels (2 KB)", fragmentBomb(16), "query selects more than `5000` fields once its fragments are expanded"},
		{"fragment bomb of 30 levels", fragmentBomb(30), "query selects more than `5000` fields once its fragments are expanded"},
		{"100 aliases of lpDeposits(first: 1000)", aliases(100), "query has `100` aliased fields or more and thereby exceeds the limit of `32` aliases"},
		{"300 aliases of lpDeposits(first: 1000) (5,100 fields)", aliases(300), "query selects more than `5000` fields once its fragments are expanded"},
		{"4,000 repeated fields", repeated(4000), "query selects more than `5000` fields once its fragments are expanded"},
		{"1,000 repeated fields", repeated(1000), "query selects `_meta` `1000` times in one selection set and thereby exceeds the limit of `100`"},
		{"collections nested in collections", nested, "query potentially returns `1001000` entities or more and thereby exceeds the limit of `110000` entities"},
		{"301 levels", deep, "query has a depth that exceeds the limit of `255`"},
	} {
		resp := st.Query(graphnode.Request{Query: c.query})
		if resp.Data != nil || len(resp.Errors) != 1 || !strings.HasPrefix(resp.Errors[0].Message, c.want) {
			t.Errorf("%s: %+v, want one error %q", c.name, resp.Errors, c.want)
		}
	}
	for _, c := range []struct{ name, query string }{
		{"fragment bomb of 4 levels (30 aliases)", fragmentBomb(4)},
		{"32 aliases", aliases(32)},
		{"100 repeated fields", repeated(100)},
	} {
		if resp := st.Query(graphnode.Request{Query: c.query}); len(resp.Errors) != 0 || resp.Data == nil {
			t.Errorf("%s (within the bounds): %+v", c.name, resp.Errors)
		}
	}
}

// Fields of one response name must merge (the GraphQL rule gqlparser runs
// pairwise): the linear check finds the same conflicts as gqlparser's own
// rule, the oracle here, with its message, and passes what it passes.
func TestFieldMergingAsGraphQLRules(t *testing.T) {
	s := schema(t)
	for _, q := range []string{
		`{ a: strikes { id } a: markets { id } }`,
		`{ strikes(first: 1) { id } strikes(first: 2) { id } }`,
		`{ strikes { id } strikes { tickLower } }`,
		`{ strikes { x: id } strikes { x: tickLower } }`,
		`{ ...A ...B } fragment A on Query { s: strikes(first: 1) { id } } fragment B on Query { s: strikes(first: 2) { id } }`,
		`{ ...A ...B } fragment A on Query { s: strikes(first: 1) { id } } fragment B on Query { s: strikes(first: 1) { tickLower } }`,
		`{ strikes { id id ... on Strike { id } } }`,
		`query Q($f: Int) { strikes(first: $f) { id } strikes(first: $f) { id } }`,
		`{ _meta { block { number } } _meta(block: {number: 1}) { block { number } } }`,
		`{ strikes { dailyDonations { s: strike { id } } } strikes { dailyDonations { s: id } } }`,
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: q})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, e := range validator.ValidateWithRules(s.API, doc, nil) {
			if e.Rule == "OverlappingFieldsCanBeMerged" {
				want = append(want, e.Message)
			}
		}
		var got []string
		for _, e := range s.Validate(q) {
			got = append(got, e.Message)
		}
		switch {
		case len(want) == 0 && len(got) != 0:
			t.Errorf("%s: %v, gqlparser finds no conflict", q, got)
		case len(want) != 0 && (len(got) != 1 || got[0] != want[0]):
			t.Errorf("%s:\n got %q\nwant %q (gqlparser)", q, got, want[0])
		}
	}
}

// Validating a field repeated n times costs in proportion to n: 4 times
// the repeats, at most 6 times the allocations (gqlparser's pairwise rule
// makes it 16; attack 5 measured 4,000 repeats at 10 s of validation).
// Counted in allocations, not time: the machine is shared.
func TestRepeatedFieldsValidateInLinearTime(t *testing.T) {
	s := schema(t)
	s.Limits = graphnode.Limits{} // the check itself, past the bounds
	allocs := func(n int) float64 {
		q := repeated(n)
		return testing.AllocsPerRun(2, func() {
			if errs := s.Validate(q); len(errs) != 0 {
				t.Fatal(errs)
			}
		})
	}
	small, large := allocs(500), allocs(2000)
	if large > 6*small {
		t.Errorf("validating 2,000 repeats allocates %.0f times, 500 repeats %.0f: %.1fx for 4x the repeats", large, small, large/small)
	}
}

// The heap stays bounded: over a store of 3,000 LP deposits, attack 5's
// alias and fragment documents allocate a few MiB between them (refused
// before any read), where executing 100 aliased pages of 1,000 would
// allocate hundreds of MiB. Allocation is measured (runtime.MemStats'
// TotalAlloc, which only grows), not time, and the bound is far from
// both: 64 MiB.
func TestRefusedQueriesAllocateLittle(t *testing.T) {
	st := graphnode.NewStore(schema(t))
	addr := graphnode.HexBytes("0x00000000000000000000000000000000000000aa")
	for i := range 3000 {
		n := graphnode.BigIntOf(int64(i))
		id := fmt.Sprintf("0x%064x-%d", i, i)
		if err := st.Set("LpDeposit", id, graphnode.Entity{
			"id": graphnode.String(id), "user": addr, "caller": addr, "handler": addr, "tokenId": n, "strike": graphnode.String("s"), "pool": addr, "hook": addr,
			"tickLower": graphnode.Int(-10), "tickUpper": graphnode.Int(10), "liquidity": n, "shares": n, "sqrtPriceX96": n,
			"blockNumber": n, "timestamp": n, "logOrder": n, "txHash": graphnode.HexBytes(fmt.Sprintf("0x%064x", i)),
		}, 1); err != nil {
			t.Fatal(err)
		}
	}
	st.SetHead(graphnode.Block{Number: 1, Hash: "0x01", Timestamp: 100})
	// One page of 1,000 runs, and allocates: the measure is not blind.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp := st.Query(graphnode.Request{Query: aliases(1)})
	runtime.ReadMemStats(&after)
	page := after.TotalAlloc - before.TotalAlloc
	if len(resp.Errors) != 0 || page < 1<<20 {
		t.Fatalf("one page: %+v, %d bytes allocated", resp.Errors, page)
	}
	runtime.ReadMemStats(&before)
	for _, q := range []string{aliases(100), aliases(300), fragmentBomb(16), fragmentBomb(20), repeated(4000)} {
		if resp := st.Query(graphnode.Request{Query: q}); resp.Data != nil || len(resp.Errors) != 1 {
			t.Fatalf("not refused: %+v", resp.Errors)
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("five refused queries allocated %d MiB (one page of 1,000: %d MiB)", n>>20, page>>20)
	}
}
