// Package graphnode emulates Graph Node's query side in process: it derives
// the GraphQL query schema Graph Node derives from a subgraph's
// schema.graphql (single and collection fields, `<Entity>_filter` inputs
// with Graph Node's suffixes, `<Entity>_orderBy` enums, `Block_height`,
// `_meta`, derived fields), validates each query against it with gqlparser,
// and executes it over a versioned entity store (one version per block, so
// `block: {number: N}` reads the state as of N), answering errors the way
// Graph Node does: an HTTP 200 with `errors` and Graph Node's message text.
//
// It is production code because the embedded demo serves its recorded
// subgraph data through it; the tests and the indexing pipeline use the same
// emulator, so the demo and the tests cannot disagree on Graph Node's
// semantics, and a query document Graph Node would refuse fails in CI.
package graphnode

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// Schema is a subgraph's input schema and the query schema derived from it.
type Schema struct {
	// API is the derived query schema, loaded by gqlparser.
	API *ast.Schema
	// SDL is the derived query schema as GraphQL text.
	SDL   string
	Types map[string]*EntityType
	Enums map[string][]string

	// Limits bound each query's cost before it runs (DefaultLimits unless
	// set otherwise).
	Limits Limits

	roots map[string]rootField // Query field name -> entity and kind
}

// EntityType is one `@entity` type of the input schema.
type EntityType struct {
	Name      string
	Immutable bool
	Fields    []*Field
	byName    map[string]*Field
	// Single and Collection are its Query fields (`market`, `markets`).
	Single, Collection string
}

// Field returns the named field or nil.
func (t *EntityType) Field(name string) *Field { return t.byName[name] }

// Field is one field of an entity type.
type Field struct {
	Name string
	// Base is the named type: a scalar (ID, String, Bytes, BigInt,
	// BigDecimal, Int, Int8, Timestamp, Boolean), an enum or an entity.
	Base    string
	List    bool
	NonNull bool
	// Entity: Base is an entity type (the stored value is its id).
	Entity bool
	// Enum: Base is an enum.
	Enum bool
	// DerivedFrom names the field of Base that points back here; a
	// derived field is never stored.
	DerivedFrom string

	index int // in its type's Fields: how a stored entity names it
}

type rootField struct {
	typ        *EntityType
	collection bool
}

// scalarSuffixes are the `where` suffixes Graph Node derives per scalar
// (graph-node graph/src/schema/api.rs, field_scalar_filter_input_values).
var scalarSuffixes = map[string][]string{
	"BigInt":     {"", "not", "gt", "lt", "gte", "lte", "in", "not_in"},
	"BigDecimal": {"", "not", "gt", "lt", "gte", "lte", "in", "not_in"},
	"ID":         {"", "not", "gt", "lt", "gte", "lte", "in", "not_in"},
	"Int":        {"", "not", "gt", "lt", "gte", "lte", "in", "not_in"},
	"Int8":       {"", "not", "gt", "lt", "gte", "lte", "in", "not_in"},
	"Timestamp":  {"", "not", "gt", "lt", "gte", "lte", "in", "not_in"},
	"Boolean":    {"", "not", "in", "not_in"},
	"Bytes":      {"", "not", "gt", "lt", "gte", "lte", "in", "not_in", "contains", "not_contains"},
	"String": {"", "not", "gt", "lt", "gte", "lte", "in", "not_in",
		"contains", "contains_nocase", "not_contains", "not_contains_nocase",
		"starts_with", "starts_with_nocase", "not_starts_with", "not_starts_with_nocase",
		"ends_with", "ends_with_nocase", "not_ends_with", "not_ends_with_nocase"},
}

// enumSuffixes and listSuffixes are those of enum and (non-derived) list
// fields; a list of Strings or of entities (whose ids are strings) also
// has the `_nocase` variants (graph-node's field_list_supports_nocase).
var (
	enumSuffixes       = []string{"", "not", "in", "not_in"}
	listSuffixes       = []string{"", "not", "contains", "not_contains"}
	listNocaseSuffixes = []string{"", "not", "contains", "contains_nocase", "not_contains", "not_contains_nocase"}
)

// metaSDL declares what Graph Node adds to every subgraph's query schema:
// its scalars, `_meta` and its types, the block and error-policy arguments'
// types and OrderDirection.
const metaSDL = `
scalar BigDecimal
scalar BigInt
scalar Bytes
scalar Int8
scalar Timestamp
type _Meta_ { block: _Block_! deployment: String! hasIndexingErrors: Boolean! }
type _Block_ { hash: Bytes number: Int! timestamp: Int parentHash: Bytes }
input BlockChangedFilter { number_gte: Int! }
input Block_height { hash: Bytes number: Int number_gte: Int }
enum _SubgraphErrorPolicy_ { allow deny }
enum OrderDirection { asc desc }
`

// ParseSchema reads a subgraph's schema.graphql and derives Graph Node's
// query schema from it.
func ParseSchema(input string) (*Schema, error) {
	doc, err := parser.ParseSchema(&ast.Source{Name: "schema.graphql", Input: input})
	if err != nil {
		return nil, fmt.Errorf("schema.graphql: %w", err)
	}
	s := &Schema{Types: map[string]*EntityType{}, Enums: map[string][]string{}, roots: map[string]rootField{}, Limits: DefaultLimits}
	for _, d := range doc.Definitions {
		if d.Kind == ast.Enum {
			for _, v := range d.EnumValues {
				s.Enums[d.Name] = append(s.Enums[d.Name], v.Name)
			}
		}
	}
	var order []string
	for _, d := range doc.Definitions {
		if d.Kind != ast.Object {
			continue
		}
		dir := d.Directives.ForName("entity")
		if dir == nil {
			return nil, fmt.Errorf("schema.graphql: type %s lacks @entity", d.Name)
		}
		t := &EntityType{Name: d.Name, byName: map[string]*Field{}}
		if a := dir.Arguments.ForName("immutable"); a != nil && a.Value.Raw == "true" {
			t.Immutable = true
		}
		s.Types[d.Name] = t
		order = append(order, d.Name)
	}
	for _, d := range doc.Definitions {
		if t := s.Types[d.Name]; t != nil && d.Kind == ast.Object {
			if err := s.readFields(t, d); err != nil {
				return nil, err
			}
		}
	}
	s.SDL = s.derive(order)
	api, err := gqlparser.LoadSchema(&ast.Source{Name: "api.graphql", Input: s.SDL})
	if err != nil {
		return nil, fmt.Errorf("derived query schema: %w", err)
	}
	compactAPI(api)
	s.API = api
	return s, nil
}

func (s *Schema) readFields(t *EntityType, d *ast.Definition) error {
	for _, fd := range d.Fields {
		f := &Field{Name: fd.Name, NonNull: fd.Type.NonNull, index: len(t.Fields)}
		typ := fd.Type
		if typ.Elem != nil {
			f.List, typ = true, typ.Elem
		}
		f.Base = typ.NamedType
		_, f.Entity = s.Types[f.Base]
		_, f.Enum = s.Enums[f.Base]
		if _, scalar := scalarSuffixes[f.Base]; !scalar && !f.Entity && !f.Enum {
			return fmt.Errorf("schema.graphql: %s.%s has unknown type %s", t.Name, f.Name, f.Base)
		}
		if dir := fd.Directives.ForName("derivedFrom"); dir != nil {
			a := dir.Arguments.ForName("field")
			if a == nil || !f.Entity {
				return fmt.Errorf("schema.graphql: %s.%s: @derivedFrom needs an entity type and a field", t.Name, f.Name)
			}
			f.DerivedFrom = a.Value.Raw
		}
		t.Fields = append(t.Fields, f)
		t.byName[f.Name] = f
	}
	if id := t.byName["id"]; id == nil || (id.Base != "ID" && id.Base != "String" && id.Base != "Bytes") {
		return fmt.Errorf("schema.graphql: %s needs an id of type ID, String or Bytes", t.Name)
	}
	return nil
}

// derive writes the query schema: per entity its object type (list fields
// of entities take collection arguments), its _orderBy enum and _filter
// input, and the Query fields.
func (s *Schema) derive(order []string) string {
	var b strings.Builder
	b.WriteString(metaSDL)
	enums := make([]string, 0, len(s.Enums))
	for name := range s.Enums {
		enums = append(enums, name)
	}
	sort.Strings(enums)
	for _, name := range enums {
		fmt.Fprintf(&b, "enum %s { %s }\n", name, strings.Join(s.Enums[name], " "))
	}
	var query []string
	for _, name := range order {
		t := s.Types[name]
		s.writeObject(&b, t)
		s.writeOrderBy(&b, t)
		s.writeFilter(&b, t)
		t.Single, t.Collection = lowerFirst(name), lowerFirst(plural(name))
		if t.Collection == t.Single {
			// Graph Node: a type whose plural is its singular gets a
			// `_collection` query field.
			t.Collection += "_collection"
		}
		s.roots[t.Single] = rootField{typ: t}
		s.roots[t.Collection] = rootField{typ: t, collection: true}
		query = append(query,
			fmt.Sprintf("  %s(id: ID!, block: Block_height, subgraphError: _SubgraphErrorPolicy_! = deny): %s", t.Single, name),
			fmt.Sprintf("  %s(%s, block: Block_height, subgraphError: _SubgraphErrorPolicy_! = deny): [%s!]!", t.Collection, collectionArgs(name), name))
	}
	query = append(query, "  _meta(block: Block_height): _Meta_")
	fmt.Fprintf(&b, "type Query {\n%s\n}\n", strings.Join(query, "\n"))
	return b.String()
}

func collectionArgs(typ string) string {
	return fmt.Sprintf("skip: Int = 0, first: Int = 100, orderBy: %s_orderBy, orderDirection: OrderDirection, where: %s_filter", typ, typ)
}

func (s *Schema) writeObject(b *strings.Builder, t *EntityType) {
	fmt.Fprintf(b, "type %s {\n", t.Name)
	for _, f := range t.Fields {
		typ := f.Base
		args := ""
		if f.List {
			typ = "[" + typ + "!]"
			if f.Entity {
				args = "(" + collectionArgs(f.Base) + ")"
			}
		}
		if f.NonNull {
			typ += "!"
		}
		fmt.Fprintf(b, "  %s%s: %s\n", f.Name, args, typ)
	}
	b.WriteString("}\n")
}

// writeOrderBy: every field, and for a field of one entity (stored or
// derived) that entity's scalar fields as `field__child`.
func (s *Schema) writeOrderBy(b *strings.Builder, t *EntityType) {
	var values []string
	for _, f := range t.Fields {
		values = append(values, f.Name)
		if f.Entity && !f.List {
			for _, c := range s.Types[f.Base].Fields {
				if !c.List && !c.Entity {
					values = append(values, f.Name+"__"+c.Name)
				}
			}
		}
	}
	fmt.Fprintf(b, "enum %s_orderBy { %s }\n", t.Name, strings.Join(values, " "))
}

// writeFilter: per field the suffixes of its type; a reference filters by
// id (String suffixes) unless derived, and gets a nested `field_` filter.
func (s *Schema) writeFilter(b *strings.Builder, t *EntityType) {
	fmt.Fprintf(b, "input %s_filter {\n", t.Name)
	for _, f := range t.Fields {
		for _, in := range filterInputs(f) {
			fmt.Fprintf(b, "  %s: %s\n", in[0], in[1])
		}
	}
	fmt.Fprintf(b, "  _change_block: BlockChangedFilter\n  and: [%s_filter]\n  or: [%s_filter]\n}\n", t.Name, t.Name)
}

// filterInputs are a field's filter inputs as (name, type).
func filterInputs(f *Field) [][2]string {
	var out [][2]string
	add := func(suffixes []string, typ string, list bool) {
		for _, sfx := range suffixes {
			name, vt := f.Name, typ
			if sfx != "" {
				name += "_" + sfx
			}
			if list || sfx == "in" || sfx == "not_in" {
				vt = "[" + typ + "!]"
			}
			out = append(out, [2]string{name, vt})
		}
	}
	switch {
	case f.List && f.DerivedFrom == "":
		typ, sfx := f.Base, listSuffixes
		if f.Entity {
			typ = "String"
		}
		if typ == "String" {
			sfx = listNocaseSuffixes
		}
		add(sfx, typ, true)
	case f.List:
	case f.Entity && f.DerivedFrom == "":
		add(scalarSuffixes["String"], "String", false)
	case f.Entity:
	case f.Enum:
		add(enumSuffixes, f.Base, false)
	default:
		add(scalarSuffixes[f.Base], f.Base, false)
	}
	if f.Entity {
		out = append(out, [2]string{f.Name + "_", f.Base + "_filter"})
	}
	return out
}

// plural is Graph Node's pluralisation of a type name (the Inflector
// crate's rules, as far as entity names need them: `MarketDayData`
// becomes `MarketDayDatas`, as Uniswap's `tokenDayDatas`).
func plural(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "ss"), strings.HasSuffix(lower, "sh"):
		return name + "es"
	case strings.HasSuffix(lower, "s"):
		return name
	case len(lower) > 1 && strings.HasSuffix(lower, "y") && !strings.ContainsRune("aeiou", rune(lower[len(lower)-2])):
		return name[:len(name)-1] + "ies"
	}
	return name + "s"
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// TypeNames lists the entity types, sorted.
func (s *Schema) TypeNames() []string {
	names := make([]string, 0, len(s.Types))
	for n := range s.Types {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
