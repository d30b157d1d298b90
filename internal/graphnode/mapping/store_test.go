package mapping

import (
	"math/big"
	"strings"
	"testing"
)

// The host's store enforces what Graph Node enforces on store.set.
func TestStoreChecksLikeGraphNode(t *testing.T) {
	s := newStore(t)
	ref := Entity{"id": {Kind: KindString, Str: "h-1"}, "strike": {Kind: KindString, Str: "s"}}
	if err := s.Set("StrikeRef", "h-1", ref, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("StrikeRef", "h-1", ref, 5); err != nil {
		t.Errorf("same block rewrite of an immutable entity: %v", err)
	}
	if err := s.Set("StrikeRef", "h-1", ref, 6); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("later rewrite of an immutable entity: %v", err)
	}
	if err := s.Remove("StrikeRef", "h-1", 6); err == nil {
		t.Error("removed an immutable entity")
	}
	for _, c := range []struct {
		e    Entity
		want string
	}{
		{Entity{"id": {Kind: KindString, Str: "p"}, "sqrtPriceX96": {Kind: KindBigInt, Big: big.NewInt(1)}}, "non-nullable field `tick`"},
		{Entity{"id": {Kind: KindString, Str: "p"}, "sqrtPriceX96": {Kind: KindInt}, "tick": {Kind: KindInt}}, "`sqrtPriceX96` is Int"},
		{Entity{"id": {Kind: KindString, Str: "q"}, "sqrtPriceX96": {Kind: KindBigInt, Big: big.NewInt(1)}, "tick": {Kind: KindInt}}, "conflicts with ID"},
		{Entity{"id": {Kind: KindString, Str: "p"}, "sqrtPriceX96": {Kind: KindBigInt, Big: big.NewInt(1)}, "tick": {Kind: KindInt}, "x": {Kind: KindInt}}, "unknown field `x`"},
	} {
		if err := s.Set("Pool", "p", c.e, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("set %v: err %v, want %q", c.e, err, c.want)
		}
	}
	if err := s.Set("Nope", "x", Entity{}, 1); err == nil {
		t.Error("unknown entity type accepted")
	}
}

// BigInt bytes are num-bigint's signed little-endian form.
func TestSignedLittleEndian(t *testing.T) {
	for _, c := range []struct {
		x    int64
		want []byte
	}{{0, []byte{0}}, {1, []byte{1}}, {127, []byte{127}}, {128, []byte{128, 0}}, {-1, []byte{0xff}}, {-128, []byte{0x80}}, {-129, []byte{0x7f, 0xff}}, {256, []byte{0, 1}}} {
		got := signedLE(big.NewInt(c.x))
		if string(got) != string(c.want) {
			t.Errorf("signedLE(%d) = %x, want %x", c.x, got, c.want)
		}
		if back := fromSignedLE(got); back.Int64() != c.x {
			t.Errorf("round trip %d -> %s", c.x, back)
		}
	}
}
