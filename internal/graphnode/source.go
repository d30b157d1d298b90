package graphnode

// Source is a consistent view of an entity store: what a query reads. The
// in-memory Store gives one under its read lock; the embedded indexer's
// store on disk gives one per read transaction. Rows and At may fail (a
// disk error): the query then fails whole.
type Source interface {
	// Head is the last block indexed: what `_meta` names and what a query
	// without `block` reads.
	Head() Block
	// BlockAt and BlockByHash find an indexed block.
	BlockAt(n uint64) (Block, bool)
	BlockByHash(hash string) (Block, bool)
	// Failed is what `_meta { hasIndexingErrors }` says; with it set, a
	// query under the default error policy fails with `indexing_error`.
	Failed() bool
	// Rows are the entities of a type as of block n, sorted by id.
	Rows(typ string, n uint64) ([]Row, error)
	// At is an entity as of block n (nil if absent or removed).
	At(typ, id string, n uint64) (Entity, error)
}

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
	e, err := x.src.At(typ, id, block)
	x.must(err)
	return e
}

// memorySource is the in-memory Store as a Source; the caller holds the
// read lock.
type memorySource struct{ s *Store }

func (m memorySource) Head() Block                              { return m.s.head }
func (m memorySource) BlockAt(n uint64) (Block, bool)           { return m.s.block(n) }
func (m memorySource) BlockByHash(h string) (Block, bool)       { return m.s.blockByHash(h) }
func (m memorySource) Failed() bool                             { return m.s.errors }
func (m memorySource) Rows(typ string, n uint64) ([]Row, error) { return m.s.rows(typ, n), nil }
func (m memorySource) At(typ, id string, n uint64) (Entity, error) {
	return m.s.at(typ, id, n), nil
}
