package mapping

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"slices"
	"unicode/utf16"
	"unsafe"

	"github.com/tetratelabs/wazero/api"
)

// AssemblyScript 0.19+ object layout, as Graph Node (apiVersion >= 0.0.5)
// reads and writes it: every managed object is preceded by a 20-byte header
// (mmInfo, gcInfo, gcInfo2, rtId, rtSize); a pointer points just past it, so
// rtId is at ptr-8 and rtSize (the payload length in bytes) at ptr-4.
const headerSize = 20

// Class ids Graph Node asks the module for through its id_of_type export
// (graph-ts TypeId, Graph Node IndexForAscTypeId).
const (
	tidString                  = 0
	tidArrayBuffer             = 1
	tidUint8Array              = 6
	tidArrayEthereumValue      = 15
	tidArrayStoreValue         = 16
	tidArrayEventParam         = 19
	tidArrayTypedMapEntryStore = 21
	tidEventParam              = 23
	tidEthereumTransaction     = 24
	tidEthereumBlock           = 25
	tidEthereumValue           = 30
	tidStoreValue              = 31
	tidEthereumEvent           = 33
	tidTypedMapEntryStore      = 34
	tidTypedMapStore           = 36
	tidTransactionReceipt      = 1000
	tidLog                     = 1001
	tidArrayH256               = 1002
	tidArrayLog                = 1003
)

// heap allocates host-made objects the way Graph Node's raw_new does: large
// arenas from the module's `allocate` export (12 bytes in, so objects stay
// 16-aligned after __alloc's 4-byte block header), each object a 20-byte
// header plus its payload padded to 16. Objects are written straight into
// the module's memory (alloc), with no Go copy of their payload between.
type heap struct {
	mod      api.Module
	mem      api.Memory
	allocate api.Function
	idOfType api.Function
	arena    uint32
	free     int64 // may go negative, as Graph Node's i32 arena size does after a large object
	// typeIDs are the module's class ids by Graph Node type index, plus
	// one (0: not asked yet); the host's, shared by its instances.
	typeIDs []uint32
	// strs are strings read and written at their addresses
	// (readCachedString), the host's, kept from trigger to trigger.
	strs *strCache
	call func(fn api.Function, args ...uint64) []uint64
}

// tidCount bounds the type indexes typeID caches (tidArrayLog is the largest).
const tidCount = tidArrayLog + 1

func (h *heap) typeID(index uint32) uint32 {
	if index < uint32(len(h.typeIDs)) && h.typeIDs[index] != 0 {
		return h.typeIDs[index] - 1
	}
	id := uint32(h.call(h.idOfType, uint64(index))[0])
	if index < uint32(len(h.typeIDs)) {
		h.typeIDs[index] = id + 1
	}
	return id
}

// rawNew reserves size bytes in the arena and returns them, in the
// module's memory, with their address.
func (h *heap) rawNew(size int64) (uint32, []byte) {
	if size > h.free {
		n := size
		if n < 10000 {
			n = 10000
		}
		start := uint32(h.call(h.allocate, uint64(n))[0])
		// __alloc returns a 16-aligned pointer after its 4-byte block
		// header; 12 bytes in, the 20-byte object header leaves the
		// payload 16-aligned. A 16-aligned size n gets n+12 bytes, so the
		// shift still fits.
		h.arena, h.free = start+12, n-12
	}
	p := h.arena
	b, ok := h.mem.Read(p, uint32(size))
	if !ok {
		panic(fmt.Sprintf("write of %d bytes at %d outside memory", size, p))
	}
	h.arena += uint32(size)
	h.free -= size
	return p, b
}

// alloc writes the header of an object of class index with an n-byte
// payload and returns its pointer and its payload, zeroed, in the
// module's memory: the caller writes the payload there before anything
// else is allocated (an allocation may grow the memory, leaving the
// slice stale).
func (h *heap) alloc(index uint32, n int) (uint32, []byte) {
	id := h.typeID(index)
	pad := (16 - (headerSize+n)%16) % 16
	p, b := h.rawNew(int64(headerSize + n + pad))
	binary.LittleEndian.PutUint32(b[0:], uint32(16+n+pad)) // mmInfo: gcInfo..rtSize + payload
	clear(b[4:12])
	binary.LittleEndian.PutUint32(b[12:], id)
	binary.LittleEndian.PutUint32(b[16:], uint32(n))
	clear(b[headerSize:])
	return p + headerSize, b[headerSize : headerSize+n]
}

// newObject writes payload as an object of class index and returns its
// pointer: header, payload and padding written straight into the
// module's memory.
func (h *heap) newObject(index uint32, payload []byte) uint32 {
	p, b := h.alloc(index, len(payload))
	copy(b, payload)
	return p
}

func (h *heap) u32(p uint32) uint32 {
	v, ok := h.mem.ReadUint32Le(p)
	if !ok {
		panic(fmt.Sprintf("read at %d outside memory", p))
	}
	return v
}

func (h *heap) bytesAt(p, n uint32) []byte { return append([]byte{}, h.view(p, n)...) }

// view is n bytes of the module's memory at p, not copied (valid until
// the memory grows); a range outside it is the mapping's fault, a panic
// the trigger's recover reports.
func (h *heap) view(p, n uint32) []byte {
	b, ok := h.mem.Read(p, n)
	if !ok {
		panic(fmt.Sprintf("read of %d bytes at %d outside memory", n, p))
	}
	return b
}

func (h *heap) rtSize(p uint32) uint32 {
	if p == 0 {
		panic("null pointer where Graph Node requires a value")
	}
	return h.u32(p - 4)
}

// Strings are UTF-16LE; rtSize is their byte length. The mappings'
// strings (ids, hex, entity types) are ASCII nearly always: read and
// written a byte a code unit, without decoding to runes.
func (h *heap) readString(p uint32) string {
	b := h.view(p, h.rtSize(p))
	if len(b) < 2 {
		return ""
	}
	ascii := make([]byte, len(b)/2)
	for i := range ascii {
		c := binary.LittleEndian.Uint16(b[2*i:])
		if c >= 0x80 {
			return decodeUTF16(b)
		}
		ascii[i] = byte(c)
	}
	// ascii is not written again: the string takes it without a copy
	return unsafe.String(&ascii[0], len(ascii))
}

// strCache holds ASCII strings the host read from or wrote into the
// module last, by their address there. The same strings cross again and
// again: an entity type or a field name is a literal of the mapping, at
// the same address in every trigger (each starts from the same memory);
// an entity's id and string fields come back in store.set from where
// store.get wrote them. A slot is used only if the module's bytes at its
// address still spell its string, so a string a mapping wrote over, or
// another string made at that address later, reads as what it is.
type strCache [1024]struct {
	p uint32
	s string
}

func (c *strCache) slot(p uint32) *struct {
	p uint32
	s string
} {
	return &c[(p>>4)%uint32(len(c))] // objects are 16-aligned
}

// readCachedString is readString without an allocation when the
// string's address last held the same string (strCache).
func (h *heap) readCachedString(p uint32) string {
	b := h.view(p, h.rtSize(p))
	slot := h.strs.slot(p)
	if slot.p == p && spells(b, slot.s) {
		return slot.s
	}
	s := h.readString(p)
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return s // not cached: spells compares ASCII only
		}
	}
	slot.p, slot.s = p, s
	return s
}

// spells reports whether the UTF-16LE bytes b are the ASCII string s.
func spells(b []byte, s string) bool {
	if len(b)/2 != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b[2*i] != s[i] || b[2*i+1] != 0 {
			return false
		}
	}
	return true
}

func decodeUTF16(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

func (h *heap) newString(s string) uint32 {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return h.newUTF16(s)
		}
	}
	p, b := h.alloc(tidString, 2*len(s))
	for i := 0; i < len(s); i++ {
		b[2*i] = s[i] // the high byte alloc zeroed
	}
	slot := h.strs.slot(p)
	slot.p, slot.s = p, s
	return p
}

// newText is newString of text held as bytes (hex, digits: ASCII), not
// made into a Go string first.
func (h *heap) newText(s []byte) uint32 {
	for _, c := range s {
		if c >= 0x80 {
			return h.newUTF16(string(s))
		}
	}
	p, b := h.alloc(tidString, 2*len(s))
	for i, c := range s {
		b[2*i] = c
	}
	return p
}

func (h *heap) newUTF16(s string) uint32 {
	u := utf16.Encode([]rune(s))
	p, b := h.alloc(tidString, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return p
}

// Uint8Array (Bytes, Address, BigInt): buffer, dataStart, byteLength.
func (h *heap) readBytes(p uint32) []byte {
	if p == 0 {
		panic("null pointer where Graph Node requires bytes")
	}
	return h.bytesAt(h.u32(p+4), h.u32(p+8))
}

// viewBytes is a Uint8Array's bytes in the module's memory, not copied:
// for a caller that copies or reads them before the mapping runs again.
func (h *heap) viewBytes(p uint32) []byte {
	if p == 0 {
		panic("null pointer where Graph Node requires bytes")
	}
	return h.view(h.u32(p+4), h.u32(p+8))
}

func (h *heap) newBytes(b []byte) uint32 {
	buf := h.newObject(tidArrayBuffer, b)
	p, v := h.alloc(tidUint8Array, 12)
	binary.LittleEndian.PutUint32(v[0:], buf)
	binary.LittleEndian.PutUint32(v[4:], buf)
	binary.LittleEndian.PutUint32(v[8:], uint32(len(b)))
	return p
}

// Array<T> of pointers or values: buffer, dataStart, byteLength, length.
func (h *heap) readPtrArray(p uint32) []uint32 {
	elems := h.ptrArray(p)
	out := make([]uint32, len(elems)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(elems[4*i:])
	}
	return out
}

// ptrArray is the elements of the Array at p, 4 bytes each, in the
// module's memory (not copied): an array reaching past the memory is the
// mapping's fault, refused before anything is made for it.
func (h *heap) ptrArray(p uint32) []byte {
	n, data := uint64(h.u32(p+12)), h.u32(p+4)
	if 4*n > uint64(h.mem.Size()) {
		panic(fmt.Sprintf("array of %d elements at %d outside memory", n, data))
	}
	return h.view(data, uint32(4*n))
}

func (h *heap) newPtrArray(index uint32, ptrs []uint32) uint32 {
	buf, b := h.alloc(tidArrayBuffer, 4*len(ptrs))
	for i, p := range ptrs {
		binary.LittleEndian.PutUint32(b[4*i:], p)
	}
	p, v := h.alloc(index, 16)
	binary.LittleEndian.PutUint32(v[0:], buf)
	binary.LittleEndian.PutUint32(v[4:], buf)
	binary.LittleEndian.PutUint32(v[8:], uint32(4*len(ptrs)))
	binary.LittleEndian.PutUint32(v[12:], uint32(len(ptrs)))
	return p
}

// Enums (ethereum.Value, store Value): kind u32, padding u32, payload u64.
func (h *heap) readEnum(p uint32) (kind uint32, payload uint64) {
	b := h.view(p, 16)
	return binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint64(b[8:])
}

func (h *heap) newEnum(index, kind uint32, payload uint64) uint32 {
	p, b := h.alloc(index, 16)
	binary.LittleEndian.PutUint32(b, kind)
	binary.LittleEndian.PutUint64(b[8:], payload)
	return p
}

func (h *heap) newStruct(index uint32, ptrs ...uint32) uint32 {
	p, b := h.alloc(index, 4*len(ptrs))
	for i, ptr := range ptrs {
		binary.LittleEndian.PutUint32(b[4*i:], ptr)
	}
	return p
}

// BigInt travels as little-endian two's complement in the fewest bytes
// (num-bigint's to_signed_bytes_le; zero is one 0 byte).
func signedLE(x *big.Int) []byte { return appendSignedLE(nil, x) }

// appendSignedLE appends x's signedLE bytes to dst, read from x's words
// (no intermediate big.Int or byte slice).
func appendSignedLE(dst []byte, x *big.Int) []byte {
	if x.Sign() == 0 {
		return append(dst, 0)
	}
	n := (x.BitLen() + 8) / 8 // the magnitude and a sign bit
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	le := dst[start:]
	words := x.Bits()
	const wordBytes = bits.UintSize / 8
	for i := range le {
		le[i] = 0
		if w := i / wordBytes; w < len(words) {
			le[i] = byte(words[w] >> (8 * (i % wordBytes)))
		}
	}
	if x.Sign() < 0 { // two's complement: invert, add one
		carry := 1
		for i := range le {
			v := int(^le[i]) + carry
			le[i], carry = byte(v), v>>8
		}
	}
	return dst[:start+len(minimalLE(le))]
}

// minimalLE drops the top bytes of a little-endian two's complement
// number that only repeat the sign (at least one byte stays).
func minimalLE(le []byte) []byte {
	for len(le) > 1 {
		top, below := le[len(le)-1], le[len(le)-2]&0x80
		if (top != 0 || below != 0) && (top != 0xff || below == 0) {
			break
		}
		le = le[:len(le)-1]
	}
	return le
}

// fromSignedLE is a new big.Int of le's number. Its words up to 256
// bits come in the one allocation with it (a mapping's BigInts are
// amounts and prices: nearly all fit), not in a second one.
func fromSignedLE(le []byte) *big.Int {
	box := new(struct {
		x big.Int
		w [256 / bits.UintSize]big.Word
	})
	box.x.SetBits(box.w[:0])
	return setSignedLE(&box.x, le)
}

var bigOne = big.NewInt(1)

// setSignedLE sets z to the number le holds (signedLE's form; any length,
// redundant sign bytes too) and returns it.
func setSignedLE(z *big.Int, le []byte) *big.Int {
	n := len(le)
	if n == 0 {
		return z.SetInt64(0)
	}
	var small [64]byte
	be := small[:0]
	if n > len(small) {
		be = make([]byte, n)
	}
	be = be[:n]
	neg := le[n-1]&0x80 != 0
	for i, c := range le {
		if neg {
			c = ^c
		}
		be[n-1-i] = c
	}
	z.SetBytes(be)
	if neg { // x - 2^(8n) = -(^x + 1)
		z.Add(z, bigOne).Neg(z)
	}
	return z
}

func (h *heap) readBigInt(p uint32) *big.Int { return fromSignedLE(h.viewBytes(p)) }

func (h *heap) newBigInt(x *big.Int) uint32 {
	var buf [40]byte
	return h.newBytes(appendSignedLE(buf[:0], x))
}

// newUint64 is newBigInt of v, without making a big.Int.
func (h *heap) newUint64(v uint64) uint32 {
	var buf [9]byte
	return h.newBytes(uint64LE(&buf, v))
}

// uint64LE is signedLE of v, written into buf.
func uint64LE(buf *[9]byte, v uint64) []byte {
	binary.LittleEndian.PutUint64(buf[:], v)
	buf[8] = 0
	return minimalLE(buf[:])
}
