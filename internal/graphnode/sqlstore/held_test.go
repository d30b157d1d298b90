package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// churn is blocks 1..to of pools updated every block or two, some
// removed and set again, and an immutable entity now and then.
func churn(to uint64) map[uint64][]op {
	h := map[uint64][]op{}
	for n := uint64(1); n <= to; n++ {
		for i := int64(0); i < 5; i++ {
			id := fmt.Sprintf("0x%02x", i)
			switch {
			case (n+uint64(i))%17 == 0:
				h[n] = append(h[n], op{typ: "Pool", id: id})
			case (n+uint64(i))%(uint64(i)+1) == 0:
				h[n] = append(h[n], pool(id, int64(n*100)+i, int64(n)))
			}
		}
		if n%7 == 0 {
			h[n] = append(h[n], ref(fmt.Sprintf("r%d", n), fmt.Sprintf("s%d", n)))
		}
	}
	return h
}

// index stages blocks from..to of h and flushes every span blocks.
func index(t *testing.T, disk *Store, mem *graphnode.Store, h map[uint64][]op, from, to, span uint64) {
	t.Helper()
	for n := from; n <= to; n += span {
		stage(t, disk, mem, h, n, min(n+span-1, to))
		if err := disk.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// atBlocks compares the disk store's answers with the emulator's at every
// block from the store's oldest to the head.
func atBlocks(t *testing.T, disk *Store, mem *graphnode.Store, head uint64) {
	t.Helper()
	oldest, err := disk.Earliest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for n := max(oldest, 1); n <= head; n++ {
		q := fmt.Sprintf(`{ pools(block: {number: %d}, orderBy: id) { id sqrtPriceX96 tick } strikeRefs(block: {number: %d}, orderBy: id) { id }
			pool(id: "0x03", block: {number: %d}) { tick } _meta(block: {number: %d}) { block { number hash } } }`, n, n, n, n)
		if d, m := answer(t, disk, q), answer(t, mem, q); d != m || strings.Contains(m, `"errors"`) {
			t.Fatalf("at block %d:\n disk   %s\n memory %s", n, d, m)
		}
	}
}

// written is how many rows a table was ever written (vids are given in
// order; the last, an open version, is not deleted) and holds.
func written(t *testing.T, st *Store, typ string) (ever, now int) {
	t.Helper()
	q := `SELECT coalesce(max(vid), 0), count(*) FROM ` + st.tables[typ].name
	if err := st.db.QueryRow(q).Scan(&ever, &now); err != nil {
		t.Fatal(err)
	}
	return ever, now
}

// A batch after one that spanned more than the history holds its
// mutable entities' versions and writes, at its commit, only those the
// retention keeps: the store answers as the emulator at every block it
// serves, and no version was written only to be pruned.
func TestLongBatchesWriteOnlyWhatIsKept(t *testing.T) {
	disk := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	disk.SetHistory(10)
	mem := graphnode.NewStore(schema(t))
	h := churn(200)
	index(t, disk, mem, h, 1, 30, 30)
	ever0, _ := written(t, disk, "Pool")
	index(t, disk, mem, h, 31, 200, 40)
	atBlocks(t, disk, mem, 200)
	oldest, _ := disk.Earliest(context.Background())
	if oldest != 190 {
		t.Errorf("the oldest block kept is %d, want 190 (the last batch's end less the history)", oldest)
	}
	versions := 0
	for n := uint64(31); n <= 200; n++ {
		for _, o := range h[n] {
			if o.typ == "Pool" && o.e != nil {
				versions++
			}
		}
	}
	// a batch of 40 blocks keeps the last 10 blocks' versions and the
	// open ones; the others it never writes
	if ever, _ := written(t, disk, "Pool"); ever-ever0 > versions/2 {
		t.Errorf("the held batches wrote %d of their %d Pool versions: versions written only to be pruned", ever-ever0, versions)
	}
	if _, ok, err := disk.Block(context.Background(), 150); ok || err != nil {
		t.Errorf("a block below the oldest kept was written (%v)", err)
	}
	for _, n := range []uint64{190, 195} {
		if b, ok, err := disk.Block(context.Background(), n); !ok || err != nil || b != blockOf(n, "a") {
			t.Errorf("block %d kept as %+v %v (%v)", n, b, ok, err)
		}
	}
	// versions dropped before the retention is turned off still move
	// the oldest block served past them
	h = churn(290)
	index(t, disk, mem, h, 201, 230, 30)
	stage(t, disk, mem, h, 231, 290)
	disk.drain()
	disk.SetHistory(0)
	if err := disk.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	atBlocks(t, disk, mem, 290)
}

// Held versions written because too many were held (spill) and at the
// commit keep each table's rows in the order of the block they start at
// (what a revert relies on); a revert after them, and the blocks indexed
// again, answer as the emulator does.
func TestHeldVersionsSpillInOrderAndRevert(t *testing.T) {
	was := heldMax
	heldMax = 6
	t.Cleanup(func() { heldMax = was })
	ctx := context.Background()
	disk := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	disk.SetHistory(10)
	h := churn(120)
	index(t, disk, graphnode.NewStore(schema(t)), h, 1, 120, 25)
	var disorder int
	if err := disk.db.QueryRow(`SELECT count(*) FROM "e_Pool" a JOIN "e_Pool" b ON a.vid < b.vid AND a.lower > b.lower`).Scan(&disorder); err != nil || disorder != 0 {
		t.Fatalf("%d pairs of Pool versions written out of block order (%v)", disorder, err)
	}
	if err := disk.Revert(ctx, 113); err != nil {
		t.Fatal(err)
	}
	mem := graphnode.NewStore(schema(t))
	fresh := openStore(t, filepath.Join(t.TempDir(), "f.sqlite"), "b")
	index(t, fresh, mem, h, 1, 113, 113)
	other := churn(130)
	for n := uint64(114); n <= 130; n++ {
		other[n] = append(other[n], pool("0x09", int64(n), 9))
	}
	index(t, disk, graphnode.NewStore(schema(t)), other, 114, 130, 25)
	index(t, fresh, mem, other, 114, 130, 25)
	atBlocks(t, disk, mem, 130)
}

// The writer's own reads (store.get) see a held version even once the
// entity has left the cache: the database's open version is an older one.
func TestReadsSeeHeldVersions(t *testing.T) {
	ctx := context.Background()
	disk := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	disk.SetHistory(10)
	h := churn(60)
	index(t, disk, graphnode.NewStore(schema(t)), h, 1, 30, 30)
	stage(t, disk, graphnode.NewStore(schema(t)), h, 31, 60)
	disk.drain()
	disk.mu.Lock()
	held := len(disk.batch.held.open)
	disk.cache.clear()
	disk.mu.Unlock()
	if held == 0 {
		t.Fatal("a batch after one longer than the history holds nothing")
	}
	fresh := openStore(t, filepath.Join(t.TempDir(), "f.sqlite"), "b")
	write(t, fresh, graphnode.NewStore(schema(t)), h, 1, 60, "a")
	got, want := disk.Begin(blockOf(61, "a")), fresh.Begin(blockOf(61, "a"))
	for i := 0; i < 5; i++ {
		id := fmt.Sprintf("0x%02x", i)
		g, errG := got.Get("Pool", id)
		w, errW := want.Get("Pool", id)
		if errG != nil || errW != nil || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("Pool %s read as %v (%v), want %v (%v)", id, g, errG, w, errW)
		}
	}
	if err := disk.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
