package graphnode

import (
	"bytes"
	"fmt"
	"math/big"
	"os"
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

// demoStore is the demo's recorded Arbitrum store, as the served binary
// loads it.
func demoStore(t *testing.T) ([]byte, *Schema) {
	t.Helper()
	raw, err := os.ReadFile("../demo/recordings/42161/store.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	return raw, s
}

// A store served for a process's whole life holds its entities as bytes:
// a few objects per entity type, whatever the versions (the demo's were
// about 9,000 as maps of values).
func TestStoreHoldsItsEntitiesForTheCollector(t *testing.T) {
	raw, s := demoStore(t)
	objects0, scan0 := liveObjects()
	st, err := LoadStore(s, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	objects1, scan1 := liveObjects()
	versions := 0
	for _, h := range st.entities {
		versions += len(h.versions)
	}
	runtime.KeepAlive(st)
	objects, scan := objects1-objects0, scan1-scan0
	t.Logf("%d types, %d versions: %d objects, %d bytes to scan", len(st.entities), versions, objects, scan)
	if versions < 300 {
		t.Fatalf("%d versions: not the demo's store", versions)
	}
	if objects > 1000 || scan > 64<<10 {
		t.Errorf("the store holds %d objects and %d bytes to scan, want at most 1,000 and 64 KiB", objects, scan)
	}
}

// The store saves what it loaded byte for byte (the recording was saved
// by the store when it held maps of values).
func TestHeldStoreSavesItsRecording(t *testing.T) {
	raw, s := demoStore(t)
	st, err := LoadStore(s, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := st.Save(&out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), raw) {
		t.Errorf("saved %d bytes, differing from the %d-byte recording", out.Len(), len(raw))
	}
}

// Every kind of value comes back as written, and a damaged encoding is an
// error, never a panic.
func TestEntityEncodingRoundTrips(t *testing.T) {
	st := NewStore(schemaOf(t, `type Thing @entity { id: ID! s: String b: Bytes n: Int n8: Int8 ts: Timestamp ok: Boolean
	  x: BigInt d: BigDecimal xs: [BigInt!] ss: [String!] bb: [Bytes!] }`))
	neg, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	d, _ := parseDecimal("-12.0340")
	e := Entity{"id": String("a"), "s": String("héllo"), "b": Bytes([]byte{0, 1, 0xff}), "n": Int(-7), "n8": {Kind: KindInt8, Int: 1 << 40},
		"ts": {Kind: KindTimestamp, Int: 1763726400000000}, "ok": Bool(true), "x": BigInt(neg), "d": d,
		"xs": Array(BigIntOf(0), BigIntOf(1)), "ss": Array(), "bb": Array(Bytes([]byte{}))}
	if err := st.Set("Thing", "a", e, 5); err != nil {
		t.Fatal(err)
	}
	got := st.Get("Thing", "a")
	for k, v := range e {
		if !equal(got[k], v) || fmt.Sprint(got[k].JSON()) != fmt.Sprint(v.JSON()) {
			t.Errorf("%s: %v, want %v", k, got[k].JSON(), v.JSON())
		}
	}
	if len(got) != len(e) {
		t.Errorf("%d fields back, want %d", len(got), len(e))
	}
	h := st.entities["Thing"]
	enc := h.bytes(h.versions[0].data)
	for n := range enc {
		if _, err := decodeEntity(h.t, enc[:n]); err == nil {
			t.Errorf("a %d-byte prefix of a %d-byte encoding decoded", n, len(enc))
		}
	}
	if _, err := decodeEntity(h.t, append(append([]byte{}, enc...), 0)); err == nil {
		t.Error("trailing bytes decoded")
	}
}

func schemaOf(t *testing.T, sdl string) *Schema {
	t.Helper()
	s, err := ParseSchema(sdl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
