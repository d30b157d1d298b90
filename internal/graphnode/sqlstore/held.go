package sqlstore

import (
	"context"
	"fmt"
	"sort"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// A backfill far below the head writes a batch (three seconds of blocks:
// millions of them on Arbitrum) in one transaction, and most versions of
// a mutable entity it writes (a strike's, a day's, a user's position) are
// closed again later in the same batch more than the retention's history
// below its last block: the prune at the batch's commit deletes them.
// Writing each (its row and an entry in every index; its close, which
// moves it out of the open versions' indexes; the prune's delete) was
// most of the store's work. So a batch that follows one longer than the
// history (a backfill's; near the head batches are a block or a range and
// write as they come) holds the versions of mutable entities it opens
// instead of writing them: a version closed while held is dropped once it
// ends history blocks below the block being written (the prune that
// commits with the batch then cuts at or above it, so no block the store
// serves could see it), as are the block rows below that cut; the rest
// are written at the batch's commit, a closed version as one row (no
// close). Immutable entities, never closed, are written at once.
//
// What a query sees is unchanged: queries read committed state only, and
// the batch commits its held versions, its pointer and its prune in one
// transaction. The writer's own reads (store.get of an entity that left
// the cache) look at the held versions before the database. Versions are
// written in the order of the block they start at, so a table's rows stay
// in block order by vid (a revert deletes a suffix of vid); when more than
// heldMax versions and blocks are held the older half is written
// (spillOld), which bounds the memory held whatever the batch's length.
// The commit writes what is kept where it used to prune what was not: a
// Flush keeps its caller no longer (BenchmarkBackfillWrites' flush-ms).
type held struct {
	// on says the batch holds (Store.span): off, everything is written
	// as it comes (a batch shorter than the history would drop nothing).
	on bool
	// open are the versions opened in the batch and not written, by
	// entity; closed those of them closed since, in the order closed
	// (that is, by upper). Both slices lose their front as it expires
	// (resliced, not copied: append moves what is left when it grows).
	open   map[key]*heldVersion
	closed []*heldVersion
	// cut is the highest block a closed version was dropped at or below
	// (0: none): the batch's commit must then prune at least to it
	// (retention.go), whatever the prune's cadence.
	cut uint64
	// blocks are the block rows staged and not written, in order: the
	// prune deletes those below its cut too.
	blocks []heldBlock
}

// heldBlock is a block row not written.
type heldBlock struct {
	b       graphnode.Block
	changes bool
}

// heldVersion is one version not written: the entity's change (its
// entity and the block it was inserted at) and its range; upper 0 is open.
type heldVersion struct {
	k            key
	c            *change
	lower, upper uint64
}

// heldMax bounds the versions a batch holds (open and closed): a few
// kilobytes each decoded, the entities mostly shared with the cache.
var heldMax = 16_384

func (h *held) size() int { return len(h.open) + len(h.closed) + len(h.blocks) }

// hold opens an entity's version at block n, not written.
func (h *held) hold(k key, c *change, n uint64) {
	if h.open == nil {
		h.open = map[key]*heldVersion{}
	}
	h.open[k] = &heldVersion{k: k, c: &change{entity: c.entity, inserted: c.inserted, stored: true, lower: n}, lower: n}
}

// close ends the entity's held open version at block n; false if the
// entity has none (its open version, if any, is in the database).
func (h *held) close(k key, n uint64) bool {
	v, ok := h.open[k]
	if !ok {
		return false
	}
	delete(h.open, k)
	v.upper = n
	h.closed = append(h.closed, v)
	return true
}

// expire drops the closed versions that end at or before cut, and the
// block rows below it.
func (h *held) expire(cut uint64) {
	i := 0
	for i < len(h.closed) && h.closed[i].upper <= cut {
		h.closed[i] = nil
		i++
	}
	j := 0
	for j < len(h.blocks) && h.blocks[j].b.Number < cut {
		h.blocks[j] = heldBlock{}
		j++
	}
	if i > 0 || j > 0 {
		h.closed, h.blocks = h.closed[i:], h.blocks[j:]
		h.cut = max(h.cut, cut)
	}
}

// versions are the held versions in the order they are written: by the
// block they start at, then by entity.
func (h *held) versions() []*heldVersion {
	out := make([]*heldVersion, 0, len(h.open)+len(h.closed))
	out = append(out, h.closed...)
	for _, v := range h.open {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.lower != b.lower {
			return a.lower < b.lower
		}
		if a.k.typ != b.k.typ {
			return a.k.typ < b.k.typ
		}
		return a.k.id < b.k.id
	})
	return out
}

// spill writes every held version into the batch: their open versions
// are then the database's, which a later write closes there.
func (b *batch) spill(ctx context.Context, st *Store) error {
	for _, v := range b.held.versions() {
		if err := b.insert(ctx, st.tables[v.k.typ], v); err != nil {
			return err
		}
	}
	for _, r := range b.held.blocks {
		if err := b.writeBlock(ctx, r.b, r.changes); err != nil {
			return err
		}
	}
	b.held.open, b.held.closed, b.held.blocks = nil, nil, nil
	return nil
}

// spillOld writes the older half of what the batch holds (by the block
// a version starts at, all of the last block's), for a batch that holds
// more than heldMax: what it writes starts at or before a block and what
// it keeps after it, so a table's rows stay in block order, and the
// versions it keeps, the newest, are those a later block most likely
// closes and drops. (Spilling all, as first done, wrote at 1/10 scale
// 1.1 s of versions a three-second batch would mostly have dropped.)
func (b *batch) spillOld(ctx context.Context, st *Store) error {
	vs := b.held.versions()
	i := len(vs) / 2
	for i > 0 && i < len(vs) && vs[i].lower == vs[i-1].lower {
		i++
	}
	if i == 0 {
		return b.spill(ctx, st)
	}
	upto := vs[i-1].lower
	for _, v := range vs[:i] {
		if err := b.insert(ctx, st.tables[v.k.typ], v); err != nil {
			return err
		}
		if v.upper == 0 {
			delete(b.held.open, v.k)
		}
	}
	var closed []*heldVersion
	for _, v := range b.held.closed {
		if v.lower > upto {
			closed = append(closed, v)
		}
	}
	var blocks []heldBlock
	for _, r := range b.held.blocks {
		if r.b.Number > upto {
			blocks = append(blocks, r)
		} else if err := b.writeBlock(ctx, r.b, r.changes); err != nil {
			return err
		}
	}
	b.held.closed, b.held.blocks = closed, blocks
	return nil
}

// insert writes one version of an entity of tb into the batch.
func (b *batch) insert(ctx context.Context, tb *table, v *heldVersion) error {
	ts, err := b.statements(ctx, tb)
	if err != nil {
		return err
	}
	args, err := tb.insertArgs(v.k.id, v.lower, v.upper, v.c.entity)
	if err != nil {
		return fmt.Errorf("%s[%s] at block %d: %w", tb.typ.Name, v.k.id, v.lower, err)
	}
	if _, err := ts.insert.ExecContext(ctx, args...); err != nil {
		return &Error{fmt.Errorf("%s[%s] at block %d: %w", tb.typ.Name, v.k.id, v.lower, err)}
	}
	return nil
}

// expire drops what the batch holds that ended at or before the cut the
// retention keeps when the writer is at block n: the commit's prune cuts
// at its last block less history, at or above it.
func (b *batch) expire(st *Store, n uint64) {
	if r := st.retain.blocks; r > 0 && n > r {
		b.held.expire(n - r)
	}
}
