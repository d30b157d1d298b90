package sqlstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// stage indexes blocks from..to of h into disk without committing (the
// writer goroutine writes them while the next blocks are indexed), and
// into mem.
func stage(t *testing.T, disk *Store, mem *graphnode.Store, h map[uint64][]op, from, to uint64) {
	t.Helper()
	for n := from; n <= to; n++ {
		b := blockOf(n, "a")
		w := disk.Begin(b)
		for _, o := range h[n] {
			var err error
			if o.e == nil {
				err = w.Remove(o.typ, o.id, n)
				_ = mem.Remove(o.typ, o.id, n)
			} else {
				err = w.Set(o.typ, o.id, o.e, n)
				_ = mem.Set(o.typ, o.id, o.e, n)
			}
			if err != nil {
				t.Fatalf("block %d %s[%s]: %v", n, o.typ, o.id, err)
			}
		}
		if err := w.Stage(context.Background()); err != nil {
			t.Fatal(err)
		}
		mem.SetHead(b)
	}
}

// Blocks staged one after another, their writes queued to the writer
// goroutine, each see the ones before (an update of an entity a block
// before wrote, a removal of one), and once flushed the store answers as
// the emulator does; blocks staged then discarded leave nothing, not even
// in what the next block reads.
func TestStagedBlocksSeeEachOtherAndDiscardForgets(t *testing.T) {
	ctx := context.Background()
	disk := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	stage(t, disk, graphnode.NewStore(schema(t)), history(), 10, 14)
	disk.Discard()
	if _, ok, err := disk.Head(ctx); ok || err != nil {
		t.Fatalf("a head after the staged blocks were discarded (%v)", err)
	}
	w := disk.Begin(blockOf(10, "a"))
	for _, id := range []string{"0xa", "0xb"} {
		if e, err := w.Get("Pool", id); e != nil || err != nil {
			t.Fatalf("Pool %s read after its block was discarded: %v (%v)", id, e, err)
		}
	}
	mem := graphnode.NewStore(schema(t))
	stage(t, disk, mem, history(), 10, 15)
	if err := disk.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	same(t, "after staging and a flush", answers(t, disk), answers(t, mem))
	// a block staged and committed, then reverted
	stage(t, disk, graphnode.NewStore(schema(t)), map[uint64][]op{16: {pool("0xb", 99, 99)}}, 16, 16)
	if err := disk.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := disk.Revert(ctx, 15); err != nil {
		t.Fatal(err)
	}
	same(t, "after a revert of a staged block", answers(t, disk), answers(t, mem))
}
