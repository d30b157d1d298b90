package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// batch is the open write transaction several blocks are written in
// during a backfill, with its statements prepared once: a commit per
// block would cost the write-ahead log a write per block. Each block's
// changes and the block pointer still land together (Flush commits them
// all, or a crash none: the store then resumes from the last Flush).
type batch struct {
	tx                  *sql.Tx
	source, head, block *sql.Stmt
	// stmts are each entity table's statements, prepared when first used.
	stmts map[string]*tableStmts
	// last is the last block staged: the pointer Flush writes; first
	// the first.
	last  *graphnode.Block
	first uint64
	// held are the mutable entities' versions not written yet (held.go).
	held held
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
	b := &batch{tx: tx, stmts: map[string]*tableStmts{}}
	b.held.on = st.retain.blocks > 0 && st.span > st.retain.blocks
	for _, p := range []struct {
		stmt **sql.Stmt
		q    string
	}{
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
	st.drain()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.flush()
}

// flush commits the open batch; the caller holds st.mu, the queue
// drained. A failed commit, or a staged write that failed, rolls the batch
// back and forgets what the cache learnt from it.
func (st *Store) flush() error {
	b := st.batch
	if failed := st.writes.failed; failed != nil {
		if b != nil {
			_ = b.tx.Rollback()
		}
		st.batch = nil
		st.forget()
		return failed
	}
	if b == nil {
		return nil
	}
	st.batch = nil
	if b.last != nil {
		st.span = b.last.Number - b.first
		b.expire(st, b.last.Number)
	}
	err := b.spill(context.Background(), st)
	if err == nil {
		err = b.pointer(context.Background())
	}
	if err == nil {
		err = b.prune(context.Background(), st)
	}
	if err != nil {
		_ = b.tx.Rollback()
		st.cache.clear()
		return &Error{err}
	}
	if err := b.tx.Commit(); err != nil {
		st.cache.clear()
		st.retain.loaded = false
		return &Error{err}
	}
	return nil
}

// Discard abandons the blocks written since the last Flush (a block's
// mappings failed after others were written): the store is back at the
// last Flush.
func (st *Store) Discard() {
	st.drain()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.batch != nil {
		_ = st.batch.tx.Rollback()
		st.batch = nil
	}
	st.forget()
}

// tableStmts are the writer's statements on one entity table.
type tableStmts struct{ get, close, insert *sql.Stmt }

// statements are tb's statements in the batch, prepared once.
func (b *batch) statements(ctx context.Context, tb *table) (*tableStmts, error) {
	if ts, ok := b.stmts[tb.name]; ok {
		return ts, nil
	}
	ts := &tableStmts{}
	for _, p := range []struct {
		stmt **sql.Stmt
		q    string
	}{
		{&ts.get, tb.openSQL()},
		{&ts.close, `UPDATE ` + tb.name + ` SET upper = ? WHERE id = ? AND lower = ?`},
		{&ts.insert, tb.insertSQL()},
	} {
		var err error
		if *p.stmt, err = b.tx.PrepareContext(ctx, p.q); err != nil {
			return nil, &Error{err}
		}
	}
	b.stmts[tb.name] = ts
	return ts, nil
}

// read is an entity's open version, from the cache, the open batch or the
// database. The caller holds st.mu.
func (st *Store) read(typ, id string) (*change, error) {
	k := key{typ, id}
	if c, ok := st.writes.pending[k]; ok {
		return c, nil
	}
	if c, ok := st.cache.get(k); ok {
		return c, nil
	}
	tb := st.tables[typ]
	if tb == nil {
		return nil, fmt.Errorf("entity type %s is not in the schema", typ)
	}
	if st.known.absent(k) {
		st.cache.put(k, &change{})
		return nil, nil
	}
	var rows *sql.Rows
	var err error
	if st.batch != nil {
		if v, ok := st.batch.held.open[k]; ok {
			st.cache.put(k, v.c)
			return v.c, nil
		}
		ts, serr := st.batch.statements(context.Background(), tb)
		if serr != nil {
			return nil, serr
		}
		rows, err = ts.get.Query(tb.idArg(id))
	} else {
		rows, err = st.db.Query(tb.openSQL(), tb.idArg(id))
	}
	if err != nil {
		return nil, &Error{err}
	}
	got, err := scanRows(rows, tb)
	if err != nil {
		return nil, &Error{err}
	}
	if len(got) == 0 {
		st.cache.put(k, &change{})
		return nil, nil
	}
	// An immutable entity has one version, whose lower block is the
	// block it was inserted at; a mutable one's is not checked.
	r := got[0]
	c := &change{entity: r.Entity, inserted: r.Changed, stored: true, lower: r.Changed}
	st.cache.put(k, c)
	return c, nil
}

// cacheSize bounds the entities the writer keeps decoded: enough for the
// entities a stretch of blocks touches again and again (strikes, pools,
// markets, days, a position over its few events), and bounded whatever the
// history's length. Each costs a few kilobytes decoded (a map of Values):
// at 50,000, wiped whole when full, the cache was nearly all of a
// backfill's live heap (145 MiB of 215 at 1/10 of Arbitrum's history) for
// no more hits than 16,384 kept by recency give, where a history touches
// most entities (users, their positions, each event's own) once in a while.
const cacheSize = 16_384

// entityCache keeps the open version of the entities the writer read or
// wrote, so that store.get reads the disk (and decodes) once per entity,
// not once per event. Only the writer changes entities, so an entry stays
// true until a revert, which clears it. It holds two generations of up to
// cacheSize/2 each: when the newer fills it becomes the older and the
// older is dropped, and a hit in the older moves the entry to the newer,
// so that what is used again and again stays while what was touched once
// goes.
type entityCache struct{ cur, old map[key]*change }

func (c *entityCache) get(k key) (*change, bool) {
	if v, ok := c.cur[k]; ok {
		return v, true
	}
	v, ok := c.old[k]
	if ok {
		c.put(k, v)
	}
	return v, ok
}

func (c *entityCache) put(k key, v *change) {
	if c.cur == nil || len(c.cur) >= cacheSize/2 {
		c.old, c.cur = c.cur, make(map[key]*change, cacheSize/2)
	}
	c.cur[k] = v
	delete(c.old, k)
}

func (c *entityCache) clear() { c.cur, c.old = nil, nil }

// applyBlock writes one block's changes, its data sources and the pointer
// into the open batch. The caller holds st.mu.
func (st *Store) applyBlock(ctx context.Context, blk graphnode.Block, changes map[key]*change, keys []key, created []DataSource) error {
	b, err := st.open(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.apply(ctx, st.tables[k.typ], k.id, changes[k], blk.Number); err != nil {
			return err
		}
	}
	b.expire(st, blk.Number)
	if b.held.size() > heldMax {
		if err := b.spillOld(ctx, st); err != nil {
			return err
		}
	}
	for _, d := range created {
		if _, err := b.source.ExecContext(ctx, d.Address, d.Name, int64(d.Start)); err != nil {
			return &Error{err}
		}
	}
	return b.stageBlock(ctx, blk, len(keys) > 0 || len(created) > 0)
}

// apply closes an entity's open version at block n and opens the new
// one: a mutable entity's new version is held (held.go), and its version
// before closed where it is, held or in the database.
func (b *batch) apply(ctx context.Context, tb *table, id string, c *change, n uint64) error {
	if tb == nil {
		return fmt.Errorf("entity %s: type not in the schema", id)
	}
	ts, err := b.statements(ctx, tb)
	if err != nil {
		return err
	}
	k := key{tb.typ.Name, id}
	// Only an entity the store holds has a version to close: one the
	// block inserts (the cache knew it absent) skips the statement.
	if c.stored && !b.held.close(k, n) {
		if _, err := ts.close.ExecContext(ctx, int64(n), tb.idArg(id), int64(c.lower)); err != nil {
			return &Error{err}
		}
	}
	switch {
	case c.entity == nil:
		return nil
	case tb.typ.Immutable || !b.held.on:
		return b.insert(ctx, tb, &heldVersion{k: k, c: c, lower: n})
	}
	b.held.hold(k, c, n)
	return nil
}

// stageBlock records a block (held with the versions when the batch
// holds them) and makes it the pointer the batch commits with (written
// once, at Flush).
func (b *batch) stageBlock(ctx context.Context, blk graphnode.Block, changes bool) error {
	if b.last == nil {
		b.first = blk.Number
	}
	b.last = &blk
	if b.held.on {
		b.held.blocks = append(b.held.blocks, heldBlock{blk, changes})
		return nil
	}
	return b.writeBlock(ctx, blk, changes)
}

// writeBlock writes a block's row.
func (b *batch) writeBlock(ctx context.Context, blk graphnode.Block, changes bool) error {
	if _, err := b.block.ExecContext(ctx, int64(blk.Number), blk.Hash, blk.ParentHash, int64(blk.Timestamp), flag(changes)); err != nil {
		return &Error{err}
	}
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
