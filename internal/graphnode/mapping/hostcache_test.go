package mapping

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// An entity comes back with its fields in sorted order whatever fields
// the entities of its type had before (the kept order is not used for
// an entity with other fields, even as many).
func TestKeyOrderFollowsTheFields(t *testing.T) {
	h := &Host{order: map[string][]string{}}
	ent := func(keys ...string) Entity {
		e := Entity{}
		for _, k := range keys {
			e[k] = Value{Kind: KindInt}
		}
		return e
	}
	for _, c := range []struct {
		e    Entity
		want string
	}{
		{ent("id", "b", "a"), "a b id"},
		{ent("b", "a", "id"), "a b id"},
		{ent("id", "c", "a"), "a c id"},
		{ent("id", "c", "a", "zz"), "a c id zz"},
		{ent("id"), "id"},
		{ent(), ""},
		{ent("a", "c", "id"), "a c id"},
	} {
		if got := strings.Join(h.keyOrder("T", c.e), " "); got != c.want {
			t.Errorf("keyOrder(%v) = %q, want %q", c.e, got, c.want)
		}
	}
}

// readName reads what readString reads: ASCII or not, short or long, a
// name read again at its address is the same string, and a name's
// address holding other bytes since (a mapping wrote there, or another
// string was made there) reads those.
func TestReadCachedStringAsReadString(t *testing.T) {
	m := loadModule(t, "store", nil)
	h := m.h
	if err := h.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer h.release()
	names := []string{"", "id", "Strike", "prix €", "𝔘niswap", strings.Repeat("x", 300)}
	for i := 0; i < 600; i++ {
		names = append(names, fmt.Sprintf("field%d", i))
	}
	var ptrs []uint32
	for _, s := range names {
		p := h.heap.newString(s)
		ptrs = append(ptrs, p)
		if got, want := h.heap.readCachedString(p), h.heap.readString(p); got != want || got != s {
			t.Fatalf("readName %q, readString %q, wrote %q", got, want, s)
		}
	}
	written := strings.Clone("Position:0xabc")
	if got := h.heap.readCachedString(h.heap.newString(written)); unsafe.StringData(got) != unsafe.StringData(written) {
		t.Error("a string the host wrote is read back as a copy")
	}
	// ptrs[1] ("id") is cached unless a later name took its slot
	p := ptrs[1]
	a, b := h.heap.readCachedString(p), h.heap.readCachedString(p)
	if a != "id" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("a name read twice at its address is two strings")
	}
	raw := h.heap.view(p, 4)
	for _, c := range []struct {
		bytes string
		want  string
	}{{"i\x00e\x00", "ie"}, {"i\x00\x00\x01", "i\u0100"}, {"i\x00d\x00", "id"}} {
		copy(raw, c.bytes)
		if got := h.heap.readCachedString(p); got != c.want {
			t.Errorf("bytes %x at a cached name's address read as %q, want %q", c.bytes, got, c.want)
		}
	}
	// a shorter or longer string at the address
	for _, s := range []string{"i", "idd", "id"} {
		q := h.heap.newString(s)
		binary.LittleEndian.PutUint32(h.heap.view(p-4, 4), uint32(2*len(s)))
		copy(h.heap.view(p, uint32(2*len(s))), h.heap.view(q, uint32(2*len(s))))
		if got := h.heap.readCachedString(p); got != s {
			t.Errorf("%q at a cached name's address read as %q", s, got)
		}
	}
}

// An Array whose length reaches past the module's memory is refused (a
// panic the handler's recover reports) before anything is made for it:
// not a 16 GiB allocation for a length of 2^32-1.
func TestHostileArrayLength(t *testing.T) {
	m := loadModule(t, "store", nil)
	h := m.h
	if err := h.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer h.release()
	for _, n := range []uint32{1 << 30, 0xffffffff, h.heap.mem.Size()} {
		p, b := h.heap.alloc(tidArrayTypedMapEntryStore, 16)
		binary.LittleEndian.PutUint32(b[4:], 64)
		binary.LittleEndian.PutUint32(b[12:], n)
		entity, e := h.heap.alloc(tidTypedMapStore, 4)
		binary.LittleEndian.PutUint32(e, p)
		for name, read := range map[string]func(){"readPtrArray": func() { h.heap.readPtrArray(p) }, "readEntity": func() { h.readEntity(entity) }} {
			func() {
				defer func() {
					if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "outside memory") {
						t.Errorf("%s of %d elements: %v", name, n, r)
					}
				}()
				read()
			}()
		}
	}
}
