package graphnode

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/big"
	"slices"
)

// heldType holds every version of every entity of one type as bytes the
// garbage collector never scans: ids and encoded entities back to back in
// one arena, pointer-free entries of offsets into it, and a map from an
// id's hash to its entry (neither key nor value a pointer).
//
// Why not a map of ids to maps of Values: a store is kept for the life of
// whatever serves it (the demo's recorded subgraph, for the whole life of
// the served binary), and an entity as a map of Values is a dozen objects
// (the map, its strings, its big.Ints), each marked on every collection:
// the demo's store was about 9,000. Under a hit-only load each mark phase
// slows the hits beside it (the hit path's p99, BENCHMARKS.md). A query
// decodes the versions it reads, which costs only the reads a cache
// misses.
type heldType struct {
	t        *EntityType
	arena    []byte
	garbage  uint32 // arena bytes no entry refers to (see replace)
	ids      []heldID
	versions []heldVersion
	first    map[uint64]uint32 // id hash -> 1 + index of its first entry
}

// heldID is one id's entry: its span of the arena, its newest version (1
// + index; 0: none) and the next entry whose id has the same hash.
type heldID struct {
	id         span
	last, next uint32
}

// heldVersion is an entity as written in a block: its encoding (removed:
// none) and the version before it (1 + index; 0: none).
type heldVersion struct {
	block   uint64
	data    span
	prev    uint32
	removed bool
}

type span struct{ off, n uint32 }

// seed keys every store's id hashes (a hash only picks an entry; the id
// is compared).
var seed = maphash.MakeSeed()

func newHeldType(t *EntityType) *heldType {
	return &heldType{t: t, first: map[uint64]uint32{}}
}

func (h *heldType) span(b []byte) span {
	s := span{uint32(len(h.arena)), uint32(len(b))}
	h.arena = append(h.arena, b...)
	return s
}

func (h *heldType) bytes(s span) []byte { return h.arena[s.off : s.off+s.n : s.off+s.n] }

// find is the index of id's entry, or -1.
func (h *heldType) find(id string) int {
	for i := h.first[maphash.String(seed, id)]; i != 0; i = h.ids[i-1].next {
		if string(h.bytes(h.ids[i-1].id)) == id {
			return int(i - 1)
		}
	}
	return -1
}

// entry is id's entry, added if new.
func (h *heldType) entry(id string) *heldID {
	if i := h.find(id); i >= 0 {
		return &h.ids[i]
	}
	hash := maphash.String(seed, id)
	h.ids = append(h.ids, heldID{id: h.span([]byte(id)), next: h.first[hash]})
	h.first[hash] = uint32(len(h.ids))
	return &h.ids[len(h.ids)-1]
}

// put records e (nil: removed) as id's version at block; a later write in
// the block of the newest version replaces it. Versions must come in
// ascending blocks.
func (h *heldType) put(id string, e Entity, block uint64) error {
	var b []byte
	if e != nil {
		var err error
		if b, err = encodeEntity(h.t, e); err != nil {
			return err
		}
	}
	en := h.entry(id)
	if en.last != 0 && h.versions[en.last-1].block == block {
		v := &h.versions[en.last-1]
		v.data, v.removed = h.replace(v.data, b), e == nil
		h.compact() // after the version names its new span
		return nil
	}
	v := heldVersion{block: block, prev: en.last, removed: e == nil}
	if e != nil {
		v.data = h.span(b)
	}
	h.versions = append(h.versions, v)
	en.last = uint32(len(h.versions))
	return nil
}

// replace writes b (nil: none, a removal) in place of old's bytes and
// returns its span. A rewrite in one block (a Pool written per swap, an
// indexer's counters) must not grow the arena with every write, only with
// every version kept: old's bytes are taken back when they are the
// arena's tail, b written over them when it fits, and otherwise counted
// as garbage, which compact (the caller's, once the version names the
// returned span) reclaims once it is half the arena. Reuse
// alone would leave a growing rewrite's bytes behind; compaction alone
// would copy the arena for the commonest case, an entity rewritten with
// an encoding of the same size. Decoded entities copy what they read, so
// nothing outside the write lock refers to the arena's bytes.
func (h *heldType) replace(old span, b []byte) span {
	if old.n > 0 && int(old.off+old.n) == len(h.arena) {
		h.arena, old.n = h.arena[:old.off], 0
	}
	if b == nil {
		h.garbage += old.n
		return span{}
	}
	if len(b) <= int(old.n) {
		copy(h.arena[old.off:], b)
		h.garbage += old.n - uint32(len(b))
		return span{old.off, uint32(len(b))}
	}
	h.garbage += old.n
	return h.span(b)
}

// compact copies the live bytes (every id and every kept version) to a
// new arena once the garbage is over half the old one, so the arena stays
// under twice the live bytes; a compaction's copy is paid for by the
// garbage written since the last.
func (h *heldType) compact() {
	if int(h.garbage)*2 <= len(h.arena) {
		return
	}
	arena := make([]byte, 0, len(h.arena)-int(h.garbage))
	move := func(s span) span {
		out := span{uint32(len(arena)), s.n}
		arena = append(arena, h.bytes(s)...)
		return out
	}
	for i := range h.ids {
		h.ids[i].id = move(h.ids[i].id)
	}
	for i := range h.versions {
		if !h.versions[i].removed {
			h.versions[i].data = move(h.versions[i].data)
		}
	}
	h.arena, h.garbage = arena, 0
}

// version is the index of an id entry's version as of block n, or -1.
func (h *heldType) version(en heldID, n uint64) int {
	for i := en.last; i != 0; i = h.versions[i-1].prev {
		if h.versions[i-1].block <= n {
			return int(i - 1)
		}
	}
	return -1
}

// at is id's entity as of block n, decoded (nil: absent or removed), with
// the block of its version.
func (h *heldType) at(id string, n uint64) (Entity, uint64, error) {
	i := h.find(id)
	if i < 0 {
		return nil, 0, nil
	}
	return h.decodeVersion(h.version(h.ids[i], n))
}

// decodeVersion is version i's entity (nil: none or removed) and block.
// The arena holds only what encodeEntity wrote, so an error is a bug,
// reported as a store failure rather than a wrong answer.
func (h *heldType) decodeVersion(i int) (Entity, uint64, error) {
	if i < 0 || h.versions[i].removed {
		return nil, 0, nil
	}
	v := h.versions[i]
	e, err := decodeEntity(h.t, h.bytes(v.data))
	return e, v.block, err
}

// inserted is the block of id's first version, and whether it has one.
func (h *heldType) inserted(id string) (uint64, bool) {
	i := h.find(id)
	if i < 0 || h.ids[i].last == 0 {
		return 0, false
	}
	j := h.ids[i].last
	for h.versions[j-1].prev != 0 {
		j = h.versions[j-1].prev
	}
	return h.versions[j-1].block, true
}

// Entity encoding: the number of fields, then per field its index in the
// type's Fields and its value: a kind byte and the payload (strings and
// bytes length-prefixed, integers as varints, big integers as a sign byte
// and their magnitude's bytes, arrays as a count and their values).

func encodeEntity(t *EntityType, e Entity) ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(len(e)))
	for name, v := range e {
		f := t.byName[name]
		if f == nil {
			return nil, fmt.Errorf("entity %s: unknown field `%s`", t.Name, name)
		}
		b = binary.AppendUvarint(b, uint64(f.index))
		b = appendValue(b, v)
	}
	return b, nil
}

func appendValue(b []byte, v Value) []byte {
	b = append(b, byte(v.Kind))
	switch v.Kind {
	case KindString:
		b = binary.AppendUvarint(b, uint64(len(v.Str)))
		b = append(b, v.Str...)
	case KindInt, KindInt8, KindTimestamp:
		b = binary.AppendVarint(b, v.Int)
	case KindBool:
		b = append(b, boolByte(v.Bool))
	case KindBytes:
		b = binary.AppendUvarint(b, uint64(len(v.Bytes)))
		b = append(b, v.Bytes...)
	case KindBigInt:
		b = appendBig(b, v.Big)
	case KindBigDecimal:
		b = appendBig(appendBig(b, v.Big), v.Exp)
	case KindArray:
		b = binary.AppendUvarint(b, uint64(len(v.Array)))
		for _, el := range v.Array {
			b = appendValue(b, el)
		}
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// appendBig writes x: 0 nil, 1 non-negative, 2 negative; then the
// magnitude.
func appendBig(b []byte, x *big.Int) []byte {
	if x == nil {
		return append(b, 0)
	}
	b = append(b, 1+boolByte(x.Sign() < 0))
	mag := x.Bytes()
	b = binary.AppendUvarint(b, uint64(len(mag)))
	return append(b, mag...)
}

// decoder reads what encodeEntity wrote; err is its first failure.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("truncated or malformed entity encoding")
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 { v, n := binary.Uvarint(d.b); return advance(d, v, n) }
func (d *decoder) varint() int64   { v, n := binary.Varint(d.b); return advance(d, v, n) }

// advance is a varint read of n bytes (n <= 0: none could be read).
func advance[T uint64 | int64](d *decoder, v T, n int) T {
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) take(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) byte() byte {
	if b := d.take(1); len(b) == 1 {
		return b[0]
	}
	return 0
}

func decodeEntity(t *EntityType, raw []byte) (Entity, error) {
	d := &decoder{b: raw}
	n := d.uvarint()
	if n > uint64(len(t.Fields)) {
		return nil, fmt.Errorf("entity %s: %d fields encoded", t.Name, n)
	}
	e := make(Entity, n)
	for range n {
		i := d.uvarint()
		if i >= uint64(len(t.Fields)) {
			d.fail()
			break
		}
		e[t.Fields[i].Name] = d.value()
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, fmt.Errorf("entity %s: malformed encoding", t.Name)
	}
	return e, nil
}

func (d *decoder) value() Value {
	v := Value{Kind: Kind(d.byte())}
	switch v.Kind {
	case KindString:
		v.Str = string(d.take(d.uvarint()))
	case KindInt, KindInt8, KindTimestamp:
		v.Int = d.varint()
	case KindBool:
		v.Bool = d.byte() == 1
	case KindBytes:
		v.Bytes = append([]byte{}, d.take(d.uvarint())...)
	case KindBigInt:
		v.Big = d.big()
	case KindBigDecimal:
		v.Big, v.Exp = d.big(), d.big()
	case KindArray:
		n := d.uvarint()
		if n > uint64(len(d.b)) { // every value takes a byte at least
			d.fail()
			break
		}
		v.Array = make([]Value, 0, n)
		for range n {
			v.Array = append(v.Array, d.value())
		}
	case KindNull:
	default:
		d.fail()
	}
	return v
}

func (d *decoder) big() *big.Int {
	sign := d.byte()
	if sign == 0 {
		return nil
	}
	x := new(big.Int).SetBytes(d.take(d.uvarint()))
	if sign == 2 {
		x.Neg(x)
	}
	return x
}

// recorded is every entity's versions in a store recording's form, oldest
// first.
func (h *heldType) recorded() (map[string][]recordingVersion, error) {
	out := make(map[string][]recordingVersion, len(h.ids))
	for _, en := range h.ids {
		var vs []recordingVersion
		for i := en.last; i != 0; i = h.versions[i-1].prev {
			e, _, err := h.decodeVersion(int(i - 1))
			if err != nil {
				return nil, err
			}
			rv := recordingVersion{Block: h.versions[i-1].block}
			if e != nil {
				rv.Entity = make(map[string]any, len(e))
				for k, v := range e {
					rv.Entity[k] = v.JSON()
				}
			}
			vs = append(vs, rv)
		}
		slices.Reverse(vs)
		out[string(h.bytes(en.id))] = vs
	}
	return out, nil
}
