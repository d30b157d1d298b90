package graphnode

import (
	"bytes"
	"sort"
	"strings"
)

// suffixes of filter inputs, longest first so that `_not_in` is not read
// as `_in` of a field named `x_not`.
var suffixes = []string{
	"not_contains_nocase", "not_starts_with_nocase", "not_ends_with_nocase",
	"contains_nocase", "starts_with_nocase", "ends_with_nocase",
	"not_starts_with", "not_ends_with", "not_contains",
	"starts_with", "ends_with", "contains", "not_in", "gte", "lte", "not", "gt", "lt", "in",
}

type cond func(Row) bool

// filter compiles a `where` value (validated against <Type>_filter) into
// a predicate over rows as of block.
func (x *exec) filter(t *EntityType, w map[string]any, block uint64) (cond, error) {
	var conds []cond
	for key, raw := range w {
		c, err := x.filterKey(t, key, raw, block)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	return func(r Row) bool {
		for _, c := range conds {
			if !c(r) {
				return false
			}
		}
		return true
	}, nil
}

func (x *exec) filterKey(t *EntityType, key string, raw any, block uint64) (cond, error) {
	switch key {
	case "and", "or":
		return x.boolFilter(t, key, raw, block)
	case "_change_block":
		m, _ := raw.(map[string]any)
		n, _ := intOf(m["number_gte"])
		return func(r Row) bool { return r.Changed >= uint64(n) }, nil
	}
	if f := t.Field(strings.TrimSuffix(key, "_")); strings.HasSuffix(key, "_") && f != nil && f.Entity {
		return x.childFilter(t, f, raw, block)
	}
	name, op := splitKey(t, key)
	f := t.Field(name)
	if f == nil {
		return nil, errorf("Type `%s` has no field `%s`", t.Name, key)
	}
	return scalarFilter(f, op, raw)
}

func (x *exec) boolFilter(t *EntityType, key string, raw any, block uint64) (cond, error) {
	list, _ := raw.([]any)
	var conds []cond
	for _, el := range list {
		m, ok := el.(map[string]any)
		if !ok {
			return nil, errorf("Filter must by an object")
		}
		c, err := x.filter(t, m, block)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	return func(r Row) bool {
		for _, c := range conds {
			if c(r) == (key == "or") {
				return key == "or"
			}
		}
		return key == "and"
	}, nil
}

// childFilter is `field_: {...}`: the entity the field refers to (any of
// them for a list; for a derived field, any entity referring back)
// matches the nested filter.
func (x *exec) childFilter(t *EntityType, f *Field, raw any, block uint64) (cond, error) {
	target := x.s.Types[f.Base]
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, errorf("Filter must by an object")
	}
	inner, err := x.filter(target, m, block)
	if err != nil {
		return nil, err
	}
	return func(r Row) bool {
		var rows []Row
		if f.DerivedFrom != "" {
			rows = x.derived(target, f.DerivedFrom, r.ID, block)
		} else {
			v := r.Entity[f.Name]
			ids := []Value{v}
			if f.List {
				ids = v.Array
			}
			for _, id := range ids {
				if e := x.at(target.Name, id.Str, block); e != nil {
					rows = append(rows, Row{ID: id.Str, Entity: e})
				}
			}
		}
		for _, cr := range rows {
			if inner(cr) {
				return true
			}
		}
		return false
	}, nil
}

// scalarFilter compares a stored field with an argument value, with SQL's
// treatment of null: a null field matches only `field: null`, and
// `field_not: null` matches every non-null one.
func scalarFilter(f *Field, op string, raw any) (cond, error) {
	kind := kindOf(f.Base)
	if f.List || op == "in" || op == "not_in" {
		return listFilter(f, op, raw, kind)
	}
	if raw == nil {
		return func(r Row) bool { _, ok := r.Entity[f.Name]; return ok == (op == "not") }, nil
	}
	arg, err := parseValue(kind, raw)
	if err != nil {
		return nil, errorf("%s", err.Error())
	}
	test := compareOp(op, arg)
	return func(r Row) bool {
		v, ok := r.Entity[f.Name]
		if f.Name == "id" {
			v, ok = String(r.ID), true
			if kind == KindBytes {
				v = HexBytes(r.ID)
			}
		}
		return ok && v.Kind != KindNull && test(v)
	}, nil
}

func compareOp(op string, arg Value) func(Value) bool {
	cmp := func(v Value) int { c, _ := compare(v, arg); return c }
	switch op {
	case "":
		return func(v Value) bool { return equal(v, arg) }
	case "not":
		return func(v Value) bool { return !equal(v, arg) }
	case "gt":
		return func(v Value) bool { return cmp(v) > 0 }
	case "gte":
		return func(v Value) bool { return cmp(v) >= 0 }
	case "lt":
		return func(v Value) bool { return cmp(v) < 0 }
	case "lte":
		return func(v Value) bool { return cmp(v) <= 0 }
	}
	neg := strings.HasPrefix(op, "not_")
	base := strings.TrimPrefix(op, "not_")
	nocase := strings.HasSuffix(base, "_nocase")
	base = strings.TrimSuffix(base, "_nocase")
	return func(v Value) bool {
		hay, needle := text(v), text(arg)
		if nocase {
			hay, needle = strings.ToLower(hay), strings.ToLower(needle)
		}
		var hit bool
		switch base {
		case "contains":
			hit = strings.Contains(hay, needle)
		case "starts_with":
			hit = strings.HasPrefix(hay, needle)
		case "ends_with":
			hit = strings.HasSuffix(hay, needle)
		}
		return hit != neg
	}
}

// text is a String's text or a Bytes' bytes, for substring tests.
func text(v Value) string {
	if v.Kind == KindBytes {
		return string(v.Bytes)
	}
	return v.Str
}

// listFilter handles `_in`/`_not_in` of a scalar field and the filters of a
// list field (equality, `_contains`: holds all the given elements).
func listFilter(f *Field, op string, raw any, kind Kind) (cond, error) {
	list, ok := raw.([]any)
	if !ok && raw != nil {
		return nil, errorf("Non-list value passed to `%s_%s` filter", f.Name, op)
	}
	args := make([]Value, 0, len(list))
	for _, el := range list {
		v, err := parseValue(kind, el)
		if err != nil {
			return nil, errorf("%s", err.Error())
		}
		args = append(args, v)
	}
	member := func(v Value, set []Value, nocase bool) bool {
		for _, a := range set {
			if equal(v, a) || nocase && strings.EqualFold(v.Str, a.Str) {
				return true
			}
		}
		return false
	}
	return func(r Row) bool {
		v, ok := r.Entity[f.Name]
		if f.Name == "id" {
			v, ok = String(r.ID), true
			if kind == KindBytes {
				v = HexBytes(r.ID)
			}
		}
		if !ok || v.Kind == KindNull {
			return false
		}
		switch op {
		case "in":
			return member(v, args, false)
		case "not_in":
			return !member(v, args, false)
		case "":
			return equal(v, Array(args...))
		case "not":
			return !equal(v, Array(args...))
		}
		nocase := strings.HasSuffix(op, "_nocase")
		all := true
		for _, a := range args {
			all = all && member(a, v.Array, nocase)
		}
		return all != strings.HasPrefix(op, "not_")
	}, nil
}

// order sorts rows by orderBy (a field, or `field__child` of the entity a
// field refers to) in orderDirection, ties by id in the same direction, as
// Graph Node's SQL orders (`order by c desc, id desc`); nulls last when
// ascending and first when descending, as Postgres sorts them. No orderBy
// orders by id.
func (x *exec) order(t *EntityType, rows []Row, args map[string]any, block uint64) error {
	by, _ := args["orderBy"].(string)
	desc := args["orderDirection"] == "desc"
	key := func(r Row) (Value, bool) { return String(r.ID), true }
	if by != "" && by != "id" {
		name, child, nested := strings.Cut(by, "__")
		f := t.Field(name)
		if f == nil {
			return errorf("Ordering by `%s` is not supported for type `%s`", by, t.Name)
		}
		key = func(r Row) (Value, bool) {
			if !nested {
				v, ok := r.Entity[name]
				return v, ok && v.Kind != KindNull
			}
			cr, ok := x.child(f, r, block)
			if !ok {
				return Value{}, false
			}
			v, ok := cr.Entity[child]
			return v, ok && v.Kind != KindNull
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, aok := key(rows[i])
		b, bok := key(rows[j])
		c := 0
		switch {
		case aok && bok:
			c, _ = compare(a, b)
		case aok != bok: // the null one sorts last ascending
			c = map[bool]int{true: -1, false: 1}[aok]
		}
		if c == 0 {
			c = strings.Compare(rows[i].ID, rows[j].ID)
			if t.Field("id").Base == "Bytes" {
				c = bytes.Compare(HexBytes(rows[i].ID).Bytes, HexBytes(rows[j].ID).Bytes)
			}
		}
		if desc {
			return c > 0
		}
		return c < 0
	})
	return nil
}

// child is the entity a single-entity field of r refers to (or, derived,
// the first referring back).
func (x *exec) child(f *Field, r Row, block uint64) (Row, bool) {
	target := x.s.Types[f.Base]
	if f.DerivedFrom != "" {
		rows := x.derived(target, f.DerivedFrom, r.ID, block)
		if len(rows) == 0 {
			return Row{}, false
		}
		return rows[0], true
	}
	v, ok := r.Entity[f.Name]
	if !ok {
		return Row{}, false
	}
	e := x.at(target.Name, v.Str, block)
	return Row{ID: v.Str, Entity: e}, e != nil
}

// TermKind is what a Term tests.
type TermKind int

// The kinds of Term.
const (
	// TermCompare: Field Op Value, Op one of "", not, gt, gte, lt, lte;
	// a null field never matches.
	TermCompare TermKind = iota
	// TermIn and TermNotIn: Field's value is (not) one of Values; a null
	// field never matches.
	TermIn
	TermNotIn
	// TermNull and TermNotNull: Field is (not) null.
	TermNull
	TermNotNull
	// TermChanged: the version starts at block Block or later.
	TermChanged
	// TermAnd and TermOr: all, or any, of Terms' conjunctions (each
	// element of Groups is one filter object, its terms all holding).
	TermAnd
	TermOr
	// TermChild: the entity Field refers to (Field a single reference)
	// matches Terms, or, Field being derived, some entity of Child whose
	// Field.DerivedFrom refers back does.
	TermChild
)

// Term is one condition of a `where` filter in a form a store compiles
// into its own query language, with exactly the executor's semantics
// (Graph Node's): Values are parsed as the field stores them.
type Term struct {
	Kind   TermKind
	Field  *Field
	Op     string
	Value  Value
	Values []Value
	Block  uint64
	Groups [][]Term
	Child  *EntityType
	Terms  []Term
}

// Terms compiles a `where` value the executor has accepted into Terms;
// ok is false when some part has no Term (substring tests, list fields,
// BigDecimal comparisons, a reference to a list): a store then reads a
// superset or the whole type and the executor filters.
func (s *Schema) Terms(t *EntityType, w map[string]any) (out []Term, ok bool) {
	for key, raw := range w {
		term, ok := s.term(t, key, raw)
		if !ok {
			return nil, false
		}
		out = append(out, term)
	}
	return out, true
}

func (s *Schema) term(t *EntityType, key string, raw any) (Term, bool) {
	switch key {
	case "and", "or":
		list, _ := raw.([]any)
		term := Term{Kind: TermAnd}
		if key == "or" {
			term.Kind = TermOr
		}
		for _, el := range list {
			m, ok := el.(map[string]any)
			if !ok {
				return Term{}, false
			}
			g, ok := s.Terms(t, m)
			if !ok {
				return Term{}, false
			}
			term.Groups = append(term.Groups, g)
		}
		return term, true
	case "_change_block":
		m, _ := raw.(map[string]any)
		n, err := intOf(m["number_gte"])
		return Term{Kind: TermChanged, Block: uint64(max(n, 0))}, err == nil
	}
	if f := t.Field(strings.TrimSuffix(key, "_")); strings.HasSuffix(key, "_") && f != nil && f.Entity {
		return s.childTerm(f, raw)
	}
	name, op := splitKey(t, key)
	f := t.Field(name)
	if f == nil || f.List || f.DerivedFrom != "" || f.Base == "BigDecimal" {
		return Term{}, false
	}
	return scalarTerm(f, op, raw)
}

func (s *Schema) childTerm(f *Field, raw any) (Term, bool) {
	if f.List && f.DerivedFrom == "" {
		return Term{}, false
	}
	target := s.Types[f.Base]
	if f.DerivedFrom != "" {
		if back := target.Field(f.DerivedFrom); back == nil || back.List {
			return Term{}, false
		}
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return Term{}, false
	}
	inner, ok := s.Terms(target, m)
	return Term{Kind: TermChild, Field: f, Child: target, Terms: inner}, ok
}

func scalarTerm(f *Field, op string, raw any) (Term, bool) {
	kind := kindOf(f.Base)
	if f.Name == "id" && f.Base == "Bytes" {
		kind = KindBytes
	}
	switch op {
	case "in", "not_in":
		list, _ := raw.([]any)
		term := Term{Kind: TermIn, Field: f}
		if op == "not_in" {
			term.Kind = TermNotIn
		}
		for _, el := range list {
			v, err := parseValue(kind, el)
			if err != nil || v.Kind == KindNull {
				return Term{}, false
			}
			term.Values = append(term.Values, v)
		}
		return term, true
	case "", "not", "gt", "gte", "lt", "lte":
	default:
		if raw != nil {
			return Term{}, false // substring tests
		}
	}
	if raw == nil {
		// the executor's null rule: `field_not: null` keeps the non-null
		// ones, any other test against null the null ones
		if op == "not" {
			return Term{Kind: TermNotNull, Field: f}, true
		}
		return Term{Kind: TermNull, Field: f}, true
	}
	v, err := parseValue(kind, raw)
	return Term{Kind: TermCompare, Field: f, Op: op, Value: v}, err == nil
}

// splitKey splits a filter key into its field and suffix.
func splitKey(t *EntityType, key string) (name, op string) {
	for _, sfx := range suffixes {
		if strings.HasSuffix(key, "_"+sfx) && t.Field(strings.TrimSuffix(key, "_"+sfx)) != nil {
			return strings.TrimSuffix(key, "_"+sfx), sfx
		}
	}
	return key, ""
}
