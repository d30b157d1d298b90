package sqlstore

import (
	"context"
	"strconv"
)

// retention is how much history the store keeps (Graph Node's
// history_blocks, its `prune` setting): the versions that ended at or
// before head - blocks are deleted as the head moves, and a query at a
// block older than the last cut is refused, naming the oldest block
// served. 0 keeps every version.
type retention struct {
	blocks uint64
	// cut is the last block pruned to (loaded from meta at the first
	// prune): the oldest block whose state the store holds.
	cut    uint64
	loaded bool
}

// MinHistory is the least history a store may keep: the blocks below the
// head the indexer checks reorgs against (a revert to a block needs the
// versions valid there).
const MinHistory = 10_000

// SetHistory sets how many blocks below the head the store keeps the
// state of (0: all). The pruning runs with the writes (Flush), once the
// head has moved a sixteenth of it since the last, so its cost is spread
// and small; the store then serves blocks from head - blocks, or a little
// older, up to the head.
func (st *Store) SetHistory(blocks uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.retain.blocks = blocks
}

// Earliest is the oldest block whose state the store holds (0: every
// block it indexed).
func (st *Store) Earliest(ctx context.Context) (uint64, error) {
	return earliest(ctx, st.db)
}

// prune deletes, in the batch about to commit, the versions that ended
// at or before head - blocks and the blocks below it, gives the pages
// freed back to the file system, and records the cut as the oldest block
// served. The caller holds st.mu.
func (b *batch) prune(ctx context.Context, st *Store) error {
	r := &st.retain
	// held.cut: the batch dropped versions ended at or below it
	// (held.go), which only a cut at least as high keeps out of view
	cut := b.held.cut
	if b.last != nil && r.blocks > 0 && b.last.Number > r.blocks {
		cut = max(cut, b.last.Number-r.blocks)
	}
	if cut == 0 {
		return nil
	}
	if !r.loaded {
		was, err := earliest(ctx, b.tx)
		if err != nil {
			return err
		}
		r.cut, r.loaded = was, true
	}
	if cut <= r.cut || (b.held.cut == 0 && cut < r.cut+r.blocks/16+1) {
		return nil
	}
	var qs []string
	for _, name := range st.schema.TypeNames() {
		if tb := st.tables[name]; !tb.typ.Immutable {
			qs = append(qs, `DELETE FROM `+tb.name+` WHERE upper <= ?`)
		}
	}
	qs = append(qs, `DELETE FROM blocks WHERE number < ?`)
	for _, q := range qs {
		if _, err := b.tx.ExecContext(ctx, q, int64(cut)); err != nil {
			return err
		}
	}
	if _, err := b.tx.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return err
	}
	if _, err := b.tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('earliest', ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, strconv.FormatUint(cut, 10)); err != nil {
		return err
	}
	r.cut = cut
	return nil
}
