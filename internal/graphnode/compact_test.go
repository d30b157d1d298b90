package graphnode

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/queries"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// liveObjects is the heap's objects and bytes to scan after a collection.
func liveObjects() (objects, scan int64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// A gateway keeps each subgraph's query schema for its whole life and
// every collection marks it: the derived schema is held in a few hundred
// objects (gqlparser's own load of it is about 15,000).
func TestSchemaHoldsFewObjectsForTheCollector(t *testing.T) {
	objects0, scan0 := liveObjects()
	s, err := ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	objects1, scan1 := liveObjects()
	fields := 0
	for _, d := range s.API.Types {
		fields += len(d.Fields)
	}
	runtime.KeepAlive(s)
	objects, scan := objects1-objects0, scan1-scan0
	t.Logf("%d types, %d fields: %d objects, %d bytes to scan", len(s.API.Types), fields, objects, scan)
	if fields < 2000 {
		t.Fatalf("%d fields: not the subgraph's derived schema", fields)
	}
	if objects > 2000 {
		t.Errorf("the schema holds %d objects, want at most 2,000", objects)
	}
}

// The compacted schema validates every document as gqlparser's own load
// of the same SDL does: the same errors at the same places, and the same
// coerced variables.
func TestCompactSchemaValidatesAsLoaded(t *testing.T) {
	s, err := ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := gqlparser.LoadSchema(&ast.Source{Name: "api.graphql", Input: s.SDL})
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{
		`{ strikes(where: {tickLower_like: 5}) { id } }`,
		`query Q($p: Bytes!) { strikes(where: {pool_contains_nocase: $p, tickLower: 1}) { id } }`,
		`{ markets(where: {id_starts_with: "0x"}) { id } }`,
		`{ strikes { price } }`,
		`{ strikes(orderBy: price) { id } }`,
		`query Q($s: Int!) { marketDayDatas(where: {start_gte: $s}) { id } }`,
		`query Q($first: Int!) { markets(first: $first) { id } }`,
		`query Q($first: String) { markets(first: $first, skip: "x") { id ... on Strike { id } } }`,
		`{ markets(block: {number: "x"}, subgraphError: maybe) { id dayData(first: 1, where: {start_gt: 1}) { start } } _meta { block { number } } }`,
		`{ __schema { types { name } } __type(name: "Strike") { fields { name } } }`,
		`query Q($w: Strike_filter, $o: OrderDirection = asc) { strikes(where: $w, orderDirection: $o) { id @include(if: true) @skip(if: 1) } }`,
	}
	for name, d := range queries.Embedded() {
		docs = append(docs, d.Text)
		_ = name
	}
	vars := map[string]any{"p": "0xab", "s": 3000000000, "first": 5, "w": map[string]any{"id_gt": "a", "nope": 1}}
	for _, doc := range docs {
		if got, want := validated(s.API, doc, vars), validated(loaded, doc, vars); got != want {
			t.Errorf("%s:\n compact: %s\n loaded:  %s", doc, got, want)
		}
	}
}

func validated(api *ast.Schema, query string, vars map[string]any) string {
	doc, err := parser.ParseQuery(&ast.Source{Name: "query", Input: query})
	if err != nil {
		return err.Error()
	}
	out := fmt.Sprint(validator.ValidateWithRules(api, doc, rules))
	for _, op := range doc.Operations {
		v, err := validator.VariableValues(api, op, vars)
		out += fmt.Sprintf(" | %v %v", v, err)
	}
	return out
}
