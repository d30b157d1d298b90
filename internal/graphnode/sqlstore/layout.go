package sqlstore

import (
	"fmt"
	"sort"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// The layout: a table per entity type, as Graph Node's relational
// layout keeps one (graph-node store/postgres relational.rs), rather than
// one table of JSON with generated columns over it. A column per stored
// field holds each value in a form SQLite compares as the executor does
// (encoding), so a filter or an order is an indexed SQL expression, and
// no field name or decimal digit is repeated in every version: the store
// is several times smaller than JSON (no keys, Bytes and BigInt as bytes).
//
// Each table:
//
//	vid   INTEGER PRIMARY KEY  the version's row, in the order written
//	id                         the entity's id
//	lower INTEGER NOT NULL     the block the version starts at
//	upper INTEGER              the block it ends at; NULL: still valid
//	"<field>" ...              one column per stored field
//
// A version is valid at block b when lower <= b < upper (Graph Node's
// block range). Indexes:
//
//   - (id, lower), unique: an entity as of a block, and the writer's
//     open version;
//   - (upper) over the closed versions: a read at a past block, a
//     revert, the retention's pruning;
//   - for a mutable type, (id) over the open versions: id-ordered pages;
//   - the fields the gateway's documents filter and order by (indexes
//     below, and the field a derived field reads back), each over the
//     open versions only (WHERE upper IS NULL): a version closed by a
//     later write costs no index entry, and a read at a block near the
//     head finds the few versions closed since in the (upper) index.
//
// vid grows with the block written (blocks are written in order), so a
// revert deletes a suffix of vid and needs no index on lower.
type table struct {
	typ  *graphnode.EntityType
	name string // quoted
	// cols are the stored fields but id, in schema order.
	cols    []column
	byField map[string]int
	idBytes bool
	// list is the column list of a SELECT (id, lower, upper, fields).
	list string
}

type column struct {
	f    *graphnode.Field
	name string // quoted
	enc  encoding
}

// indexes are the fields the gateway's documents (queries/*.graphql)
// filter on by equality, then the one they order or range by: with them
// each document's page reads the entries it returns (and its ties), not
// the type. TestDocumentsUseIndexes holds every document's plan to them.
// A user's page on one market searches by both (user, market): by the
// user alone it would walk the user's entries on every market until it
// found a page on this one (TestUserPagesSearchByMarket); settlements
// are asked by user alone too.
var indexes = map[string][][]string{
	"Purchase":         {{"buyer", "market", "logOrder"}, {"market", "timestamp"}},
	"Exercise":         {{"user", "market", "logOrder"}, {"market", "timestamp"}},
	"Settlement":       {{"user", "logOrder"}, {"user", "market", "logOrder"}},
	"SettlementLeg":    {{"settlement", "index"}},
	"Option":           {{"market", "expiry"}, {"owner", "market", "mintLogOrder"}, {"market", "hasLiquidity"}},
	"OptionLeg":        {{"option", "index"}},
	"ExerciseDelegate": {{"owner"}},
	"LpDeposit":        {{"user", "logOrder"}},
	"LpWithdrawal":     {{"user", "logOrder"}},
	"LpPosition":       {{"user", "openedLogOrder"}},
	"MarketDayData":    {{"market", "start"}},
	"MarketDayBuyer":   {{"market", "start"}},
	"MarketPool":       {{"market"}},
	"Strike":           {{"pool", "tickLower"}},
	"DailyDonation":    {{"strike", "start"}},
	"DailyFeeCompound": {{"strike", "start"}},
	"Swapper":          {{"blockNumber"}},
}

// quote is an SQL identifier.
func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// layout makes the tables of a schema's entity types.
func layout(s *graphnode.Schema) map[string]*table {
	out := map[string]*table{}
	for _, name := range s.TypeNames() {
		t := s.Types[name]
		tb := &table{typ: t, name: quote("e_" + name), byField: map[string]int{}, idBytes: t.Field("id").Base == "Bytes"}
		list := []string{"id", "lower", "upper"}
		for _, f := range t.Fields {
			if f.Name == "id" || f.DerivedFrom != "" {
				continue
			}
			tb.byField[f.Name] = len(tb.cols)
			tb.cols = append(tb.cols, column{f: f, name: quote(f.Name), enc: encodingOf(f)})
			list = append(list, quote(f.Name))
		}
		tb.list = strings.Join(list, ", ")
		out[name] = tb
	}
	return out
}

// ddl creates the tables and their indexes.
func ddl(s *graphnode.Schema, tables map[string]*table) string {
	var b strings.Builder
	for _, name := range s.TypeNames() {
		tb := tables[name]
		idType := "TEXT"
		if tb.idBytes {
			idType = "BLOB"
		}
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (vid INTEGER PRIMARY KEY, id %s NOT NULL, lower INTEGER NOT NULL, upper INTEGER", tb.name, idType)
		for _, c := range tb.cols {
			fmt.Fprintf(&b, ", %s %s", c.name, map[encoding]string{encText: "TEXT", encInt: "INTEGER", encBool: "INTEGER",
				encBytes: "BLOB", encBig: "BLOB", encJSON: "TEXT"}[c.enc])
		}
		b.WriteString(");\n")
		for _, ix := range tb.indexDefs(s) {
			b.WriteString(ix + ";\n")
		}
	}
	return b.String()
}

// indexDefs are the CREATE INDEX statements of a table.
func (tb *table) indexDefs(s *graphnode.Schema) []string {
	n := strings.Trim(tb.name, `"`)
	out := []string{
		fmt.Sprintf(`CREATE UNIQUE INDEX IF NOT EXISTS %s ON %s(id, lower)`, quote(n+"_id"), tb.name),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s(upper) WHERE upper IS NOT NULL`, tb.upperIndex(), tb.name),
	}
	if !tb.typ.Immutable {
		out = append(out, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s(id) WHERE upper IS NULL`, quote(n+"_open"), tb.name))
	}
	for _, fields := range tb.indexed(s) {
		cols := make([]string, len(fields))
		for i, f := range fields {
			cols[i] = quote(f)
		}
		out = append(out, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s(%s) WHERE upper IS NULL`,
			quote(n+"_"+strings.Join(fields, "_")), tb.name, strings.Join(cols, ", ")))
	}
	return out
}

// upperIndex is the index of the closed versions by their upper block.
func (tb *table) upperIndex() string { return quote(strings.Trim(tb.name, `"`) + "_upper") }

// indexed are the field lists a table indexes: the documents' (indexes),
// and each field a derived field of another type reads back by, unless
// one of those starts with it.
func (tb *table) indexed(s *graphnode.Schema) [][]string {
	out := append([][]string(nil), indexes[tb.typ.Name]...)
	var back []string
	for _, other := range s.Types {
		for _, f := range other.Fields {
			if f.DerivedFrom != "" && f.Base == tb.typ.Name {
				back = append(back, f.DerivedFrom)
			}
		}
	}
	sort.Strings(back)
	for _, field := range back {
		covered := false
		for _, ix := range out {
			covered = covered || ix[0] == field
		}
		if _, stored := tb.byField[field]; stored && !covered {
			out = append(out, []string{field})
		}
	}
	return out
}
