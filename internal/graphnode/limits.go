package graphnode

import (
	"fmt"
	"math"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Limits bound what one query may cost, checked on the validated document
// before anything is read, as Graph Node checks its own
// (GRAPH_GRAPHQL_MAX_COMPLEXITY, GRAPH_GRAPHQL_MAX_DEPTH, and `first` and
// `skip`, which the executor bounds). A document is text a client wrote: a
// few KiB of fragments that spread each other twice expand to millions of
// fields, and a hundred aliases of one collection read a hundred pages.
// Every count is of the document as executed: each fragment spread counted
// as its whole fragment (with memoised counts, so that counting a fragment
// bomb costs its text, not its expansion). A zero field is no bound. How
// many queries run at once is the query API's bound, not a document's:
// Server.MaxQueries (CLAMM_INDEX_MAX_QUERIES).
type Limits struct {
	// MaxComplexity bounds the entities a query may return, counted as
	// Graph Node counts them: a collection field weighs first × (1 + the
	// complexity of its selection), `first` 100 when not given; a single
	// entity field weighs its selection's; a scalar field nothing.
	MaxComplexity uint64
	// MaxDepth bounds the nesting of selections, fragments counted as a
	// level as Graph Node counts them (its default: 255).
	MaxDepth int
	// MaxFields bounds the field selections of the document once its
	// fragments are expanded: the executor's work on fields that read no
	// collection (`_meta`, single entities) and the validation of how
	// fields merge are both proportional to it.
	MaxFields uint64
	// MaxAliases bounds the aliased fields (an alias other than the
	// field's name), counted expanded: each is one more read.
	MaxAliases uint64
	// MaxRepeats bounds how often one response name is selected in one
	// selection set (its fields merge into one; a client repeating a field
	// thousands of times only makes work).
	MaxRepeats uint64
}

// DefaultLimits are the query API's bounds. MaxComplexity admits the
// gateway's own documents at their largest pages (other replicas read the
// index through this API; TestGatewayDocumentsWithinLimits): settlement
// history's 1,000 settlements of up to 100 legs each count 101,000, as
// Graph Node counts them. Collections nested in collections multiply past
// it; MaxAliases bounds the other way a document multiplies its reads
// (100 aliased pages of 1,000 LP deposits took the heap past the soft
// limit: attack 5, S3), MaxFields and MaxRepeats the fragments and
// repetitions that make work without reading anything.
var DefaultLimits = Limits{
	MaxComplexity: 110_000,
	MaxDepth:      255,
	MaxFields:     5_000,
	MaxAliases:    32,
	MaxRepeats:    100,
}

// cost is what a selection set (or a fragment) adds to a query.
type cost struct {
	complexity, fields, aliases uint64
	// depth is how many selection levels lie below, counted as Graph Node
	// counts them (a field with a selection, a fragment: one level each).
	depth int
	// repeats is the most selections of one response name in one
	// selection set of the subtree; names are this set's own response
	// names with their counts (fragments spread here included).
	repeats  uint64
	repeated string
	names    map[string]uint64
}

// satAdd and satMul saturate at the largest uint64: a fragment bomb's
// counts overflow, and past the bound the exact number does not matter.
func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// add folds a sibling's cost into c (one selection set).
func (c *cost) add(o cost) {
	c.complexity = satAdd(c.complexity, o.complexity)
	c.fields = satAdd(c.fields, o.fields)
	c.aliases = satAdd(c.aliases, o.aliases)
	c.depth = max(c.depth, o.depth)
	if o.repeats > c.repeats {
		c.repeats, c.repeated = o.repeats, o.repeated
	}
}

// coster measures one operation; fragments are measured once each.
// budget bounds the measuring itself: each field visited and each
// response name carried up from a fragment spends one, and once it is
// spent the query is past MaxFields (a fragment of many names spread in
// many places would otherwise cost their product to count).
type coster struct {
	vars   map[string]any
	doc    *ast.QueryDocument
	frags  map[string]*cost
	budget uint64
	over   bool
}

// spend reports whether n more steps of measuring are within the budget.
func (k *coster) spend(n uint64) bool {
	if k.budget == 0 || k.over {
		return !k.over
	}
	if n >= k.budget {
		k.over = true
		return false
	}
	k.budget -= n
	return true
}

// set measures a selection set: its fields and, at the same level, the
// fields of the fragments it spreads.
func (k *coster) set(set ast.SelectionSet) cost {
	c := cost{names: map[string]uint64{}}
	for _, sel := range set {
		if !k.spend(1) {
			return c
		}
		switch sel := sel.(type) {
		case *ast.Field:
			c.names[sel.Alias] = satAdd(c.names[sel.Alias], 1)
			c.add(k.field(sel))
		case *ast.InlineFragment:
			in := k.set(sel.SelectionSet)
			k.spread(&c, in)
		case *ast.FragmentSpread:
			if in := k.fragment(sel.Name); in != nil {
				k.spread(&c, *in)
			}
		}
	}
	for name, n := range c.names {
		if n > c.repeats || (n == c.repeats && name < c.repeated) {
			c.repeats, c.repeated = n, name
		}
	}
	return c
}

// spread folds a fragment's cost into the set that spreads it: one level
// deeper, its response names the set's own.
func (k *coster) spread(c *cost, in cost) {
	in.depth++
	if !k.spend(uint64(len(in.names))) {
		return
	}
	for name, n := range in.names {
		c.names[name] = satAdd(c.names[name], n)
	}
	c.add(in)
}

// fragment measures a named fragment once; a cycle (refused by validation
// before this runs) measures as nothing.
func (k *coster) fragment(name string) *cost {
	if c, ok := k.frags[name]; ok {
		return c
	}
	k.frags[name] = nil
	fr := k.doc.Fragments.ForName(name)
	if fr == nil {
		return nil
	}
	c := k.set(fr.SelectionSet)
	k.frags[name] = &c
	return &c
}

// field measures one field: 1 field, its alias, and for a field with a
// selection one level more and Graph Node's complexity.
func (k *coster) field(f *ast.Field) cost {
	c := cost{fields: 1}
	if f.Alias != f.Name {
		c.aliases = 1
	}
	if len(f.SelectionSet) == 0 {
		return c
	}
	in := k.set(f.SelectionSet)
	in.names = nil
	in.depth++
	c.add(in)
	c.complexity = in.complexity
	// Introspection reads the schema, whose size is fixed (and its depth
	// bounded by validation): Graph Node counts it as nothing too.
	if strings.HasPrefix(f.Name, "__") {
		c.complexity = 0
	} else if f.Definition != nil && f.Definition.Type.Elem != nil {
		first := k.first(f)
		c.complexity = satAdd(first, satMul(first, in.complexity))
	}
	return c
}

// first is a collection field's `first` with Graph Node's default and
// bound (the executor refuses past the bound with Graph Node's message;
// here an unreadable value counts as the bound, and the executor then
// answers the error).
func (k *coster) first(f *ast.Field) uint64 {
	a := f.Arguments.ForName("first")
	if a == nil {
		return 100
	}
	v, err := a.Value.Value(k.vars)
	if err != nil || v == nil {
		return 100
	}
	n, err := intOf(v)
	if err != nil || n < 0 || n > MaxFirst {
		return MaxFirst
	}
	return uint64(n)
}

// check measures op and refuses it past l, with Graph Node's messages for
// the bounds Graph Node has and the same wording for the others.
func (l Limits) check(doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) *Error {
	k := &coster{vars: vars, doc: doc, frags: map[string]*cost{}, budget: satMul(l.MaxFields, 4)}
	c := k.set(op.SelectionSet)
	switch {
	case k.over || (l.MaxFields > 0 && c.fields > l.MaxFields):
		return &Error{Message: fmt.Sprintf("query selects more than `%d` fields once its fragments are expanded and thereby exceeds the limit", l.MaxFields)}
	case l.MaxDepth > 0 && c.depth >= l.MaxDepth:
		return &Error{Message: fmt.Sprintf("query has a depth that exceeds the limit of `%d`", l.MaxDepth)}
	case l.MaxRepeats > 0 && c.repeats > l.MaxRepeats:
		return &Error{Message: fmt.Sprintf("query selects `%s` `%d` times in one selection set and thereby exceeds the limit of `%d`", c.repeated, c.repeats, l.MaxRepeats)}
	case l.MaxAliases > 0 && c.aliases > l.MaxAliases:
		return &Error{Message: fmt.Sprintf("query has `%d` aliased fields or more and thereby exceeds the limit of `%d` aliases", c.aliases, l.MaxAliases)}
	case l.MaxComplexity > 0 && c.complexity > l.MaxComplexity:
		return &Error{Message: fmt.Sprintf("query potentially returns `%d` entities or more and thereby exceeds the limit of `%d` entities. "+
			"Possible solutions are reducing the depth of the query, querying fewer relationships or using `first` to return smaller collections", c.complexity, l.MaxComplexity)}
	}
	return nil
}
