package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

func schema(t testing.TB) *graphnode.Schema {
	t.Helper()
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openStore(t *testing.T, path, identity string) *Store {
	t.Helper()
	st, _, err := Open(path, schema(t), identity)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// op is one write of a block's history.
type op struct {
	typ, id string
	e       graphnode.Entity // nil: remove
}

func pool(id string, price, tick int64) op {
	return op{"Pool", id, graphnode.Entity{
		"id": graphnode.String(id), "sqrtPriceX96": {Kind: graphnode.KindBigInt, Big: big.NewInt(price)},
		"tick": {Kind: graphnode.KindInt, Int: tick},
	}}
}

func ref(id, strike string) op {
	return op{"StrikeRef", id, graphnode.Entity{"id": graphnode.String(id), "strike": graphnode.String(strike)}}
}

// history is blocks 10 to 15: inserts, updates within and across blocks,
// a removal and an immutable entity.
func history() map[uint64][]op {
	return map[uint64][]op{
		10: {pool("0xa", 1, 1), ref("r1", "s1")},
		11: {pool("0xa", 2, 2), pool("0xa", 3, 3), pool("0xb", 7, 7)},
		12: {},
		13: {pool("0xb", 8, 8), {typ: "Pool", id: "0xa"}},
		14: {pool("0xa", 9, 9), ref("r2", "s2")},
		15: {pool("0xb", 10, 10)},
	}
}

func blockOf(n uint64, fork string) graphnode.Block {
	return graphnode.Block{Number: n, Hash: fmt.Sprintf("0x%s%062x", fork, n), ParentHash: fmt.Sprintf("0x%s%062x", fork, n-1), Timestamp: 1_700_000_000 + n*12}
}

// write indexes blocks from..to of h into both stores.
func write(t *testing.T, disk *Store, mem *graphnode.Store, h map[uint64][]op, from, to uint64, fork string) {
	t.Helper()
	ctx := context.Background()
	for n := from; n <= to; n++ {
		b := blockOf(n, fork)
		w := disk.Begin(b)
		for _, o := range h[n] {
			var errDisk, errMem error
			if o.e == nil {
				errDisk, errMem = w.Remove(o.typ, o.id, n), mem.Remove(o.typ, o.id, n)
			} else {
				errDisk, errMem = w.Set(o.typ, o.id, o.e, n), mem.Set(o.typ, o.id, o.e, n)
			}
			if errDisk != nil || errMem != nil {
				t.Fatalf("block %d %s[%s]: disk %v, memory %v", n, o.typ, o.id, errDisk, errMem)
			}
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		mem.SetHead(b)
	}
}

// queries read the head, earlier blocks by number and hash, and _meta.
var queries = []string{
	`{ pools(orderBy: id) { id sqrtPriceX96 tick } strikeRefs { id strike } _meta { block { number hash timestamp } hasIndexingErrors } }`,
	`{ pools(block: {number: 11}) { id sqrtPriceX96 } _meta(block: {number: 11}) { block { number } } }`,
	`{ pools(block: {number: 13}) { id sqrtPriceX96 } pool(id: "0xa", block: {number: 12}) { tick } }`,
	`{ pools(block: {hash: "` + blockOf(14, "a").Hash + `"}) { id tick } _meta(block: {hash: "` + blockOf(14, "a").Hash + `"}) { block { number hash parentHash timestamp } } }`,
	`{ pools(where: {_change_block: {number_gte: 14}}) { id } }`,
	`{ pools(block: {number: 99}) { id } }`,
}

func answers(t *testing.T, q graphnode.Querier) []string {
	t.Helper()
	var out []string
	for _, query := range queries {
		b, err := json.Marshal(q.QueryContext(context.Background(), graphnode.Request{Query: query}))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s, query %d:\n disk   %s\n memory %s", what, i, got[i], want[i])
		}
	}
}

// The disk store answers every query as the emulator's in-memory store
// does over the same writes, at the head and at earlier blocks, and after
// a reopen.
func TestDiskAnswersAsMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	disk := openStore(t, path, "build-1")
	mem := graphnode.NewStore(schema(t))
	write(t, disk, mem, history(), 10, 15, "a")
	same(t, "after indexing", answers(t, disk), answers(t, mem))
	if err := disk.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := openStore(t, path, "build-1")
	if h, ok, err := reopened.Head(context.Background()); err != nil || !ok || h != blockOf(15, "a") {
		t.Fatalf("head after reopen %+v %v %v", h, ok, err)
	}
	same(t, "after reopening", answers(t, reopened), answers(t, mem))
}

// A revert to a block leaves the store as if only the blocks up to it had
// been indexed; the other branch indexed after it gives the same store as
// that branch indexed alone.
func TestRevertEqualsFreshIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	disk := openStore(t, filepath.Join(dir, "a.sqlite"), "b")
	write(t, disk, graphnode.NewStore(schema(t)), history(), 10, 15, "a")
	if err := disk.Revert(ctx, 12); err != nil {
		t.Fatal(err)
	}
	other := history()
	other[13] = []op{pool("0xb", 80, 80), ref("r9", "s9")}
	other[14] = []op{{typ: "Pool", id: "0xb"}}
	delete(other, 15)
	mem := graphnode.NewStore(schema(t))
	write(t, disk, graphnode.NewStore(schema(t)), other, 13, 14, "b")
	fresh := openStore(t, filepath.Join(dir, "b.sqlite"), "b")
	write(t, fresh, mem, history(), 10, 12, "a")
	write(t, fresh, mem, other, 13, 14, "b")
	got, err := disk.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the reorg\n %v\nfresh\n %v", got, want)
	}
	same(t, "after the reorg", answers(t, disk), answers(t, mem))
	// The orphaned block's hash answers nothing any more.
	r := disk.Query(graphnode.Request{Query: `{ pools(block: {hash: "` + blockOf(14, "a").Hash + `"}) { id } }`})
	if len(r.Errors) == 0 {
		t.Errorf("a query pinned to an orphaned block answered %+v", r.Data)
	}
}

// The store refuses what Graph Node's store.set refuses, and a store
// written by another build of the subgraph starts empty.
func TestWriterChecksAndIdentity(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.sqlite")
	st := openStore(t, path, "one")
	write(t, st, graphnode.NewStore(schema(t)), history(), 10, 11, "a")
	w := st.Begin(blockOf(12, "a"))
	if err := w.Set("StrikeRef", "r1", ref("r1", "s2").e, 12); err == nil {
		t.Error("an immutable entity changed in a later block")
	}
	if err := w.Remove("StrikeRef", "r1", 12); err == nil {
		t.Error("an immutable entity was removed")
	}
	if err := w.Set("Pool", "0xc", graphnode.Entity{"id": graphnode.String("0xc")}, 12); err == nil {
		t.Error("an entity without its required fields was stored")
	}
	_ = st.Close()
	again, reset, err := Open(path, schema(t), "two")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, ok, _ := again.Head(ctx); ok || !reset {
		t.Errorf("a store of another build kept its head (reset %v)", reset)
	}
}

// Prune forgets the blocks below a height that changed nothing, but keeps
// those with changes and the pointer.
func TestPruneKeepsBlocksWithChanges(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	write(t, st, graphnode.NewStore(schema(t)), history(), 10, 15, "a")
	if err := st.Prune(ctx, 15); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[uint64]bool{10: true, 11: true, 12: false, 13: true, 14: true, 15: true} {
		if _, ok, err := st.Block(ctx, n); err != nil || ok != want {
			t.Errorf("block %d kept %v, want %v (%v)", n, ok, want, err)
		}
	}
}

// With a retention, the versions that ended before head - history are
// deleted as the head moves; a query at a block the store still holds
// answers as the emulator does, and one at an older block is refused,
// naming the oldest block served.
func TestRetentionPrunesAndRefusesOlderPins(t *testing.T) {
	ctx := context.Background()
	disk := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	disk.SetHistory(2)
	mem := graphnode.NewStore(schema(t))
	write(t, disk, mem, history(), 10, 15, "a")
	if e, err := disk.Earliest(ctx); err != nil || e != 13 {
		t.Fatalf("earliest %d %v, want 13", e, err)
	}
	vs, err := disk.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Upper != 0 && v.Upper <= 13 {
			t.Errorf("version %+v ended before the oldest block kept", v)
		}
	}
	for _, n := range []int{13, 14, 15} {
		q := fmt.Sprintf(`{ pools(block: {number: %d}) { id sqrtPriceX96 } strikeRefs(block: {number: %d}) { id } }`, n, n)
		if d, m := answer(t, disk, q), answer(t, mem, q); d != m {
			t.Errorf("at block %d:\n disk   %s\n memory %s", n, d, m)
		}
	}
	r := disk.Query(graphnode.Request{Query: `{ pools(block: {number: 12}) { id } }`})
	want := "Failed to decode `block.number` value: `subgraph " + graphnode.Deployment + " only has data starting at block number 13 and data for block number 12 is therefore not available`"
	if len(r.Errors) != 1 || r.Errors[0].Message != want {
		t.Errorf("a pin below the oldest block kept answered %+v", r)
	}
}

// The pages the retention frees go back to the file system: the file
// holds what is kept, not the history's high-water mark.
func TestPrunedPagesGoBack(t *testing.T) {
	disk := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	disk.SetHistory(16)
	var empty int
	if err := disk.db.QueryRow(`PRAGMA page_count`).Scan(&empty); err != nil {
		t.Fatal(err)
	}
	h := map[uint64][]op{}
	for n := uint64(1); n <= 300; n++ {
		for i := int64(0); i < 20; i++ {
			h[n] = append(h[n], pool(fmt.Sprintf("0x%040x", i), int64(n)*1_000_000_007, i))
		}
	}
	write(t, disk, graphnode.NewStore(schema(t)), h, 1, 300, "a")
	var free, pages int
	if err := disk.db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil {
		t.Fatal(err)
	}
	if err := disk.db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if free != 0 || pages > empty+20 {
		t.Errorf("%d pages (%d empty), %d of them free, after 6,000 versions of which 340 are kept", pages, empty, free)
	}
}
