package gateway

import (
	"bytes"
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

var updateOpenAPI = flag.Bool("update", false, "regenerate docs/openapi.json's schemas from the Go types")

// schemaTypes names the Go type each component schema of the OpenAPI
// document is generated from. The answers are these types marshalled
// (asOf added in front of an object answer), so their shape (which
// properties, their JSON types, which are required, which may be null,
// which refer to which schema) is derived here, never written by hand.
var schemaTypes = map[string]reflect.Type{
	"Error":              reflect.TypeFor[errorBody](),
	"StreamRequest":      reflect.TypeFor[wsIn](),
	"StreamMessage":      reflect.TypeFor[wsOut](),
	"AsOf":               reflect.TypeFor[asOf](),
	"ChainReadiness":     reflect.TypeFor[service.ChainReadiness](),
	"Indexing":           reflect.TypeFor[vocab.Indexing](),
	"Token":              reflect.TypeFor[vocab.Token](),
	"Strike":             reflect.TypeFor[market.Strike](),
	"StrikeEntry":        reflect.TypeFor[market.StrikeEntry](),
	"ExerciseRecord":     reflect.TypeFor[trade.ExerciseRecord](),
	"PurchaseRecord":     reflect.TypeFor[trade.PurchaseRecord](),
	"PositionRecord":     reflect.TypeFor[trade.PositionRecord](),
	"PositionLeg":        reflect.TypeFor[trade.PositionLeg](),
	"PreparedLeg":        reflect.TypeFor[trade.PreparedLeg](),
	"Prepared":           reflect.TypeFor[trade.Prepared](),
	"MarketSums":         reflect.TypeFor[market.MarketSums](),
	"DaySums":            reflect.TypeFor[market.DaySums](),
	"OptionMarket":       reflect.TypeFor[market.OptionMarket](),
	"MarketSwapper":      reflect.TypeFor[market.MarketSwapper](),
	"PurchaseLeg":        reflect.TypeFor[trade.PurchaseLeg](),
	"PurchaseQuote":      reflect.TypeFor[trade.PurchaseQuote](),
	"PreparedPurchase":   reflect.TypeFor[trade.PreparedPurchase](),
	"ChainOption":        reflect.TypeFor[market.ChainOption](),
	"OptionsChain":       reflect.TypeFor[market.OptionsChain](),
	"StatsAmounts":       reflect.TypeFor[market.StatsAmounts](),
	"StatsFigures":       reflect.TypeFor[market.StatsFigures](),
	"StatsDay":           reflect.TypeFor[market.StatsDay](),
	"StatsOpenInterest":  reflect.TypeFor[market.StatsOpenInterest](),
	"StatsTVL":           reflect.TypeFor[market.StatsTVL](),
	"MarketStats":        reflect.TypeFor[market.MarketStats](),
	"TokenAmount":        reflect.TypeFor[vocab.TokenAmount](),
	"LPHandler":          reflect.TypeFor[liquidity.LPHandler](),
	"PreparedDeposit":    reflect.TypeFor[liquidity.PreparedDeposit](),
	"PreparedWithdrawal": reflect.TypeFor[liquidity.PreparedWithdrawal](),
	"LPAmount":           reflect.TypeFor[liquidity.LPAmount](),
	"LPHistoryRecord":    reflect.TypeFor[liquidity.LPHistoryRecord](),
	"LPReserved":         reflect.TypeFor[liquidity.LPReserved](),
	"LPPositionRecord":   reflect.TypeFor[liquidity.LPPositionRecord](),
	"Outcome":            reflect.TypeFor[trade.Outcome](),
	"AutoExerciseTerms":  reflect.TypeFor[trade.AutoExerciseTerms](),
	"AutoExercise":       reflect.TypeFor[trade.AutoExercise](),
	"ExpiringRecord":     reflect.TypeFor[trade.ExpiringRecord](),
	"PreparedDelegate":   reflect.TypeFor[trade.PreparedDelegate](),
	"SettledLeg":         reflect.TypeFor[trade.SettledLegRecord](),
	"SettlementRecord":   reflect.TypeFor[trade.SettlementRecord](),
	"MarkPrice":          reflect.TypeFor[market.MarkPrice](),
	"Candle":             reflect.TypeFor[market.Candle](),
	"Candles":            reflect.TypeFor[market.Candles](),
	"ChainStats":         reflect.TypeFor[market.ChainStats](),
	"ChainFigures":       reflect.TypeFor[market.ChainFigures](),
	"ChainDay":           reflect.TypeFor[market.ChainDay](),
	"TokenFigures":       reflect.TypeFor[market.TokenFigures](),
	"ChainUSD":           reflect.TypeFor[market.ChainUSD](),
	"Leaderboard":        reflect.TypeFor[market.Leaderboard](),
	"LeaderboardEntry":   reflect.TypeFor[market.LeaderboardEntry](),
	"BoardTokenFigures":  reflect.TypeFor[market.BoardTokenFigures](),
	"BoardUSD":           reflect.TypeFor[market.BoardUSD](),
	"ChainHoldings":      reflect.TypeFor[market.ChainHoldings](),
	"PoolHoldings":       reflect.TypeFor[market.PoolHoldings](),
	"SellOrder":          reflect.TypeFor[vocab.SellOrder](),
	"SignedOrder":        reflect.TypeFor[orders.SignedOrder](),
	"OrderView":          reflect.TypeFor[orders.View](),
	"OrderClosure":       reflect.TypeFor[orders.Closure](),
	"PreparedOrder":      reflect.TypeFor[orders.Prepared](),
	"TypedData":          reflect.TypeFor[orders.TypedData](),
	"TypedField":         reflect.TypeFor[orders.TypedField](),
	"TypedDomain":        reflect.TypeFor[orders.TypedDomain](),
	"OrderStep":          reflect.TypeFor[orders.Step](),
	"OrderFill":          reflect.TypeFor[orders.Fill](),
	"PreparedCancel":     reflect.TypeFor[orders.PreparedCancel](),
	"DeleteOrders":       reflect.TypeFor[orders.DeleteRequest](),
	// The hosted API's shapes (hosted.go).
	"HostedMarket":      reflect.TypeFor[market.HostedMarket](),
	"HostedPool":        reflect.TypeFor[market.HostedPool](),
	"HostedToken":       reflect.TypeFor[market.HostedToken](),
	"HostedMarkPrice":   reflect.TypeFor[market.HostedMarkPrice](),
	"HostedLastPrice":   reflect.TypeFor[market.HostedLastPrice](),
	"HostedCandle":      reflect.TypeFor[market.HostedCandle](),
	"USDNumber":         reflect.TypeFor[market.USD](),
	"HostedFees":        reflect.TypeFor[market.HostedFees](),
	"PnlDelta":          reflect.TypeFor[market.PnlDelta](),
	"UserPnl":           reflect.TypeFor[market.UserPnl](),
	"Portfolio":         reflect.TypeFor[Portfolio](),
	"PortfolioChain":    reflect.TypeFor[PortfolioChain](),
	"ChainBlock":        reflect.TypeFor[ChainBlock](),
	"PortfolioMarket":   reflect.TypeFor[service.PortfolioMarket](),
	"PortfolioOption":   reflect.TypeFor[service.PortfolioOption](),
	"PortfolioTotals":   reflect.TypeFor[service.PortfolioTotals](),
	"HostedOptionsPool": reflect.TypeFor[market.HostedOptionsPool](),
	"HostedDelegator":   reflect.TypeFor[trade.HostedDelegator](),
	"HostedTx":          reflect.TypeFor[trade.HostedTx](),
}

// handWritten are the schemas of answers the gateway builds as maps
// (gateway/health.go); their parts that are Go types refer to generated
// schemas.
var handWritten = []string{"Health", "Readiness"}

// TestOpenAPISchemasAreGenerated regenerates the document's schemas from
// the Go types and fails when the committed document differs. The words
// (descriptions, patterns, enums, examples, bounds) are the document's own
// and kept; the shape is the types'. Refresh with:
//
//	go test ./gateway -run OpenAPISchemas -update
func TestOpenAPISchemasAreGenerated(t *testing.T) {
	const path = "docs/openapi.json"
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := generateOpenAPI(committed)
	if err != nil {
		t.Fatal(err)
	}
	if *updateOpenAPI {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, committed) {
		t.Errorf("%s is stale: its schemas differ from the Go types they are generated from; run go test ./gateway -run OpenAPISchemas -update and review the diff", path)
	}
}

// generateOpenAPI is doc with every generated schema derived afresh.
func generateOpenAPI(doc []byte) ([]byte, error) {
	var d map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return nil, err
	}
	comps, _ := d["components"].(map[string]any)
	if comps == nil {
		comps = map[string]any{}
		d["components"] = comps
	}
	schemas, _ := comps["schemas"].(map[string]any)
	if schemas == nil {
		schemas = map[string]any{}
		comps["schemas"] = schemas
	}
	g := schemaGen{names: map[reflect.Type]string{}, docs: maps.Clone(schemas)}
	for name, typ := range schemaTypes {
		g.names[typ] = name
	}
	for name := range schemas {
		if _, ok := schemaTypes[name]; !ok && !slices.Contains(handWritten, name) {
			delete(schemas, name) // a schema no type stands behind any more
		}
	}
	for name, typ := range schemaTypes {
		old, _ := schemas[name].(map[string]any)
		schemas[name] = g.top(typ, old)
	}
	markStreams(d)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// markStreams states on each operation whether it is streamed
// (`x-stream`, from the endpoint table's stream column), and says of a
// streamed one what OpenAPI can: its 200 may be `text/event-stream` (a
// string: the events' framing is SSE's, their data the JSON answer) and it
// takes `Last-Event-ID`. The WebSocket endpoint is an operation whose
// answer is 101, its messages the schemas StreamRequest and
// StreamMessage: OpenAPI has no word for what crosses a socket.
func markStreams(d map[string]any) {
	paths, _ := d["paths"].(map[string]any)
	for _, e := range apiEndpoints {
		item, _ := paths[e.path].(map[string]any)
		if op, _ := item["get"].(map[string]any); op != nil {
			op["x-stream"] = e.stream == streams
			if e.stream == streams {
				streamedGet(op)
			}
		}
	}
	paths[PathStream] = map[string]any{"get": map[string]any{
		"operationId": "streamSocket",
		"summary":     "Many streams on one WebSocket (with CLAMM_STREAMS on)",
		"description": "A WebSocket (RFC 6455) carrying many subscriptions to the streamed reads (`x-stream: true`). The client sends StreamRequest messages (JSON text): subscribe names a route's path and its query parameters as strings, unsubscribe its id. The gateway sends StreamMessage messages: `subscribed` and `unsubscribed`, then `answer`, `reorg` and `error` events of each subscription, as its Server-Sent Events would carry them (`event`: the block as `<number>:<hash>`; `data`: the answer). A subscription refused (its parameters, a limit) is an `error` message with the error shape; the socket stays open. docs/api.md, Streams.",
		"x-stream":    true,
		"responses": map[string]any{
			"101": map[string]any{"description": "Switching Protocols: the WebSocket. Messages in: StreamRequest; out: StreamMessage."},
			"400": errorResponse("Not a WebSocket upgrade (INVALID_PARAMETER)."),
			"404": errorResponse("Streams are off (CLAMM_STREAMS): no such route."),
		},
	}}
}

// streamedGet adds to a streamed GET its event-stream answer and the
// Last-Event-ID it resumes from.
func streamedGet(op map[string]any) {
	ok, _ := op["responses"].(map[string]any)["200"].(map[string]any)
	if content, _ := ok["content"].(map[string]any); content != nil {
		content["text/event-stream"] = map[string]any{"schema": map[string]any{
			"type":        "string",
			"description": "Asked with `Accept: text/event-stream` (CLAMM_STREAMS on): Server-Sent Events, one `event: answer` per block that changes the answer (`id: <number>:<hash>`; `data:` the JSON answer as this operation's `application/json` at `block=<number>`), `event: reorg` before a new branch's answers, `event: error` when a block's answer fails, a `: heartbeat` comment in silences. docs/api.md, Streams.",
		}}
	}
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		if m, _ := p.(map[string]any); m["name"] == "Last-Event-ID" {
			return
		}
	}
	op["parameters"] = append(params, map[string]any{
		"name": "Last-Event-ID", "in": "header", "required": false,
		"description": "A stream's reconnect: the id of the last event it holds (`<number>:<hash>`); it is sent what changed after that block, or the answer at the head when that block left the chain or is over 256 blocks behind.",
		"schema":      map[string]any{"type": "string", "pattern": "^[0-9]+:0x[0-9a-f]{64}$"},
	})
}

// errorResponse is a response of the error shape.
func errorResponse(desc string) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{
		"application/json": map[string]any{"schema": map[string]any{"$ref": refPrefix + "Error"}},
	}}
}

// schemaGen derives OpenAPI 3.0 schemas from Go types as encoding/json
// marshals them.
type schemaGen struct {
	names map[reflect.Type]string // types with a schema of their own
	docs  map[string]any          // the document's schemas before this run: their words
}

// The keywords a schema's author writes; every other keyword is derived.
var (
	proseKeys  = []string{"description", "pattern", "enum", "example", "minimum", "maximum", "format", "minLength", "maxLength", "minItems", "maxItems", "title", "deprecated", "default", "minProperties", "maxProperties"}
	jsonMarsh  = reflect.TypeFor[json.Marshaler]()
	textMarsh  = reflect.TypeFor[encoding.TextMarshaler]()
	refPrefix  = "#/components/schemas/"
	envelopeAs = "asOf" // added by the gateway in front of an object answer
)

func prose(old map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range proseKeys {
		if v, ok := old[k]; ok {
			out[k] = v
		}
	}
	return out
}

// top is the named schema of typ: its own shape, not a reference to itself.
func (g schemaGen) top(typ reflect.Type, old map[string]any) map[string]any {
	if typ == reflect.TypeFor[errorBody]() {
		s := g.object(typ, old)
		errorCodes(s)
		return s
	}
	return g.shape(typ, old, false)
}

// errorCodes lists the catalogue's codes as the enum of the error's code.
func errorCodes(s map[string]any) {
	detail, _ := s["properties"].(map[string]any)["error"].(map[string]any)
	code, _ := detail["properties"].(map[string]any)["code"].(map[string]any)
	var codes []any
	for _, c := range problem.Catalogue() {
		codes = append(codes, c.Name())
	}
	code["enum"] = codes
}

// prop is the schema of a value of typ: a reference where typ has a
// schema of its own.
func (g schemaGen) prop(typ reflect.Type, old map[string]any, nullable bool) map[string]any {
	if typ.Kind() == reflect.Pointer {
		// nil marshals as null, unless omitempty leaves the field out,
		// where the document says what it means
		return g.prop(typ.Elem(), old, nullable || old["nullable"] == true || nullAlternative(old))
	}
	if name, ok := g.names[typ]; ok {
		ref := map[string]any{"$ref": refPrefix + name}
		s := prose(old)
		if len(s) == 0 && !nullable {
			return ref // a $ref's siblings are ignored in OpenAPI 3.0
		}
		if !nullable {
			s["allOf"] = []any{ref}
			return s
		}
		// OpenAPI 3.0.3's nullable widens only a type stated beside it:
		// {allOf: [ref], nullable: true} still holds null to the
		// referenced object, and strict validators refuse it. Null is
		// one of two shapes instead, the second accepting null alone.
		s["oneOf"] = []any{ref, onlyNull()}
		return s
	}
	s := g.shape(typ, old, nullable)
	return s
}

// shape is typ's own schema, its words taken from old.
func (g schemaGen) shape(typ reflect.Type, old map[string]any, nullable bool) map[string]any {
	if old == nil {
		old = map[string]any{}
	}
	if typ.Kind() == reflect.Pointer {
		return g.shape(typ.Elem(), old, nullable)
	}
	var s map[string]any
	switch {
	case typ == reflect.TypeFor[json.Number]():
		s = prose(old) // a decimal written as a JSON number
		s["type"] = "number"
	case typ.Implements(jsonMarsh) || reflect.PointerTo(typ).Implements(jsonMarsh),
		typ.Kind() == reflect.Interface:
		return old // marshals itself: its schema is written by hand
	case typ.Implements(textMarsh) || reflect.PointerTo(typ).Implements(textMarsh):
		s = prose(old)
		s["type"] = "string"
	case typ.Kind() == reflect.Struct:
		s = g.object(typ, old)
	case typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array:
		s = prose(old)
		s["type"] = "array"
		items, _ := old["items"].(map[string]any)
		s["items"] = g.prop(typ.Elem(), items, false)
	case typ.Kind() == reflect.Map:
		s = prose(old)
		s["type"] = "object"
		vals, _ := old["additionalProperties"].(map[string]any)
		s["additionalProperties"] = g.prop(typ.Elem(), vals, false)
	default:
		s = prose(old)
		s["type"] = scalar(typ.Kind())
	}
	if nullable {
		s["nullable"] = true
		// an enum is the whole set of values: null among them too
		if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
			s["enum"] = append(slices.Clone(enum), nil)
		}
	}
	return s
}

// onlyNull is the schema that accepts null and nothing else in OpenAPI
// 3.0 (which has no null type): a nullable type whose only value is null.
func onlyNull() map[string]any {
	return map[string]any{"type": "object", "nullable": true, "enum": []any{nil}}
}

// nullAlternative says whether old is a reference made nullable by a
// onlyNull alternative (what prop writes): the document's word for an
// omitempty pointer field, as nullable is for the others.
func nullAlternative(old map[string]any) bool {
	alts, _ := old["oneOf"].([]any)
	return len(alts) == 2 && reflect.DeepEqual(alts[1], onlyNull())
}

func scalar(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		return "string"
	}
}

// object is a struct's schema: its JSON fields as encoding/json sees them,
// required unless omitempty. An embedded struct's fields are promoted, as
// encoding/json promotes them; where the document joins an embedded type
// that has a schema of its own with allOf, the join is kept.
func (g schemaGen) object(typ reflect.Type, old map[string]any) map[string]any {
	own, parts := old, []any(nil)
	if ps, ok := old["allOf"].([]any); ok {
		parts = ps
		for _, p := range ps {
			if m, ok := p.(map[string]any); ok && m["$ref"] == nil {
				own = m
			}
		}
	}
	oldProps, _ := own["properties"].(map[string]any)
	props, required := map[string]any{}, []any{}
	embedded := ""
	var walk func(t reflect.Type, words map[string]any)
	walk = func(t reflect.Type, words map[string]any) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" || !f.IsExported() && !f.Anonymous {
				continue
			}
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				n, named := g.names[f.Type]
				if named && parts != nil {
					embedded = n
					continue
				}
				inner, _ := g.docs[n].(map[string]any)
				innerProps, _ := inner["properties"].(map[string]any)
				walk(f.Type, innerProps)
				continue
			}
			if name == "" {
				name = f.Name
			}
			po, ok := oldProps[name].(map[string]any)
			if !ok {
				po, _ = words[name].(map[string]any)
			}
			p := g.prop(f.Type, po, f.Type.Kind() == reflect.Pointer && !strings.Contains(opts, "omitempty"))
			if strings.Contains(opts, "string") {
				p["type"] = "string"
			}
			props[name] = p
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
				required = append(required, name)
			}
		}
	}
	walk(typ, nil)
	if p, ok := oldProps[envelopeAs]; ok {
		props[envelopeAs] = p
		if req, _ := own["required"].([]any); slices.Contains(req, any(envelopeAs)) {
			required = append([]any{envelopeAs}, required...)
		}
	}
	s := prose(own)
	s["type"] = "object"
	s["properties"] = props
	if len(required) > 0 {
		s["required"] = required
	}
	if ap, ok := own["additionalProperties"].(bool); ok {
		s["additionalProperties"] = ap
	}
	if embedded == "" {
		return s
	}
	out := prose(old)
	joined := make([]any, len(parts))
	for i, p := range parts {
		if m, _ := p.(map[string]any); m["$ref"] != nil {
			joined[i] = map[string]any{"$ref": refPrefix + embedded}
		} else {
			joined[i] = s
		}
	}
	out["allOf"] = joined
	return out
}

// The generated document names only schemas that exist.
func TestOpenAPIRefsResolve(t *testing.T) {
	var d any
	if err := json.Unmarshal(OpenAPI(), &d); err != nil {
		t.Fatal(err)
	}
	schemas := d.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)
	var missing []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if _, ok := schemas[strings.TrimPrefix(ref, refPrefix)]; !ok {
					missing = append(missing, ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(d)
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("references to no schema: %v", missing)
	}
}

// Strict OpenAPI 3.0.3 validators read nullable as widening only a type
// stated beside it, and an enum as the whole set of values: a nullable
// schema without a type (a nullable allOf of a reference) or with an enum
// that lacks null refused real answers' nulls. The committed document has
// neither.
func TestOpenAPINullsAreStrict(t *testing.T) {
	raw, err := os.ReadFile("docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			if x["nullable"] == true {
				if _, typed := x["type"]; !typed {
					t.Errorf("%s: nullable without a type (strict validators refuse its nulls)", path)
				}
				if enum, ok := x["enum"].([]any); ok && !slices.Contains(enum, nil) {
					t.Errorf("%s: a nullable enum without null", path)
				}
			}
			for k, e := range x {
				walk(e, path+"/"+k)
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s/%d", path, i))
			}
		}
	}
	walk(doc, "#")
}
