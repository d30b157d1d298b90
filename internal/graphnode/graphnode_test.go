package graphnode_test

import (
	"encoding/json"
	"math/big"
	"sort"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/queries"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

func schema(t testing.TB) *graphnode.Schema {
	t.Helper()
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every document the gateway sends is valid for the query schema Graph
// Node derives from the subgraph's schema.
func TestQueryDocumentsValidate(t *testing.T) {
	s := schema(t)
	docs := queries.Embedded()
	if len(docs) == 0 {
		t.Fatal("no documents")
	}
	for name, d := range docs {
		if errs := s.Validate(d.Text); len(errs) > 0 {
			t.Errorf("queries/%s.graphql: %+v", name, errs)
		}
	}
}

// Documents Graph Node would refuse are refused, with Graph Node's
// message.
func TestWrongDocumentsAreRefusedAsGraphNodeRefusesThem(t *testing.T) {
	st := graphnode.NewStore(schema(t))
	st.SetHead(graphnode.Block{Number: 10, Timestamp: 1000})
	for _, c := range []struct {
		name, query string
		vars        map[string]any
		want        string
	}{
		{"unknown filter suffix", `{ strikes(where: {tickLower_like: 5}) { id } }`, nil,
			"Invalid value provided for argument `where`: Object({\"tickLower_like\": Int(Number(5))})"},
		{"nocase on a Bytes field", `query Q($p: Bytes!) { strikes(where: {pool_contains_nocase: $p, tickLower: 1}) { id } }`, map[string]any{"p": "0xab"},
			"Invalid value provided for argument `where`: Object({\"pool_contains_nocase\": String(\"0xab\"), \"tickLower\": Int(Number(1))})"},
		{"starts_with on an ID", `{ markets(where: {id_starts_with: "0x"}) { id } }`, nil, "Invalid value provided for argument `where`: Object({\"id_starts_with\": String(\"0x\")})"},
		{"first of 1001", `{ strikes(first: 1001) { id } }`, nil, "The `first` argument must be between 0 and 1000, but is 1001"},
		{"first of 1001 in a variable", `query Q($first: Int!) { markets(first: $first) { id } }`, map[string]any{"first": 1001},
			"The `first` argument must be between 0 and 1000, but is 1001"},
		{"skip of 5001", `{ options(skip: 5001) { id } }`, nil, "The `skip` argument must be between 0 and 5000, but is 5001"},
		{"nested first of 1001", `{ markets { dayData(first: 1001) { start } } }`, nil, ""},
		{"unknown field", `{ strikes { price } }`, nil, "Type `Strike` has no field `price`"},
		{"unknown orderBy", `{ strikes(orderBy: price) { id } }`, nil, "Invalid value provided for argument `orderBy`: Enum(\"price\")"},
		{"Int variable past 32 bits", `query Q($s: Int!) { marketDayDatas(where: {start_gte: $s}) { id } }`, map[string]any{"s": 3000000000},
			"Int cannot represent non 32-bit signed integer value: 3000000000 (variable `s`)"},
		{"missing variable", `query Q($first: Int!) { markets(first: $first) { id } }`, nil, "No value provided for required variable `first`"},
		{"block not yet indexed", `{ markets(block: {number: 11}) { id } }`, nil,
			"Failed to decode `block.number` value: `subgraph " + graphnode.Deployment + " has only indexed up to block number 10 and data for block number 11 is therefore not yet available`"},
	} {
		resp := st.Query(graphnode.Request{Query: c.query, Variables: c.vars})
		if c.want == "" { // no market: the nested bound is not reached
			if len(resp.Errors) != 0 {
				t.Errorf("%s: %+v", c.name, resp.Errors)
			}
			continue
		}
		if resp.Data != nil || len(resp.Errors) != 1 || resp.Errors[0].Message != c.want {
			t.Errorf("%s: got %+v, want %q", c.name, resp.Errors, c.want)
		}
	}
}

// The derived schema has Graph Node's names: collections, suffixes,
// nested filters and orderBy values, _meta.
func TestDerivedSchemaNames(t *testing.T) {
	s := schema(t)
	q := s.API.Query
	for _, f := range []string{"market", "markets", "marketDayData", "marketDayDatas", "strikeRef", "strikeRefs", "_meta"} {
		if q.Fields.ForName(f) == nil {
			t.Errorf("Query.%s missing", f)
		}
	}
	filter := s.API.Types["Strike_filter"]
	for _, f := range []string{"pool_in", "pool_not_contains", "tickLower_gte", "totalLiquidity_gt", "id_gt", "dailyDonations_", "and", "or", "_change_block"} {
		if filter.Fields.ForName(f) == nil {
			t.Errorf("Strike_filter.%s missing", f)
		}
	}
	for _, f := range []string{"pool_contains_nocase", "dailyDonations", "tickLower_contains"} {
		if filter.Fields.ForName(f) != nil {
			t.Errorf("Strike_filter.%s present; Graph Node has none", f)
		}
	}
	if s.API.Types["OptionLeg_filter"].Fields.ForName("strike_") == nil || s.API.Types["Option_filter"].Fields.ForName("owner_contains") == nil {
		t.Error("nested filter strike_ or Bytes owner_contains missing")
	}
	// The subgraph's schema has no list fields now: a small one shows the
	// list suffixes, and a plural that equals its singular.
	lists, err := graphnode.ParseSchema(`type PendingUses @entity(immutable: false) { id: ID! strikes: [String!]! liquidities: [BigInt!]! }`)
	if err != nil {
		t.Fatal(err)
	}
	if pu := lists.API.Types["PendingUses_filter"].Fields; pu.ForName("strikes_contains_nocase") == nil || pu.ForName("liquidities_contains") == nil || pu.ForName("liquidities_contains_nocase") != nil {
		t.Error("list suffixes are not Graph Node's: _nocase only on lists of strings")
	}
	if lists.API.Query.Fields.ForName("pendingUses_collection") == nil {
		t.Error("a plural equal to its singular is not named _collection")
	}
	if s.API.Types["Option_filter"].Fields.ForName("state_not") == nil || s.API.Types["Option_filter"].Fields.ForName("state_gt") != nil {
		t.Error("enum suffixes are not Graph Node's")
	}
	order := s.API.Types["Exercise_orderBy"]
	for _, v := range []string{"timestamp", "option", "option__tokenId", "option__mintTimestamp"} {
		if order.EnumValues.ForName(v) == nil {
			t.Errorf("Exercise_orderBy.%s missing", v)
		}
	}
	if order.EnumValues.ForName("option__legs") != nil || order.EnumValues.ForName("option__splitFrom") != nil {
		t.Error("orderBy on a child's list or entity field; Graph Node has none")
	}
	if args := s.API.Types["Market"].Fields.ForName("dayData").Arguments; args.ForName("where") == nil || args.ForName("first") == nil {
		t.Error("derived list field lacks collection arguments")
	}
}

func set(t *testing.T, st *graphnode.Store, typ, id string, e graphnode.Entity, block uint64) {
	t.Helper()
	e["id"] = graphnode.String(id)
	if err := st.Set(typ, id, e, block); err != nil {
		t.Fatal(err)
	}
}

func pool(t *testing.T, st *graphnode.Store, id string, block uint64) {
	set(t, st, "Pool", id, graphnode.Entity{"sqrtPriceX96": graphnode.BigIntOf(1), "tick": graphnode.Int(0)}, block)
}

func day(t *testing.T, st *graphnode.Store, market string, start, purchases int64, block uint64) {
	z := graphnode.BigIntOf(0)
	set(t, st, "MarketDayData", market+"-"+big.NewInt(start).String(), graphnode.Entity{"market": graphnode.String(market), "start": graphnode.Int(start),
		"purchases": graphnode.Int(purchases), "exercises": graphnode.Int(0), "callVolume": z, "putVolume": z, "callPremium": z, "putPremium": z,
		"callProtocolFees": z, "putProtocolFees": z, "callProfit": z, "putProfit": z, "callVolumeInPut": z, "callPremiumInPut": z,
		"callProtocolFeesInPut": z, "putProfitInPut": z, "buyers": graphnode.Int(0)}, block)
}

func market(t *testing.T, st *graphnode.Store, id string, purchases int64, block uint64) {
	z := graphnode.BigIntOf(0)
	set(t, st, "Market", id, graphnode.Entity{"version": graphnode.Int(2), "primePool": graphnode.String("0xp"), "callAsset": graphnode.HexBytes("0x01"),
		"putAsset": graphnode.HexBytes("0x02"), "createdAtBlock": graphnode.BigIntOf(1), "purchases": graphnode.Int(purchases), "exercises": graphnode.Int(0),
		"callVolume": z, "putVolume": z, "callPremium": z, "putPremium": z, "callProtocolFees": z, "putProtocolFees": z}, block)
}

func query(t *testing.T, st *graphnode.Store, q string, vars map[string]any) string {
	t.Helper()
	resp := st.Query(graphnode.Request{Query: q, Variables: vars})
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Queries read the state as of the block asked, the head by default;
// filters, nested filters, derived fields, ordering with the id tiebreak
// and paging follow Graph Node.
func TestQueriesReadVersionsAndFollowGraphNodeSemantics(t *testing.T) {
	st := graphnode.NewStore(schema(t))
	pool(t, st, "0xp", 1)
	market(t, st, "0xa", 1, 1)
	market(t, st, "0xb", 0, 1)
	day(t, st, "0xa", 86400, 1, 1)
	st.SetHead(graphnode.Block{Number: 1, Hash: "0x01", Timestamp: 100})
	market(t, st, "0xa", 3, 2)
	market(t, st, "0xc", 3, 2)
	day(t, st, "0xa", 2*86400, 2, 2)
	st.SetHead(graphnode.Block{Number: 2, Hash: "0x02", Timestamp: 112})
	if err := st.Remove("Market", "0xb", 2); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ q, want string }{
		{`{ markets { id purchases } }`, `{"data":{"markets":[{"id":"0xa","purchases":3},{"id":"0xc","purchases":3}]}}`},
		{`{ markets(block: {number: 1}) { id purchases } }`, `{"data":{"markets":[{"id":"0xa","purchases":1},{"id":"0xb","purchases":0}]}}`},
		{`{ _meta(block: {number: 1}) { block { number hash timestamp } hasIndexingErrors } }`, `{"data":{"_meta":{"block":{"number":1,"hash":null,"timestamp":null},"hasIndexingErrors":false}}}`},
		{`{ _meta(block: {hash: "0x01"}) { block { number hash timestamp } } }`, `{"data":{"_meta":{"block":{"number":1,"hash":"0x01","timestamp":100}}}}`},
		{`{ _meta { block { number hash parentHash } deployment } }`, `{"data":{"_meta":{"block":{"number":2,"hash":"0x02","parentHash":"0x01"},"deployment":"` + graphnode.Deployment + `"}}}`},
		{`{ markets(orderBy: purchases, orderDirection: desc) { id } }`, `{"data":{"markets":[{"id":"0xc"},{"id":"0xa"}]}}`},
		{`{ markets(where: {dayData_: {purchases_gte: 2}}) { id dayData(orderBy: start, orderDirection: desc, first: 1) { start } primePool { id } } }`,
			`{"data":{"markets":[{"id":"0xa","dayData":[{"start":172800}],"primePool":{"id":"0xp"}}]}}`},
		{`{ marketDayDatas(where: {market_: {purchases: 3}, start_in: [86400]}) { id market { id } } }`, `{"data":{"marketDayDatas":[{"id":"0xa-86400","market":{"id":"0xa"}}]}}`},
		{`{ marketDayDatas(orderBy: market__purchases, where: {or: [{start: 86400}, {purchases: 2}]}, skip: 1) { id } }`, `{"data":{"marketDayDatas":[{"id":"0xa-86400"}]}}`},
		{`{ markets(where: {callAsset: "0x01", putAsset_not: "0x01", id_not_in: ["0xc"]}) { id } }`, `{"data":{"markets":[{"id":"0xa"}]}}`},
		{`{ markets(where: {_change_block: {number_gte: 2}, id_gte: "0xb"}) { id } }`, `{"data":{"markets":[{"id":"0xc"}]}}`},
		{`{ market(id: "0xb") { id } m: market(id: "0xa") { __typename purchases } }`, `{"data":{"market":null,"m":{"__typename":"Market","purchases":3}}}`},
	} {
		if got := query(t, st, c.q, nil); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.q, got, c.want)
		}
	}
	st.SetIndexingErrors(true)
	if got := query(t, st, `{ markets { id } }`, nil); got != `{"errors":[{"message":"indexing_error"}]}` {
		t.Errorf("indexing error under deny: %s", got)
	}
	if got := query(t, st, `{ markets(subgraphError: allow, first: 1) { id } _meta { hasIndexingErrors } }`, nil); got != `{"data":{"markets":[{"id":"0xa"}],"_meta":{"hasIndexingErrors":true}}}` {
		t.Errorf("indexing error under allow: %s", got)
	}
}

// The store keeps Graph Node's rules for writes and survives a round trip
// through its recording.
func TestStoreChecksWritesAndRecords(t *testing.T) {
	st := graphnode.NewStore(schema(t))
	if err := st.Set("Market", "0xa", graphnode.Entity{"id": graphnode.String("0xa")}, 1); err == nil || !strings.Contains(err.Error(), "missing value for non-nullable field") {
		t.Errorf("incomplete market accepted: %v", err)
	}
	if err := st.Set("Pool", "0xp", graphnode.Entity{"id": graphnode.String("0xp"), "sqrtPriceX96": graphnode.Int(1), "tick": graphnode.Int(0)}, 1); err == nil {
		t.Error("an Int stored in a BigInt field")
	}
	pool(t, st, "0xp", 1)
	market(t, st, "0xa", 1, 1)
	market(t, st, "0xa", 2, 3)
	st.SetHead(graphnode.Block{Number: 3, Hash: "0x03", Timestamp: 5})
	var b strings.Builder
	if err := st.Save(&b); err != nil {
		t.Fatal(err)
	}
	back, err := graphnode.LoadStore(st.Schema(), strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`{ markets(block: {number: 2}) { id purchases callAsset createdAtBlock } }`, `{ markets { purchases } _meta { block { number hash } } }`} {
		if a, b := query(t, st, q, nil), query(t, back, q, nil); a != b || strings.Contains(a, "errors") {
			t.Errorf("%s: %s after a round trip, %s before", q, b, a)
		}
	}
	ids := back.All("Market")
	sort.Strings(ids)
	if len(ids) != 1 || ids[0] != "0xa" {
		t.Errorf("ids %v", ids)
	}
}
