package graphnode

import (
	"bytes"
	"fmt"
	"math/big"
	"testing"
)

const heldSchema = `
type Pool @entity {
  id: ID!
  liquidity: BigInt!
  name: String
}
`

func newHeldStore(t *testing.T) *Store {
	t.Helper()
	s, err := ParseSchema(heldSchema)
	if err != nil {
		t.Fatal(err)
	}
	return NewStore(s)
}

func pool(id string, liquidity *big.Int, name string) Entity {
	e := Entity{"id": {Kind: KindString, Str: id}, "liquidity": {Kind: KindBigInt, Big: liquidity}}
	if name != "" {
		e["name"] = Value{Kind: KindString, Str: name}
	}
	return e
}

// live is the bytes an arena must hold: every id and every kept version's
// encoding, each encoded anew from what the store reads back.
func live(t *testing.T, s *Store, typ string) int {
	t.Helper()
	h := s.entities[typ]
	n := 0
	for _, en := range h.ids {
		n += int(en.id.n)
		for i := en.last; i != 0; i = h.versions[i-1].prev {
			if h.versions[i-1].removed {
				continue
			}
			e, _, err := h.decodeVersion(int(i - 1))
			if err != nil {
				t.Fatal(err)
			}
			b, err := encodeEntity(h.t, e)
			if err != nil {
				t.Fatal(err)
			}
			n += len(b)
		}
	}
	return n
}

func saved(t *testing.T, s *Store) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.Save(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The reviewer's reproduction: 1,000 Sets of one entity in one block
// leave one version, and the arena holds its id and that version's
// encoding, not every encoding written (8,937 bytes before the fix).
func TestHeldRewriteInOneBlockReusesItsBytes(t *testing.T) {
	s := newHeldStore(t)
	for i := range 1000 {
		if err := s.Set("Pool", "p", pool("p", big.NewInt(int64(i%100)), ""), 5); err != nil {
			t.Fatal(err)
		}
	}
	h := s.entities["Pool"]
	if len(h.versions) != 1 {
		t.Fatalf("%d versions, want 1", len(h.versions))
	}
	if got, want := len(h.arena), live(t, s, "Pool"); got != want {
		t.Fatalf("arena %d bytes for %d live", got, want)
	}
	if got := s.Get("Pool", "p")["liquidity"].Big; got.Int64() != 99 {
		t.Fatalf("liquidity %v, want 99", got)
	}
}

// Rewrites that grow, shrink and remove, of entities that take turns so
// that none is the arena's tail when written again, with versions of
// earlier blocks kept: the arena stays under twice the live bytes, and the
// store reads as one that was written each version once.
func TestHeldRewritesKeepArenaNearLiveBytes(t *testing.T) {
	s, want := newHeldStore(t), newHeldStore(t)
	ids := []string{"a", "b", "c"}
	final := map[string]Entity{}
	for block := uint64(1); block <= 3; block++ {
		for round := range 400 {
			for k, id := range ids {
				var e Entity
				switch {
				case k == 2 && round%7 == 3 && block > 1:
					e = nil // removed, then written again
				case round%5 == 4:
					e = pool(id, big.NewInt(int64(round)), "") // shrinks
				default:
					x := new(big.Int).Lsh(big.NewInt(int64(round+1)), uint(8*round%300))
					e = pool(id, x, fmt.Sprintf("%s-%d", id, round))
				}
				write(t, s, id, e, block)
				final[id] = e
			}
			if h := s.entities["Pool"]; len(h.arena) > 2*live(t, s, "Pool") {
				t.Fatalf("block %d round %d: arena %d bytes for %d live", block, round, len(h.arena), live(t, s, "Pool"))
			}
		}
		for _, id := range ids {
			write(t, want, id, final[id], block)
		}
	}
	want.SetHead(Block{Number: 3})
	s.SetHead(Block{Number: 3})
	if got, w := saved(t, s), saved(t, want); got != w {
		t.Fatalf("store after rewrites:\n%s\nwant:\n%s", got, w)
	}
}

func write(t *testing.T, s *Store, id string, e Entity, block uint64) {
	t.Helper()
	var err error
	if e == nil {
		err = s.Remove("Pool", id, block)
	} else {
		err = s.put("Pool", id, e, block) // whole, as the final version
	}
	if err != nil {
		t.Fatal(err)
	}
}
