package sqlstore

import (
	"context"
	"fmt"
	"sort"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// Writer gathers one block's changes, as Graph Node's entity cache does:
// the mappings' store.get sees the block's own writes first, then the
// store; nothing reaches the disk before Commit, which writes them with
// the block pointer in one transaction. A Writer is used by one goroutine.
type Writer struct {
	st      *Store
	block   graphnode.Block
	changes map[key]*change
	created []DataSource
}

type key struct{ typ, id string }

// change is an entity's state at the end of the block so far (nil:
// removed), the block it was first inserted at, and whether the store
// holds an open version of it (which the block then closes), starting at
// block lower.
type change struct {
	entity   graphnode.Entity
	inserted uint64
	stored   bool
	lower    uint64
}

// Error is a failure of the database itself (a disk error), which the
// caller may retry, as opposed to a write the schema refuses.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Begin starts block b's changes.
func (st *Store) Begin(b graphnode.Block) *Writer {
	return &Writer{st: st, block: b, changes: map[key]*change{}}
}

// Schema is the store's schema.
func (w *Writer) Schema() *graphnode.Schema { return w.st.schema }

// Get returns an entity as the block has left it so far (nil if absent).
func (w *Writer) Get(typ, id string) (graphnode.Entity, error) {
	c, err := w.current(typ, id)
	if err != nil || c == nil {
		return nil, err
	}
	return c.entity, nil
}

// current is the entity's latest state: the block's change, or the
// store's open version (nil if neither).
func (w *Writer) current(typ, id string) (*change, error) {
	if c, ok := w.changes[key{typ, id}]; ok {
		return c, nil
	}
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	return w.st.read(typ, id)
}

// Set is store.set at the writer's block (block must be it). data is
// the Writer's from then on (it may become the stored version): the
// caller does not change it after.
func (w *Writer) Set(typ, id string, data graphnode.Entity, block uint64) error {
	if block != w.block.Number {
		return fmt.Errorf("store.set at block %d while indexing block %d", block, w.block.Number)
	}
	c, err := w.current(typ, id)
	if err != nil {
		return err
	}
	var cur graphnode.Entity
	inserted := block
	if c != nil && c.entity != nil {
		cur, inserted = c.entity, c.inserted
	}
	merged, err := w.st.schema.Apply(graphnode.Write{Type: typ, ID: id, Data: data, Block: block, Owned: true}, cur, inserted)
	if err != nil {
		return err
	}
	nc := &change{entity: merged, inserted: inserted}
	if c != nil {
		nc.stored, nc.lower = c.stored, c.lower
	}
	w.changes[key{typ, id}] = nc
	return nil
}

// Remove is store.remove at the writer's block.
func (w *Writer) Remove(typ, id string, block uint64) error {
	if err := w.st.schema.CanRemove(typ, id); err != nil {
		return err
	}
	c, err := w.current(typ, id)
	if err != nil {
		return err
	}
	if c != nil && c.entity != nil {
		w.changes[key{typ, id}] = &change{stored: c.stored, lower: c.lower}
	}
	return nil
}

// Create records a data source the block's mappings created.
func (w *Writer) Create(d DataSource) { w.created = append(w.created, d) }

// Commit writes the block's changes, its data sources and the block
// pointer, and commits them (with any block staged before) in one
// transaction.
func (w *Writer) Commit(ctx context.Context) error {
	if err := w.Stage(ctx); err != nil {
		return err
	}
	return w.st.Flush(ctx)
}

// Stage queues the block's changes, its data sources and the block
// pointer for the open batch (queue.go: the writer goroutine writes them
// while the next blocks are indexed; the blocks after see them at once):
// they commit with the next Flush, in one transaction with the blocks
// staged before and after. A failed write of an earlier block is returned
// here or by the next Flush.
func (w *Writer) Stage(ctx context.Context) error {
	keys := make([]key, 0, len(w.changes))
	for k := range w.changes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].typ != keys[j].typ {
			return keys[i].typ < keys[j].typ
		}
		return keys[i].id < keys[j].id
	})
	// the writer goroutine takes the changes: the Writer starts afresh
	changes, created := w.changes, w.created
	w.changes, w.created = map[key]*change{}, nil
	return w.st.stage(w.block, changes, keys, created)
}
