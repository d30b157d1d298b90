package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// The filter never calls an entity it was told of absent, across the
// layers it grows, and calls nearly all others absent.
func TestKnownNeverForgets(t *testing.T) {
	f := newKnown()
	const n = 300_000 // past the first layers (65,536, then 131,072)
	for i := 0; i < n; i++ {
		f.add(key{"Pool", fmt.Sprintf("0x%x", i)})
	}
	if len(f.layers) < 3 {
		t.Fatalf("%d layers for %d keys", len(f.layers), n)
	}
	for i := 0; i < n; i++ {
		if k := (key{"Pool", fmt.Sprintf("0x%x", i)}); f.absent(k) {
			t.Fatalf("%v added, then called absent", k)
		}
	}
	wrong := 0
	for i := n; i < 2*n; i++ {
		if !f.absent(key{"Pool", fmt.Sprintf("0x%x", i)}) {
			wrong++
		}
	}
	// each layer about 1%, the three checked in turn
	if wrong > n*4/100 {
		t.Errorf("%d of %d keys never added called present", wrong, n)
	}
	var off known
	off.add(key{"Pool", "0x1"})
	if off.absent(key{"Pool", "0x2"}) {
		t.Error("an incomplete filter called an entity absent")
	}
}

// A store opened with entities in it, or reset, reads what it holds: the
// filter only answers for a store that was empty when opened or reset.
func TestReadsAfterReopenAndReset(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.sqlite")
	st := openStore(t, path, "b")
	if !st.known.complete {
		t.Fatal("a new store's filter is not complete")
	}
	write(t, st, graphnode.NewStore(schema(t)), history(), 10, 15, "a")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again := openStore(t, path, "b")
	if again.known.complete {
		t.Fatal("a store opened with entities in it trusts an empty filter")
	}
	w := again.Begin(blockOf(16, "a"))
	for _, id := range []string{"0xa", "0xb"} {
		if e, err := w.Get("Pool", id); e == nil || err != nil {
			t.Errorf("Pool %s not read after a reopen (%v)", id, err)
		}
	}
	if err := again.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if !again.known.complete {
		t.Error("a reset store's filter is not complete")
	}
	write(t, again, graphnode.NewStore(schema(t)), history(), 10, 11, "a")
	again.cache.clear()
	w = again.Begin(blockOf(12, "a"))
	if e, err := w.Get("Pool", "0xb"); e == nil || err != nil {
		t.Errorf("Pool 0xb written after the reset not read (%v)", err)
	}
	if e, err := w.Get("Pool", "0xc"); e != nil || err != nil {
		t.Errorf("Pool 0xc never written read as %v (%v)", e, err)
	}
}
