package graphnode

import (
	"context"
	"errors"
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// exec runs one validated operation; the store's read lock is held.
type exec struct {
	// ctx is the request's: the store's reads run on it.
	ctx  context.Context
	src  Source
	head Block
	// failed is what `_meta { hasIndexingErrors }` says.
	failed bool
	s      *Schema
	doc    *ast.QueryDocument
	vars   map[string]any
	// rowCache and backRefs hold, for this query, a type's rows as of a
	// block and the index of a derived field's back references, so that
	// resolving a derived field of n entities reads the store once, not n
	// times.
	rowCache map[rowsKey][]Row
	backRefs map[backKey]map[string][]Row
	// ents and pages are what a Batcher read ahead for a level of the
	// query (prefetch.go): entities by id (nil: absent) and derived
	// fields' pages by parent.
	ents  map[entKey]Entity
	pages map[pageKey][]Row
}

type rowsKey struct {
	typ   string
	block uint64
}

type backKey struct {
	typ, field string
	block      uint64
}

// rows are a type's rows as of block, read once per query.
func (x *exec) rows(typ string, block uint64) []Row {
	k := rowsKey{typ, block}
	if r, ok := x.rowCache[k]; ok {
		return r
	}
	if x.rowCache == nil {
		x.rowCache = map[rowsKey][]Row{}
	}
	r, err := x.src.Rows(x.context(), typ, block)
	x.must(err)
	x.rowCache[k] = r
	return r
}

// Deployment is the deployment id `_meta` names.
const Deployment = "QmClammGatewayGraphNodeEmulator000000000000000"

func (x *exec) root(op *ast.OperationDefinition) (*Object, error) {
	out := &Object{}
	fields := x.collect(op.SelectionSet, "Query")
	for _, f := range fields {
		args, err := x.args(f)
		if err != nil {
			return nil, err
		}
		if f.Name != "_meta" && f.Name != "__typename" && args["subgraphError"] != "allow" && x.failed {
			// Graph Node's answer under the default policy (deny) once
			// the subgraph has failed.
			return nil, errorf("indexing_error")
		}
	}
	for _, f := range fields {
		v, err := x.rootField(f)
		if err != nil {
			return nil, err
		}
		out.set(f.Alias, v)
	}
	return out, nil
}

func (x *exec) rootField(f *ast.Field) (any, error) {
	args, _ := x.args(f)
	switch f.Name {
	case "__typename":
		return "Query", nil
	case "_meta":
		return x.meta(f, args)
	}
	root, ok := x.s.roots[f.Name]
	if !ok {
		return nil, errorf("Type `Query` has no field `%s`", f.Name)
	}
	block, err := x.block(args["block"])
	if err != nil {
		return nil, err
	}
	if !root.collection {
		id, _ := args["id"].(string)
		e := x.at(root.typ.Name, id, block)
		if e == nil {
			return nil, nil
		}
		return x.object(root.typ, Row{ID: id, Entity: e}, f.SelectionSet, block)
	}
	return x.collection(root.typ, f, block, nil)
}

// meta answers `_meta`: the block queried (the head unless `block` says
// otherwise), the deployment and whether indexing failed.
func (x *exec) meta(f *ast.Field, args map[string]any) (any, error) {
	n, err := x.block(args["block"])
	if err != nil {
		return nil, err
	}
	// Graph Node knows the hash of the head and of a block asked by hash,
	// and looks the time and parent up by that hash; a block asked by
	// number has none of the three (graph-node resolver.rs lookup_meta).
	b, known := x.src.BlockAt(x.context(), n)
	if n == x.head.Number {
		b, known = x.head, true
	}
	if m, _ := args["block"].(map[string]any); m != nil && m["number"] != nil && m["hash"] == nil {
		b, known = Block{Number: n}, false
	}
	out := &Object{}
	for _, sf := range x.collect(f.SelectionSet, "_Meta_") {
		switch sf.Name {
		case "__typename":
			out.set(sf.Alias, "_Meta_")
		case "deployment":
			out.set(sf.Alias, Deployment)
		case "hasIndexingErrors":
			out.set(sf.Alias, x.failed)
		case "block":
			out.set(sf.Alias, x.metaBlock(sf, b, known))
		}
	}
	return out, nil
}

func (x *exec) metaBlock(f *ast.Field, b Block, known bool) *Object {
	out := &Object{}
	for _, sf := range x.collect(f.SelectionSet, "_Block_") {
		var v any
		switch sf.Name {
		case "__typename":
			v = "_Block_"
		case "number":
			v = b.Number
		case "hash":
			if known && b.Hash != "" {
				v = b.Hash
			}
		case "timestamp":
			if known {
				v = b.Timestamp
			}
		case "parentHash":
			if known && b.ParentHash != "" {
				v = b.ParentHash
			} else if p, ok := x.src.BlockAt(x.context(), b.Number-1); ok && known && b.Number > 0 && p.Hash != "" {
				v = p.Hash
			}
		}
		out.set(sf.Alias, v)
	}
	return out
}

// block resolves a `block: Block_height` argument to a block number.
func (x *exec) block(arg any) (uint64, error) {
	head := x.head.Number
	m, _ := arg.(map[string]any)
	if m == nil {
		return head, nil
	}
	notYet := func(field string, n int64) error {
		return errorf("Failed to decode `%s` value: `subgraph %s has only indexed up to block number %d and data for block number %d is therefore not yet available`", field, Deployment, head, n)
	}
	if h, ok := m["hash"].(string); ok {
		b, found := x.src.BlockByHash(x.context(), h)
		if !found {
			return 0, errorf("Failed to decode `block.hash` value: `no block with that hash found`")
		}
		return b.Number, x.kept("block.hash", b.Number)
	}
	if raw, ok := m["number"]; ok && raw != nil {
		n, err := intOf(raw)
		if err != nil || n < 0 {
			return 0, errorf("Failed to decode `block.number` value: `%v`", raw)
		}
		if uint64(n) > head {
			return 0, notYet("block.number", n)
		}
		return uint64(n), x.kept("block.number", uint64(n))
	}
	if raw, ok := m["number_gte"]; ok && raw != nil {
		n, err := intOf(raw)
		if err != nil {
			return 0, errorf("Failed to decode `block.number_gte` value: `%v`", raw)
		}
		if n > int64(head) {
			return 0, notYet("block.number_gte", n)
		}
	}
	return head, nil
}

// kept refuses a block older than the oldest the source still holds
// (pruned history), in Graph Node's words, which name that block.
func (x *exec) kept(field string, n uint64) error {
	if e := x.src.Earliest(); n < e {
		return errorf("Failed to decode `%s` value: `subgraph %s only has data starting at block number %d and data for block number %d is therefore not available`", field, Deployment, e, n)
	}
	return nil
}

// args are a field's arguments with variables and defaults applied.
func (x *exec) args(f *ast.Field) (out map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errorf("Invalid value provided for argument of `%s`: %v", f.Name, r)
		}
	}()
	return f.ArgumentMap(x.vars), nil
}

// collect flattens a selection set for an object type: fragments whose
// type condition matches, @skip and @include applied, fields of one
// response key merged.
func (x *exec) collect(set ast.SelectionSet, typ string) []*ast.Field {
	var out []*ast.Field
	index := map[string]int{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch sel := sel.(type) {
			case *ast.Field:
				if !x.included(sel.Directives) {
					continue
				}
				if i, ok := index[sel.Alias]; ok {
					merged := *out[i]
					merged.SelectionSet = append(append(ast.SelectionSet{}, out[i].SelectionSet...), sel.SelectionSet...)
					out[i] = &merged
					continue
				}
				index[sel.Alias] = len(out)
				out = append(out, sel)
			case *ast.InlineFragment:
				if x.included(sel.Directives) && (sel.TypeCondition == "" || sel.TypeCondition == typ) {
					walk(sel.SelectionSet)
				}
			case *ast.FragmentSpread:
				fr := x.doc.Fragments.ForName(sel.Name)
				if fr != nil && x.included(sel.Directives) && fr.TypeCondition == typ {
					walk(fr.SelectionSet)
				}
			}
		}
	}
	walk(set)
	return out
}

func (x *exec) included(dirs ast.DirectiveList) bool {
	for _, d := range dirs {
		m := d.ArgumentMap(x.vars)
		switch d.Name {
		case "skip":
			if m["if"] == true {
				return false
			}
		case "include":
			if m["if"] == false {
				return false
			}
		}
	}
	return true
}

// object resolves an entity's selection.
func (x *exec) object(t *EntityType, r Row, set ast.SelectionSet, block uint64) (*Object, error) {
	x.must(x.context().Err()) // work between reads stops with the request too
	out := &Object{}
	for _, f := range x.collect(set, t.Name) {
		if f.Name == "__typename" {
			out.set(f.Alias, t.Name)
			continue
		}
		fd := t.Field(f.Name)
		if fd == nil {
			return nil, errorf("Type `%s` has no field `%s`", t.Name, f.Name)
		}
		v, err := x.fieldValue(t, fd, r, f, block)
		if err != nil {
			return nil, err
		}
		if v == nil && fd.NonNull {
			return nil, &queryError{msg: fmt.Sprintf("Null value resolved for non-null field `%s`", fd.Name),
				loc: &Location{Line: f.Position.Line, Column: f.Position.Column}}
		}
		out.set(f.Alias, v)
	}
	return out, nil
}

func (x *exec) fieldValue(t *EntityType, fd *Field, r Row, f *ast.Field, block uint64) (any, error) {
	target := x.s.Types[fd.Base]
	switch {
	case fd.DerivedFrom != "" && fd.List:
		if rows, ok := x.pages[pageKeyOf(t, f, r.ID, block)]; ok {
			return x.resolve(target, rows, f, block)
		}
		return x.collection(target, f, block, &Ref{Field: fd.DerivedFrom, ID: r.ID})
	case fd.DerivedFrom != "":
		first, ok := x.firstOf(t, fd, f, r.ID, block)
		if !ok {
			return nil, nil
		}
		return x.object(target, first, f.SelectionSet, block)
	case fd.Entity && fd.List:
		v := r.Entity[fd.Name]
		rows := make([]Row, 0, len(v.Array))
		for _, id := range v.Array {
			if e := x.at(target.Name, id.Str, block); e != nil {
				rows = append(rows, Row{ID: id.Str, Entity: e})
			}
		}
		return x.list(target, rows, f, block)
	case fd.Entity:
		v, ok := r.Entity[fd.Name]
		if !ok {
			return nil, nil
		}
		e := x.at(target.Name, v.Str, block)
		if e == nil {
			return nil, nil
		}
		return x.object(target, Row{ID: v.Str, Entity: e}, f.SelectionSet, block)
	}
	v, ok := r.Entity[fd.Name]
	if !ok || v.Kind == KindNull {
		return nil, nil
	}
	return v.JSON(), nil
}

// derived are the entities of target whose field refers to id, by id.
func (x *exec) derived(target *EntityType, field, id string, block uint64) []Row {
	k := backKey{target.Name, field, block}
	idx, ok := x.backRefs[k]
	if !ok {
		idx = map[string][]Row{}
		for _, r := range x.rows(target.Name, block) {
			v := r.Entity[field]
			switch v.Kind {
			case KindString:
				idx[v.Str] = append(idx[v.Str], r)
			case KindArray:
				seen := map[string]bool{}
				for _, el := range v.Array {
					if !seen[el.Str] {
						seen[el.Str] = true
						idx[el.Str] = append(idx[el.Str], r)
					}
				}
			}
		}
		if x.backRefs == nil {
			x.backRefs = map[backKey]map[string][]Row{}
		}
		x.backRefs[k] = idx
	}
	// A copy: the caller filters and sorts what it gets.
	return append([]Row(nil), idx[id]...)
}

// collection reads a collection field: a root one (parent nil) or a
// derived one (the entities whose parent.Field refers to parent.ID). A
// Selector runs it over its indexes; otherwise, or where the Selector can
// only narrow it, the rows are filtered, ordered and paged here.
func (x *exec) collection(t *EntityType, f *ast.Field, block uint64, parent *Ref) (any, error) {
	p, err := x.page(t, f, block)
	if err != nil {
		return nil, err
	}
	if sel, ok := x.src.(Selector); ok {
		rows, exact, err := sel.Select(x.context(), p.selection(t, block, parent))
		switch {
		case err == nil && exact:
			return x.resolve(t, rows, f, block)
		case err == nil:
			return x.paged(t, rows, p, f, block)
		case !errors.Is(err, ErrNotSelected):
			x.must(err)
		}
	}
	var rows []Row
	if parent == nil {
		rows = append([]Row(nil), x.rows(t.Name, block)...)
	} else {
		rows = x.derived(t, parent.Field, parent.ID, block)
	}
	return x.paged(t, rows, p, f, block)
}

// derivedFirst is the entity a single derived field resolves to: the
// first by id of those referring to id.
func (x *exec) derivedFirst(t *EntityType, field, id string, block uint64) (Row, bool) {
	var rows []Row
	sel, ok := x.src.(Selector)
	if ok {
		var exact bool
		var err error
		rows, exact, err = sel.Select(x.context(), Selection{Type: t, Block: block, First: 1, Parent: &Ref{Field: field, ID: id}})
		if err != nil && !errors.Is(err, ErrNotSelected) {
			x.must(err)
		}
		ok = err == nil
		if ok && !exact {
			_ = x.order(t, rows, nil, block)
		}
	}
	if !ok {
		rows = x.derived(t, field, id, block)
	}
	if len(rows) == 0 {
		return Row{}, false
	}
	return rows[0], true
}

// pageArgs are a collection field's checked arguments.
type pageArgs struct {
	args        map[string]any
	where       map[string]any
	keep        cond // nil: no where
	first, skip int
}

func (p *pageArgs) selection(t *EntityType, block uint64, parent *Ref) Selection {
	by, _ := p.args["orderBy"].(string)
	if by == "id" {
		by = ""
	}
	return Selection{Type: t, Block: block, Where: p.where, OrderBy: by, Desc: p.args["orderDirection"] == "desc",
		Skip: p.skip, First: p.first, Parent: parent}
}

// page reads and checks a collection field's where, orderBy, skip and
// first, with Graph Node's errors, before anything is read.
func (x *exec) page(t *EntityType, f *ast.Field, block uint64) (*pageArgs, error) {
	args, err := x.args(f)
	if err != nil {
		return nil, err
	}
	p := &pageArgs{args: args}
	if p.first, err = rangeArg(args, "first", 100, MaxFirst); err != nil {
		return nil, err
	}
	if p.skip, err = rangeArg(args, "skip", 0, MaxSkip); err != nil {
		return nil, err
	}
	if w, ok := args["where"].(map[string]any); ok {
		if p.keep, err = x.filter(t, w, block); err != nil {
			return nil, err
		}
		p.where = w
	}
	if err := x.order(t, nil, args, block); err != nil {
		return nil, err
	}
	return p, nil
}

// list applies a collection field's where, orderBy, orderDirection, skip
// and first to rows and resolves each.
func (x *exec) list(t *EntityType, rows []Row, f *ast.Field, block uint64) (any, error) {
	p, err := x.page(t, f, block)
	if err != nil {
		return nil, err
	}
	return x.paged(t, rows, p, f, block)
}

// paged filters, orders and pages rows as p says and resolves each.
func (x *exec) paged(t *EntityType, rows []Row, p *pageArgs, f *ast.Field, block uint64) (any, error) {
	if p.keep != nil {
		var kept []Row
		for _, r := range rows {
			if p.keep(r) {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	if err := x.order(t, rows, p.args, block); err != nil {
		return nil, err
	}
	rows = rows[min(p.skip, len(rows)):]
	rows = rows[:min(p.first, len(rows))]
	return x.resolve(t, rows, f, block)
}

// resolve resolves each row's selection.
func (x *exec) resolve(t *EntityType, rows []Row, f *ast.Field, block uint64) (any, error) {
	x.prefetch(t, rows, f.SelectionSet, block)
	out := make([]any, 0, len(rows))
	for _, r := range rows {
		o, err := x.object(t, r, f.SelectionSet, block)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// rangeArg reads first or skip with Graph Node's bounds and message.
func rangeArg(args map[string]any, name string, def, max int64) (int, error) {
	raw, ok := args[name]
	if !ok || raw == nil {
		return int(def), nil
	}
	n, err := intOf(raw)
	if err != nil {
		return 0, errorf("Invalid value provided for argument `%s`: %v", name, raw)
	}
	if n < 0 || n > max {
		return 0, errorf("The `%s` argument must be between 0 and %d, but is %d", name, max, n)
	}
	return int(n), nil
}
