package sqlstore

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// Select runs a collection's read in SQL (graphnode.Selector). The where
// filter's terms become SQL over the table's columns, whose encodings
// compare as the executor compares (encode.go); the order becomes ORDER
// BY with the executor's ties (by id, in the same direction) and nulls
// (last ascending, first descending); first and skip become LIMIT and
// OFFSET. What has no exact SQL form (substring tests, list fields,
// BigDecimal, orders by a child's field) is left out: the read is then a
// superset the executor filters, orders and pages itself, never a wrong
// page.
//
// A version is valid at block n when lower <= n < upper. The read has two
// arms: the open versions (upper IS NULL, which the fields' partial
// indexes hold) and the versions closed after n (the (upper) index), so
// a read at or near the head reads no version closed long ago.
func (s *source) Select(ctx context.Context, sel graphnode.Selection) ([]graphnode.Row, bool, error) {
	tb, q, args, exact, err := s.plan(sel, "")
	if err != nil {
		return nil, false, err
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, false, err
	}
	out, err := scanRows(rows, tb)
	return out, exact, err
}

// plan is the SQL of a Select and whether it is exact. A parent
// expression other than "" stands for sel.Parent.ID (SelectMany's
// correlated parent); the read then selects vid before its columns.
func (s *source) plan(sel graphnode.Selection, parent string) (*table, string, []any, bool, error) {
	tb := s.st.tables[sel.Type.Name]
	if tb == nil || tb.idBytes {
		return nil, "", nil, false, graphnode.ErrNotSelected
	}
	b := &builder{st: s.st, block: sel.Block}
	var conds []string
	if p := sel.Parent; p != nil {
		i, ok := tb.byField[p.Field]
		if !ok || tb.cols[i].enc != encText {
			return nil, "", nil, false, graphnode.ErrNotSelected
		}
		if parent != "" {
			conds = append(conds, tb.cols[i].name+" = "+parent)
		} else {
			conds = append(conds, tb.cols[i].name+" = ?")
			b.args = append(b.args, p.ID)
		}
	}
	exact := true
	keys := make([]string, 0, len(sel.Where))
	for k := range sel.Where {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		terms, ok := s.st.schema.Terms(sel.Type, map[string]any{k: sel.Where[k]})
		c, ok2 := "", false
		mark := len(b.args)
		if ok {
			c, ok2 = b.conj(tb, terms)
		}
		if !ok2 {
			b.args = b.args[:mark]
			exact = false // left to the executor
			continue
		}
		conds = append(conds, c)
	}
	order, ok := orderSQL(tb, sel)
	exact = exact && ok
	b.list = tb.list
	if parent != "" {
		b.list = "vid, " + tb.list
	}
	q, args := b.compose(tb, conds, order, sel, exact)
	return tb, q, args, exact, nil
}

// traceRead, if set, sees each statement a query's read transaction
// runs (the tests read their plans and count them).
var traceRead func(q string, args []any)

// builder gathers a read's SQL arguments.
type builder struct {
	st    *Store
	block uint64
	args  []any
	// list is the columns the read selects (tb.list, or vid and tb.list)
	list string
}

// compose writes the read: its two arms (one for an immutable type, whose
// versions are never closed) with the conditions, then order and page
// when exact.
func (b *builder) compose(tb *table, conds []string, order string, sel graphnode.Selection, exact bool) (string, []any) {
	where := ""
	if len(conds) > 0 {
		where = " AND " + strings.Join(conds, " AND ")
	}
	n := int64(sel.Block)
	q := `SELECT ` + b.list + ` FROM ` + tb.name + ` WHERE upper IS NULL AND lower <= ?` + where
	args := append([]any{n}, b.args...)
	if !tb.typ.Immutable {
		// the closed versions through (upper) alone: another index (id_gt
		// on (id, lower)) would read every closed version of the history
		q += ` UNION ALL SELECT ` + b.list + ` FROM ` + tb.name + ` INDEXED BY ` + tb.upperIndex() + ` WHERE upper > ? AND lower <= ?` + where
		args = append(append(args, n, n), b.args...)
	}
	if exact {
		q += ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
		args = append(args, sel.First, sel.Skip)
	}
	return q, args
}

// orderSQL is the selection's order: a field's column, then id, in one
// direction; nulls where the executor puts them.
func orderSQL(tb *table, sel graphnode.Selection) (string, bool) {
	dir := " ASC"
	if sel.Desc {
		dir = " DESC"
	}
	if sel.OrderBy == "" {
		return "id" + dir, true
	}
	i, ok := tb.byField[sel.OrderBy]
	if !ok || tb.cols[i].enc == encJSON {
		return "", false
	}
	c := tb.cols[i]
	nulls := ""
	if !c.f.NonNull {
		nulls = map[bool]string{false: " NULLS LAST", true: " NULLS FIRST"}[sel.Desc]
	}
	return c.name + dir + nulls + ", id" + dir, true
}

// never is a condition no version meets, which SQLite does not fold
// into a constant (a constant false WHERE leaves the closed arm's INDEXED
// BY no plan).
const never = "lower < 0"

// conj is terms, all holding, as SQL; false if one has no SQL form.
func (b *builder) conj(tb *table, terms []graphnode.Term) (string, bool) {
	if len(terms) == 0 {
		return "1", true
	}
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		p, ok := b.term(tb, t)
		if !ok {
			return "", false
		}
		parts = append(parts, p)
	}
	return "(" + strings.Join(parts, " AND ") + ")", true
}

func (b *builder) term(tb *table, t graphnode.Term) (string, bool) {
	switch t.Kind {
	case graphnode.TermChanged:
		b.args = append(b.args, int64(t.Block))
		return "lower >= ?", true
	case graphnode.TermAnd, graphnode.TermOr:
		return b.groups(tb, t)
	case graphnode.TermChild:
		return b.child(tb, t)
	}
	col, enc, ok := tb.column(t.Field)
	if !ok {
		return "", false
	}
	switch t.Kind {
	case graphnode.TermNull:
		return col + " IS NULL", true
	case graphnode.TermNotNull:
		return col + " IS NOT NULL", true
	case graphnode.TermIn, graphnode.TermNotIn:
		return b.in(col, enc, t)
	}
	op, ok := map[string]string{"": "=", "not": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[t.Op]
	v, err := sqlValue(enc, t.Value)
	if !ok || err != nil {
		return "", false
	}
	b.args = append(b.args, v)
	return col + " " + op + " ?", true
}

// column is a field's column and encoding (id included); false for a
// field with none or one SQL does not compare.
func (tb *table) column(f *graphnode.Field) (string, encoding, bool) {
	if f.Name == "id" {
		return "id", encText, !tb.idBytes
	}
	i, ok := tb.byField[f.Name]
	if !ok || tb.cols[i].enc == encJSON {
		return "", 0, false
	}
	return tb.cols[i].name, tb.cols[i].enc, true
}

func (b *builder) in(col string, enc encoding, t graphnode.Term) (string, bool) {
	marks := make([]string, len(t.Values))
	for i, v := range t.Values {
		sv, err := sqlValue(enc, v)
		if err != nil {
			return "", false
		}
		marks[i] = "?"
		b.args = append(b.args, sv)
	}
	list := "(" + strings.Join(marks, ", ") + ")"
	if t.Kind == graphnode.TermIn {
		if len(marks) == 0 {
			return never, true
		}
		return col + " IN " + list, true
	}
	if len(marks) == 0 {
		return col + " IS NOT NULL", true
	}
	// a null field matches no _not_in, as the executor has it (SQL's
	// NOT IN alone would hold for it against an empty list only)
	return "(" + col + " IS NOT NULL AND " + col + " NOT IN " + list + ")", true
}

func (b *builder) groups(tb *table, t graphnode.Term) (string, bool) {
	if t.Kind == graphnode.TermOr {
		if common, rest := factor(t.Groups); len(common) > 0 {
			return b.factored(tb, common, rest)
		}
	}
	join, empty := " AND ", "1"
	if t.Kind == graphnode.TermOr {
		join, empty = " OR ", never
	}
	if len(t.Groups) == 0 {
		return empty, true
	}
	parts := make([]string, 0, len(t.Groups))
	for _, g := range t.Groups {
		p, ok := b.conj(tb, g)
		if !ok {
			return "", false
		}
		parts = append(parts, p)
	}
	return "(" + strings.Join(parts, join) + ")", true
}

// child is a nested filter (`field_: {...}`): the ids of the child type's
// entities valid at the block that match it, which the field refers to
// or, derived, which refer back.
func (b *builder) child(tb *table, t graphnode.Term) (string, bool) {
	ct := b.st.tables[t.Child.Name]
	if ct == nil || ct.idBytes {
		return "", false
	}
	sel, outer := "id", "id"
	if t.Field.DerivedFrom == "" {
		c, _, ok := tb.column(t.Field)
		if !ok {
			return "", false
		}
		outer = c
	} else {
		c, enc, ok := ct.column(t.Child.Field(t.Field.DerivedFrom))
		if !ok || enc != encText {
			return "", false
		}
		sel = c
	}
	b.args = append(b.args, int64(b.block), int64(b.block))
	inner, ok := b.conj(ct, t.Terms)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s IN (SELECT %s FROM %s WHERE lower <= ? AND (upper IS NULL OR upper > ?) AND %s)", outer, sel, ct.name, inner), true
}

// factor splits an or's groups into the terms every group holds and each
// group's others: (a and b) or (a and c) is a and (b or c), which SQLite
// can read by an index on a (an or of groups that each hold id_gt, say,
// is otherwise read whole).
func factor(groups [][]graphnode.Term) (common []graphnode.Term, rest [][]graphnode.Term) {
	if len(groups) < 2 {
		return nil, groups
	}
	rest = make([][]graphnode.Term, len(groups))
	for i, g := range groups {
		rest[i] = append([]graphnode.Term(nil), g...)
	}
	for _, t := range groups[0] {
		at := make([]int, len(rest))
		in := true
		for i := range rest {
			at[i] = slices.IndexFunc(rest[i], func(u graphnode.Term) bool { return reflect.DeepEqual(t, u) })
			in = in && at[i] >= 0
		}
		if !in {
			continue
		}
		common = append(common, t)
		for i := range rest {
			rest[i] = slices.Delete(rest[i], at[i], at[i]+1)
		}
	}
	return common, rest
}

// factored is common and (rest[0] or rest[1] ...) as SQL.
func (b *builder) factored(tb *table, common []graphnode.Term, rest [][]graphnode.Term) (string, bool) {
	c, ok := b.conj(tb, common)
	if !ok {
		return "", false
	}
	for _, g := range rest {
		if len(g) == 0 { // that group is common alone: the or holds
			return c, true
		}
	}
	o, ok := b.groups(tb, graphnode.Term{Kind: graphnode.TermOr, Groups: rest})
	if !ok {
		return "", false
	}
	return "(" + c + " AND " + o + ")", true
}
