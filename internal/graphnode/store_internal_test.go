package graphnode

import (
	"math/big"
	"testing"
)

// damage overwrites the field count of id's newest encoding with one the
// type cannot have, as a bug in the store's writes would.
func damage(s *Store, typ, id string) {
	h := s.entities[typ]
	en := h.ids[h.find(id)]
	h.arena[h.versions[en.last-1].data.off] = 0x7f
}

// A damaged encoding is the store's failure, not an absent entity: Read
// says so (At and Get still read it as absent, as documented).
func TestReadReportsADamagedEntity(t *testing.T) {
	s := newHeldStore(t)
	if err := s.Set("Pool", "p", pool("p", big.NewInt(7), "x"), 1); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Read("Pool", "p"); err != nil || e["liquidity"].Big.Int64() != 7 {
		t.Fatalf("before damage: %v, %v", e, err)
	}
	damage(s, "Pool", "p")
	if e, err := s.Read("Pool", "p"); err == nil || e != nil {
		t.Fatalf("Read of a damaged entity: %v, %v; want an error", e, err)
	}
	if e, err := s.ReadAt("Pool", "p", 1); err == nil || e != nil {
		t.Fatalf("ReadAt of a damaged entity: %v, %v; want an error", e, err)
	}
	if e, err := s.Read("Pool", "q"); err != nil || e != nil {
		t.Fatalf("Read of an absent entity: %v, %v", e, err)
	}
	if e := s.Get("Pool", "p"); e != nil {
		t.Fatalf("Get of a damaged entity: %v, want nil", e)
	}
	if err := s.Set("Pool", "p", pool("p", big.NewInt(8), ""), 2); err == nil {
		t.Fatal("Set over a damaged entity succeeded")
	}
}
