package graphnode

import (
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// The GraphQL rule "overlapping fields can be merged" (fields of one
// response name must be one field with one set of arguments, returning
// one shape), checked in time linear in the expanded document. gqlparser's
// rule (graphql-js's algorithm) compares every pair of fields of one name,
// which a client turns into seconds of CPU by repeating a field a few
// thousand times (attack 5, S3: 4,000 repeats, 10 s of validation). Here
// each field is compared with the first of its name for its parent type
// only: "same name and same arguments" is an equivalence, so the first
// stands for the others, and the fields' selections are then checked as
// one merged set. It runs after Limits, which bound the expansion.

// scoped is a field with the type its selection set is on.
type scoped struct {
	f      *ast.Field
	parent *ast.Definition
}

// merger checks one operation.
type merger struct {
	s   *ast.Schema
	doc *ast.QueryDocument
}

// fieldsOf expands sets (each on its own type) into their fields, fragments
// spread in place.
func (m *merger) fieldsOf(sets []ast.SelectionSet, parents []*ast.Definition) []scoped {
	var out []scoped
	var walk func(set ast.SelectionSet, parent *ast.Definition, seen map[string]bool)
	walk = func(set ast.SelectionSet, parent *ast.Definition, seen map[string]bool) {
		for _, sel := range set {
			switch sel := sel.(type) {
			case *ast.Field:
				out = append(out, scoped{sel, parent})
			case *ast.InlineFragment:
				walk(sel.SelectionSet, m.typeOr(sel.TypeCondition, parent), seen)
			case *ast.FragmentSpread:
				fr := m.doc.Fragments.ForName(sel.Name)
				if fr == nil || seen[sel.Name] {
					continue
				}
				seen[sel.Name] = true
				walk(fr.SelectionSet, m.typeOr(fr.TypeCondition, parent), seen)
				delete(seen, sel.Name)
			}
		}
	}
	for i, set := range sets {
		walk(set, parents[i], map[string]bool{})
	}
	return out
}

func (m *merger) typeOr(name string, def *ast.Definition) *ast.Definition {
	if t := m.s.Types[name]; name != "" && t != nil {
		return t
	}
	return def
}

// conflict is why two fields of one response name cannot merge.
type conflict struct {
	name string
	why  string
	at   *ast.Position
}

// check checks the fields of sets as one selection (the fields of one
// response name, merged, one level down), and returns the first conflict.
func (m *merger) check(sets []ast.SelectionSet, parents []*ast.Definition) *conflict {
	fields := m.fieldsOf(sets, parents)
	type group struct {
		first   scoped
		byOwner map[*ast.Definition]scoped
		sets    []ast.SelectionSet
		types   []*ast.Definition
	}
	groups := map[string]*group{}
	var order []string
	for _, sf := range fields {
		g := groups[sf.f.Alias]
		if g == nil {
			g = &group{first: sf, byOwner: map[*ast.Definition]scoped{}}
			groups[sf.f.Alias] = g
			order = append(order, sf.f.Alias)
		}
		if why := m.conflicts(g.first, g.byOwner, sf); why != "" {
			return &conflict{name: sf.f.Alias, why: why, at: sf.f.Position}
		}
		if _, ok := g.byOwner[sf.parent]; !ok {
			g.byOwner[sf.parent] = sf
		}
		if len(sf.f.SelectionSet) > 0 && sf.f.Definition != nil {
			g.sets = append(g.sets, sf.f.SelectionSet)
			g.types = append(g.types, m.s.Types[sf.f.Definition.Type.Name()])
		}
	}
	for _, name := range order {
		g := groups[name]
		if len(g.sets) == 0 {
			continue
		}
		if c := m.check(g.sets, g.types); c != nil {
			return &conflict{name: name, why: fmt.Sprintf("subfields %q conflict because %s", c.name, c.why), at: g.first.f.Position}
		}
	}
	return nil
}

// conflicts says why sf cannot merge with the fields of its response name
// seen so far ("" when it can): with the one of its own parent type (or
// of every parent, when a parent is not an object type: an interface's
// fields meet every implementation's) the name and arguments must agree;
// with the first, the shape of what they return.
func (m *merger) conflicts(first scoped, byOwner map[*ast.Definition]scoped, sf scoped) string {
	for owner, other := range byOwner {
		if owner != sf.parent && isObject(owner) && isObject(sf.parent) {
			continue
		}
		if other.f.Name != sf.f.Name {
			return fmt.Sprintf("%q and %q are different fields", other.f.Name, sf.f.Name)
		}
		if !sameArguments(other.f.Arguments, sf.f.Arguments) {
			return "they have differing arguments"
		}
	}
	if first.f.Definition != nil && sf.f.Definition != nil && m.typesConflict(first.f.Definition.Type, sf.f.Definition.Type) {
		return fmt.Sprintf("they return conflicting types %q and %q", first.f.Definition.Type.String(), sf.f.Definition.Type.String())
	}
	return ""
}

func isObject(d *ast.Definition) bool { return d != nil && d.Kind == ast.Object }

// sameArguments compares two argument lists by name and printed value, as
// graphql-js does.
func sameArguments(a, b ast.ArgumentList) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		y := b.ForName(x.Name)
		if y == nil || x.Value.String() != y.Value.String() {
			return false
		}
	}
	return true
}

// typesConflict: lists and non-null must nest alike, and a scalar or enum
// must be the same type; two composite types leave it to their selections.
func (m *merger) typesConflict(a, b *ast.Type) bool {
	if a.Elem != nil || b.Elem != nil {
		if a.Elem == nil || b.Elem == nil {
			return true
		}
		return a.NonNull != b.NonNull || m.typesConflict(a.Elem, b.Elem)
	}
	if a.NonNull != b.NonNull {
		return true
	}
	da, db := m.s.Types[a.NamedType], m.s.Types[b.NamedType]
	if da == nil || db == nil || da.IsLeafType() || db.IsLeafType() {
		return a.NamedType != b.NamedType
	}
	return false
}

// mergeable checks op's selections; nil when every field can merge.
func (s *Schema) mergeable(doc *ast.QueryDocument, op *ast.OperationDefinition) *Error {
	m := &merger{s: s.API, doc: doc}
	root := s.API.Query
	if c := m.check([]ast.SelectionSet{op.SelectionSet}, []*ast.Definition{root}); c != nil {
		e := &Error{Message: fmt.Sprintf("Fields %q conflict because %s. Use different aliases on the fields to fetch both if this was intentional.", c.name, c.why)}
		if c.at != nil {
			e.Locations = []Location{{Line: c.at.Line, Column: c.at.Column}}
		}
		return e
	}
	return nil
}
