package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// batch is the open write transaction several blocks are written in
// during a backfill, with its statements prepared once: a commit per
// block would cost the write-ahead log a write per block. Each block's
// changes and the block pointer still land together (Flush commits them
// all, or a crash none: the store then resumes from the last Flush).
type batch struct {
	tx                                      *sql.Tx
	get, close, insert, source, head, block *sql.Stmt
	// last is the last block staged: the pointer Flush writes.
	last *graphnode.Block
}

// open begins the batch, if none is open. The caller holds st.mu.
func (st *Store) open(ctx context.Context) (*batch, error) {
	if st.batch != nil {
		return st.batch, nil
	}
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, &Error{err}
	}
	b := &batch{tx: tx}
	for _, p := range []struct {
		stmt **sql.Stmt
		q    string
	}{
		{&b.get, `SELECT data, lower FROM entities WHERE type = ? AND id = ? AND upper = ?`},
		{&b.close, `UPDATE entities SET upper = ? WHERE type = ? AND id = ? AND lower = ?`},
		{&b.insert, `INSERT INTO entities(type, id, lower, upper, data) VALUES (?, ?, ?, ?, ?)`},
		{&b.source, `INSERT OR REPLACE INTO sources(address, name, start) VALUES (?, ?, ?)`},
		{&b.head, setHeadSQL},
		{&b.block, setBlockSQL},
	} {
		if *p.stmt, err = tx.PrepareContext(ctx, p.q); err != nil {
			_ = tx.Rollback()
			return nil, &Error{err}
		}
	}
	st.batch = b
	return b, nil
}

// Flush commits the blocks written since the last Flush.
func (st *Store) Flush(ctx context.Context) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.flush()
}

// flush commits the open batch; the caller holds st.mu. A failed commit
// forgets what the cache learnt from the batch.
func (st *Store) flush() error {
	b := st.batch
	if b == nil {
		return nil
	}
	st.batch = nil
	if err := b.pointer(context.Background()); err != nil {
		_ = b.tx.Rollback()
		st.cache.clear()
		return &Error{err}
	}
	if err := b.tx.Commit(); err != nil {
		st.cache.clear()
		return &Error{err}
	}
	return nil
}

// Discard abandons the blocks written since the last Flush (a block's
// mappings failed after others were written): the store is back at the
// last Flush.
func (st *Store) Discard() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.batch != nil {
		_ = st.batch.tx.Rollback()
		st.batch = nil
	}
	st.cache.clear()
}

// read is an entity's open version, from the cache, the open batch or the
// database. The caller holds st.mu.
func (st *Store) read(typ, id string) (*change, error) {
	k := key{typ, id}
	if c, ok := st.cache.get(k); ok {
		return c, nil
	}
	var row *sql.Row
	if st.batch != nil {
		row = st.batch.get.QueryRow(typ, id, int64(open))
	} else {
		row = st.db.QueryRow(`SELECT data, lower FROM entities WHERE type = ? AND id = ? AND upper = ?`, typ, id, int64(open))
	}
	var raw []byte
	var lower int64
	err := row.Scan(&raw, &lower)
	if errors.Is(err, sql.ErrNoRows) {
		st.cache.put(k, &change{})
		return nil, nil
	}
	if err != nil {
		return nil, &Error{err}
	}
	e, err := st.schema.DecodeEntity(typ, raw)
	if err != nil {
		return nil, fmt.Errorf("stored %s[%s]: %w", typ, id, err)
	}
	// An immutable entity has one version, whose lower block is the
	// block it was inserted at; a mutable one's is not checked.
	c := &change{entity: e, inserted: uint64(lower), stored: true, lower: uint64(lower)}
	st.cache.put(k, c)
	return c, nil
}

// cacheSize bounds the entities the writer keeps decoded: enough for the
// entities a stretch of blocks touches again and again (strikes, pools,
// markets, days), and bounded whatever the history's length.
const cacheSize = 50_000

// entityCache keeps the open version of the entities the writer read or
// wrote, so that store.get reads the disk (and decodes) once per entity,
// not once per event. Only the writer changes entities, so an entry stays
// true until a revert, which clears it.
type entityCache struct{ m map[key]*change }

func (c *entityCache) get(k key) (*change, bool) {
	v, ok := c.m[k]
	return v, ok
}

func (c *entityCache) put(k key, v *change) {
	if c.m == nil || len(c.m) >= cacheSize {
		c.m = make(map[key]*change, 1024)
	}
	c.m[k] = v
}

func (c *entityCache) clear() { c.m = nil }

// applyBlock writes one block's changes, its data sources and the pointer
// into the open batch. The caller holds st.mu.
func (st *Store) applyBlock(ctx context.Context, w *Writer, keys []key) error {
	b, err := st.open(ctx)
	if err != nil {
		return err
	}
	n := int64(w.block.Number)
	for _, k := range keys {
		c := w.changes[k]
		// Only an entity the store holds has a version to close: one the
		// block inserts (the cache knew it absent) skips the statement.
		if c.stored {
			if _, err := b.close.ExecContext(ctx, n, k.typ, k.id, int64(c.lower)); err != nil {
				return &Error{err}
			}
		}
		if c.entity != nil {
			raw, err := graphnode.EncodeEntity(c.entity)
			if err != nil {
				return err
			}
			if _, err := b.insert.ExecContext(ctx, k.typ, k.id, n, int64(open), raw); err != nil {
				return &Error{fmt.Errorf("%s[%s] at block %d: %w", k.typ, k.id, n, err)}
			}
		}
		st.cache.put(k, &change{entity: c.entity, inserted: c.inserted, stored: c.entity != nil, lower: w.block.Number})
	}
	for _, d := range w.created {
		if _, err := b.source.ExecContext(ctx, d.Address, d.Name, int64(d.Start)); err != nil {
			return &Error{err}
		}
	}
	return b.stageBlock(ctx, w.block, len(keys) > 0 || len(w.created) > 0)
}

// stageBlock records a block and makes it the pointer the batch commits
// with (written once, at Flush).
func (b *batch) stageBlock(ctx context.Context, blk graphnode.Block, changes bool) error {
	if _, err := b.block.ExecContext(ctx, int64(blk.Number), blk.Hash, blk.ParentHash, int64(blk.Timestamp), flag(changes)); err != nil {
		return &Error{err}
	}
	b.last = &blk
	return nil
}

// pointer writes the last staged block as the store's pointer.
func (b *batch) pointer(ctx context.Context) error {
	if b.last == nil {
		return nil
	}
	raw, err := json.Marshal(b.last)
	if err != nil {
		return err
	}
	_, err = b.head.ExecContext(ctx, string(raw))
	return err
}
