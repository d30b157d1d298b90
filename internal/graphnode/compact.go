package graphnode

import (
	"github.com/vektah/gqlparser/v2/ast"
)

// compactAPI rewrites a loaded query schema in place so that it holds a
// few hundred objects rather than about 15,000, with the same meaning.
//
// Why: a gateway keeps each subgraph's query schema for its whole life,
// and every garbage collection marks all of it. gqlparser allocates each
// field, argument, enum value, type reference and source position on its
// own, and Graph Node's derived schema is large (a `_filter` input of up
// to ~20 inputs per entity field): the demo's was the largest holder of
// objects in the served binary, and under a hit-only load each mark phase
// slows the hits beside it (the hit path's p99, BENCHMARKS.md).
//
// What changes is only how the values are laid out: the field, argument
// and enum value definitions are copied into one array each (the lists
// point into them), equal type references are one value, and the schema's
// own source positions, which nothing reads once the schema is loaded
// (query errors point into the query, never into the schema), are one
// shared position. Definitions keep their identity (Query, PossibleTypes
// and the query documents' annotations point at the same ones).
func compactAPI(api *ast.Schema) {
	c := &compactor{types: map[string]*ast.Type{}, values: map[valueKey]*ast.Value{}, pos: &ast.Position{}}
	nf, na, ne := c.count(api)
	c.fields = make([]ast.FieldDefinition, 0, nf)
	c.args = make([]ast.ArgumentDefinition, 0, na)
	c.enums = make([]ast.EnumValueDefinition, 0, ne)
	for _, d := range api.Types {
		d.Position, d.TypePositions = c.pos, nil
		c.directives(d.Directives)
		for i, f := range d.Fields {
			d.Fields[i] = c.field(f)
		}
		for i, e := range d.EnumValues {
			c.enums = append(c.enums, *e)
			n := &c.enums[len(c.enums)-1]
			n.Position = c.pos
			c.directives(n.Directives)
			d.EnumValues[i] = n
		}
	}
	for _, dd := range api.Directives {
		dd.Position = c.pos
		c.arguments(dd.Arguments)
	}
}

// compactor holds compactAPI's arrays (filled up to the capacity count
// gave, so pointers into them stay valid) and its interned values.
type compactor struct {
	fields []ast.FieldDefinition
	args   []ast.ArgumentDefinition
	enums  []ast.EnumValueDefinition
	types  map[string]*ast.Type
	values map[valueKey]*ast.Value
	pos    *ast.Position
}

// count is how many fields, arguments and enum values the schema has.
func (c *compactor) count(api *ast.Schema) (fields, args, enums int) {
	for _, d := range api.Types {
		fields += len(d.Fields)
		enums += len(d.EnumValues)
		for _, f := range d.Fields {
			args += len(f.Arguments)
		}
	}
	for _, dd := range api.Directives {
		args += len(dd.Arguments)
	}
	return fields, args, enums
}

func (c *compactor) field(f *ast.FieldDefinition) *ast.FieldDefinition {
	c.fields = append(c.fields, *f)
	n := &c.fields[len(c.fields)-1]
	n.Position, n.Type, n.DefaultValue = c.pos, c.typ(f.Type), c.value(f.DefaultValue)
	c.directives(n.Directives)
	c.arguments(n.Arguments)
	return n
}

func (c *compactor) arguments(list ast.ArgumentDefinitionList) {
	for i, a := range list {
		c.args = append(c.args, *a)
		n := &c.args[len(c.args)-1]
		n.Position, n.Type, n.DefaultValue = c.pos, c.typ(a.Type), c.value(a.DefaultValue)
		c.directives(n.Directives)
		list[i] = n
	}
}

func (c *compactor) directives(list ast.DirectiveList) {
	for _, d := range list {
		d.Position = c.pos
	}
}

// typ is t's one shared value: a type reference is never written once
// the schema is loaded, and equal ones mean the same.
func (c *compactor) typ(t *ast.Type) *ast.Type {
	if t == nil {
		return nil
	}
	key := t.String()
	if s, ok := c.types[key]; ok {
		return s
	}
	s := &ast.Type{NamedType: t.NamedType, NonNull: t.NonNull, Elem: c.typ(t.Elem), Position: c.pos}
	c.types[key] = s
	return s
}

type valueKey struct {
	kind ast.ValueKind
	raw  string
}

// value shares a default value that is a plain literal (`0`, `100`,
// `deny`); one with children keeps its own.
func (c *compactor) value(v *ast.Value) *ast.Value {
	if v == nil || len(v.Children) > 0 || v.Definition != nil || v.ExpectedType != nil {
		return v
	}
	key := valueKey{v.Kind, v.Raw}
	if s, ok := c.values[key]; ok {
		return s
	}
	s := &ast.Value{Raw: v.Raw, Kind: v.Kind, Position: c.pos}
	c.values[key] = s
	return s
}
