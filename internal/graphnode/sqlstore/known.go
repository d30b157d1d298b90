package sqlstore

import (
	"context"
	"hash/maphash"
)

// Nearly every store.get that misses the writer's cache during a backfill
// asks for an entity that does not exist yet (an event's record, a new
// position, a new day: at 1/40 of Arbitrum's history all 26,866 did), and
// each cost a query on the goroutine that runs the mappings. known is a
// Bloom filter of every entity the writer has staged since the store was
// empty: while it is complete (the store held no entity when opened or
// reset, so every entity in it went through stage), an entity it has not
// seen is absent without a query. A false positive (about 1%) only costs
// the query; an entity a revert or a discarded batch took back stays in
// the filter, which is never wrong that way. A store opened with entities
// in it asks the database, as before.
type known struct {
	complete bool
	seed     maphash.Seed
	layers   []bloom
}

// bloom is one layer: m bits, k = 7 probes, filled to at most cap keys
// (10 bits a key: about 1% false positives); a full layer is followed by
// one twice its size, so the filter grows with the store.
type bloom struct {
	bits []uint64
	n    int
	cap  int
}

const bloomProbes = 7

func newKnown() known {
	return known{complete: true, seed: maphash.MakeSeed()}
}

func (f *known) hash(k key) uint64 {
	var h maphash.Hash
	h.SetSeed(f.seed)
	h.WriteString(k.typ)
	h.WriteByte(0)
	h.WriteString(k.id)
	return h.Sum64()
}

// add records that entity k may exist.
func (f *known) add(k key) {
	if !f.complete {
		return
	}
	if len(f.layers) == 0 || f.layers[len(f.layers)-1].n >= f.layers[len(f.layers)-1].cap {
		c := 1 << 16
		if len(f.layers) > 0 {
			c = 2 * f.layers[len(f.layers)-1].cap
		}
		f.layers = append(f.layers, bloom{bits: make([]uint64, c*10/64+1), cap: c})
	}
	l := &f.layers[len(f.layers)-1]
	l.n++
	h := f.hash(k)
	m := uint64(len(l.bits) * 64)
	for i, a, b := 0, h, h>>32|h<<32; i < bloomProbes; i++ {
		p := (a + uint64(i)*b) % m
		l.bits[p/64] |= 1 << (p % 64)
	}
}

// absent says entity k certainly does not exist.
func (f *known) absent(k key) bool {
	if !f.complete {
		return false
	}
	h := f.hash(k)
	for li := range f.layers {
		l := &f.layers[li]
		m := uint64(len(l.bits) * 64)
		in := true
		for i, a, b := 0, h, h>>32|h<<32; i < bloomProbes && in; i++ {
			p := (a + uint64(i)*b) % m
			in = l.bits[p/64]&(1<<(p%64)) != 0
		}
		if in {
			return false
		}
	}
	return true
}

// empty says the store holds no entity (the filter then starts complete).
func (st *Store) empty(ctx context.Context) (bool, error) {
	for _, name := range st.schema.TypeNames() {
		var found int
		err := st.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+st.tables[name].name+`)`).Scan(&found)
		if err != nil || found != 0 {
			return false, err
		}
	}
	return true, nil
}
