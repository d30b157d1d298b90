package graphnode

import (
	"context"
	"errors"
)

// Source is a consistent view of an entity store: what a query reads. The
// in-memory Store gives one under its read lock; the embedded indexer's
// store on disk gives one per read transaction. The reads take the
// request's context, so a cancelled or timed-out query stops reading; a
// read that fails (a disk error, the context's end) fails the query whole.
type Source interface {
	// Head is the last block indexed: what `_meta` names and what a query
	// without `block` reads.
	Head() Block
	// Earliest is the oldest block whose state the source still holds (0:
	// all of it): a store that prunes history (Graph Node's
	// history_blocks) answers a query at an older block with Graph Node's
	// "only has data starting at block number" error.
	Earliest() uint64
	// BlockAt and BlockByHash find an indexed block.
	BlockAt(ctx context.Context, n uint64) (Block, bool)
	BlockByHash(ctx context.Context, hash string) (Block, bool)
	// Failed is what `_meta { hasIndexingErrors }` says; with it set, a
	// query under the default error policy fails with `indexing_error`.
	Failed() bool
	// Rows are the entities of a type as of block n, sorted by id.
	Rows(ctx context.Context, typ string, n uint64) ([]Row, error)
	// At is an entity as of block n (nil if absent or removed).
	At(ctx context.Context, typ, id string, n uint64) (Entity, error)
}

// Selector is a Source that runs a collection's read itself (a database
// over its indexes), so that a page costs what it returns rather than the
// whole type. The executor has already checked the selection (its filter
// and order compile, first and skip are in bounds), so a Selector never
// has to word an error of the query's own.
type Selector interface {
	// Select reads sel. With exact true, rows are the answer: filtered,
	// ordered, skipped and cut to first. With exact false, rows are a
	// superset of the entities the filter keeps (at least sel.Parent
	// applied), in any order, and the executor filters, orders and pages
	// them itself. ErrNotSelected says the source cannot narrow this
	// selection at all: the executor then reads the type's Rows.
	Select(ctx context.Context, sel Selection) (rows []Row, exact bool, err error)
}

// Batcher is a Source that reads many entities in one statement, as
// Graph Node resolves a level of a query at once (its prefetch: one SQL
// query per field and level, the parents' ids in a list), so a page of n
// rows with a reference or a derived field costs a few reads, not n.
// The executor prefetches with it and resolves each row from what it
// read; a Source without it is read a row at a time, as before.
type Batcher interface {
	// AtMany are the entities of ids as of block n, by id; an id absent
	// or removed at n is missing from the map.
	AtMany(ctx context.Context, typ string, ids []string, n uint64) (map[string]Entity, error)
	// SelectMany runs sel (its Parent unset) once for each parent id as
	// a derived field's read (Parent{field, id}) and returns each
	// parent's exact page, in any order; ErrNotSelected: it cannot run
	// sel exactly, and the executor reads each parent's page itself.
	SelectMany(ctx context.Context, sel Selection, field string, parents []string) (map[string][]Row, error)
}

// ErrNotSelected is a Selector's answer to a selection it cannot run.
var ErrNotSelected = errors.New("selection not supported by the source")

// Selection is one collection field's read: a root collection
// (`purchases(...)`) or a derived field's (`option { legs(...) }`).
type Selection struct {
	Type  *EntityType
	Block uint64
	// Where is the `where` argument (variables applied); nil: none.
	Where map[string]any
	// OrderBy is a field, `field__child`, or "" (by id); ties are broken
	// by id in the same direction.
	OrderBy     string
	Desc        bool
	Skip, First int
	// Parent, if set, keeps the entities whose field Parent.Field refers
	// to Parent.ID: the entities of a derived field.
	Parent *Ref
}

// Ref names the entities of a derived field: those whose Field holds ID.
type Ref struct{ Field, ID string }

// storeFailure carries a Source's error out of the executor's recursion
// to Execute, which fails the query with it.
type storeFailure struct{ err error }

// must fails the query on a store error.
func (x *exec) must(err error) {
	if err != nil {
		panic(storeFailure{err})
	}
}

// at reads one entity as of block, failing the query on a store error.
func (x *exec) at(typ, id string, block uint64) Entity {
	if e, ok := x.ents[entKey{typ, id, block}]; ok {
		return e
	}
	e, err := x.src.At(x.context(), typ, id, block)
	x.must(err)
	return e
}

// context is the request's context (Background when none was given).
func (x *exec) context() context.Context {
	if x.ctx == nil {
		return context.Background()
	}
	return x.ctx
}

// memorySource is the in-memory Store as a Source; the caller holds the
// read lock. It is the executor's oracle: it runs no selection itself.
type memorySource struct{ s *Store }

func (m memorySource) Head() Block      { return m.s.head }
func (m memorySource) Earliest() uint64 { return 0 }
func (m memorySource) BlockAt(_ context.Context, n uint64) (Block, bool) {
	return m.s.block(n)
}
func (m memorySource) BlockByHash(_ context.Context, h string) (Block, bool) {
	return m.s.blockByHash(h)
}
func (m memorySource) Failed() bool { return m.s.errors }
func (m memorySource) Rows(_ context.Context, typ string, n uint64) ([]Row, error) {
	return m.s.rows(typ, n)
}
func (m memorySource) At(_ context.Context, typ, id string, n uint64) (Entity, error) {
	return m.s.at(typ, id, n)
}
