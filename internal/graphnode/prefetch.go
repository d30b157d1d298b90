package graphnode

import (
	"errors"

	"github.com/vektah/gqlparser/v2/ast"
)

// Prefetch: before a list of rows is resolved, a Batcher reads what
// their selection refers to, a field at a time for all rows at once (the
// referenced entities by id, each parent's page of a derived field), and
// then, level by level, what those refer to. Resolving a row then finds
// its children read: a page of n purchases with their options costs one
// read of options, not n. Nothing is read that the per-row resolution
// would not read; an error or a selection the Batcher cannot run exactly
// leaves the rows to it, so answers are the same either way.

// entKey names an entity as of a block.
type entKey struct {
	typ, id string
	block   uint64
}

// pageKey names a derived field's page for one parent: the field's place
// in the document (a field's arguments are fixed there), the parent's
// type and id, the block.
type pageKey struct {
	pos    *ast.Position
	typ    string
	parent string
	block  uint64
}

func pageKeyOf(t *EntityType, f *ast.Field, parent string, block uint64) pageKey {
	return pageKey{pos: f.Position, typ: t.Name, parent: parent, block: block}
}

// prefetch reads ahead, for rows of t, every reference and derived field
// set selects, and recursively their selections.
func (x *exec) prefetch(t *EntityType, rows []Row, set ast.SelectionSet, block uint64) {
	b, ok := x.src.(Batcher)
	if !ok || len(rows) < 2 {
		return // one row: the per-row read is already one statement
	}
	lv := level{b: b, t: t, rows: rows, block: block}
	for _, f := range x.collect(set, t.Name) {
		fd := t.Field(f.Name)
		if fd == nil || !fd.Entity && fd.DerivedFrom == "" || x.s.Types[fd.Base] == nil {
			continue
		}
		if fd.DerivedFrom != "" {
			x.prefetchDerived(lv, fd, f)
		} else {
			x.prefetchRefs(lv, fd, f)
		}
	}
}

// level is the rows of one type a selection set is read ahead for.
type level struct {
	b     Batcher
	t     *EntityType
	rows  []Row
	block uint64
}

// prefetchRefs reads the entities rows refer to through fd, then what
// f's selection of them refers to.
func (x *exec) prefetchRefs(lv level, fd *Field, f *ast.Field) {
	target, rows, block := x.s.Types[fd.Base], lv.rows, lv.block
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if _, read := x.ents[entKey{target.Name, id, block}]; !read && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, r := range rows {
		v := r.Entity[fd.Name]
		switch v.Kind {
		case KindString:
			add(v.Str)
		case KindArray:
			for _, el := range v.Array {
				if el.Kind == KindString {
					add(el.Str)
				}
			}
		}
	}
	if len(ids) == 0 {
		return
	}
	got, err := lv.b.AtMany(x.context(), target.Name, ids, block)
	x.must(err)
	if x.ents == nil {
		x.ents = map[entKey]Entity{}
	}
	next := make([]Row, 0, len(got))
	for _, id := range ids {
		e := got[id]
		x.ents[entKey{target.Name, id, block}] = e
		if e != nil {
			next = append(next, Row{ID: id, Entity: e})
		}
	}
	x.prefetch(target, next, f.SelectionSet, block)
}

// prefetchDerived reads each row's page of the derived field fd, then
// what f's selection of those pages refers to.
func (x *exec) prefetchDerived(lv level, fd *Field, f *ast.Field) {
	t, target, rows, block := lv.t, x.s.Types[fd.Base], lv.rows, lv.block
	if f.Position == nil {
		return
	}
	sel := Selection{Type: target, Block: block, First: 1}
	var args map[string]any
	if fd.List {
		p, err := x.page(target, f, block)
		if err != nil {
			return // the per-row read words the error
		}
		sel, args = p.selection(target, block, nil), p.args
	}
	parents := make([]string, 0, len(rows))
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		if _, read := x.pages[pageKeyOf(t, f, r.ID, block)]; !read && !seen[r.ID] {
			seen[r.ID] = true
			parents = append(parents, r.ID)
		}
	}
	if len(parents) < 2 {
		return
	}
	got, err := lv.b.SelectMany(x.context(), sel, fd.DerivedFrom, parents)
	if errors.Is(err, ErrNotSelected) {
		return
	}
	x.must(err)
	if x.pages == nil {
		x.pages = map[pageKey][]Row{}
	}
	var all []Row
	for _, id := range parents {
		page := got[id]
		// the executor's own order: a database's union of pages need
		// not keep each page's order
		x.must(x.order(target, page, args, block))
		x.pages[pageKeyOf(t, f, id, block)] = page
		all = append(all, page...)
	}
	x.prefetch(target, all, f.SelectionSet, block)
}

// firstOf is the entity a single derived field fd of the entity id
// resolves to, read ahead or read now.
func (x *exec) firstOf(t *EntityType, fd *Field, f *ast.Field, id string, block uint64) (Row, bool) {
	if rows, read := x.pages[pageKeyOf(t, f, id, block)]; read {
		if len(rows) == 0 {
			return Row{}, false
		}
		return rows[0], true
	}
	return x.derivedFirst(x.s.Types[fd.Base], fd.DerivedFrom, id, block)
}
