package mapping

import (
	"context"
	"encoding/binary"
	"testing"
	"unicode/utf16"
)

// Strings cross into the module as UTF-16LE, ASCII or not.
func TestStringsRoundTrip(t *testing.T) {
	c := newChain(t, nil)
	h := c.hosts["HandlerV2_uniswap"]
	if err := h.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer h.release()
	for _, s := range []string{"", "Strike", "0xabc-12", "prix €", "𝔘niswap", "a\u00ffb"} {
		p := h.heap.newString(s)
		want := utf16.Encode([]rune(s))
		raw := h.heap.bytesAt(p, h.heap.rtSize(p))
		if len(raw) != 2*len(want) {
			t.Errorf("%q: %d bytes, want %d", s, len(raw), 2*len(want))
			continue
		}
		for i, u := range want {
			if got := binary.LittleEndian.Uint16(raw[2*i:]); got != u {
				t.Errorf("%q: code unit %d is %#x, want %#x", s, i, got, u)
			}
		}
		if got := h.heap.readString(p); got != s {
			t.Errorf("read back %q, wrote %q", got, s)
		}
	}
}
