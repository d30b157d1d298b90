package mapping

import (
	"encoding/binary"
	"fmt"
	"math/big"
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
// header plus its payload padded to 16.
type heap struct {
	mod      api.Module
	mem      api.Memory
	allocate api.Function
	idOfType api.Function
	arena    uint32
	free     int64 // may go negative, as Graph Node's i32 arena size does after a large object
	typeIDs  map[uint32]uint32
	call     func(fn api.Function, args ...uint64) []uint64
}

func (h *heap) typeID(index uint32) uint32 {
	if id, ok := h.typeIDs[index]; ok {
		return id
	}
	id := uint32(h.call(h.idOfType, uint64(index))[0])
	h.typeIDs[index] = id
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

// newObject writes payload as an object of class index and returns its
// pointer: header, payload and padding written straight into the
// module's memory.
func (h *heap) newObject(index uint32, payload []byte) uint32 {
	id := h.typeID(index)
	pad := (16 - (headerSize+len(payload))%16) % 16
	p, b := h.rawNew(int64(headerSize + len(payload) + pad))
	binary.LittleEndian.PutUint32(b[0:], uint32(16+len(payload)+pad)) // mmInfo: gcInfo..rtSize + payload
	clear(b[4:12])
	binary.LittleEndian.PutUint32(b[12:], id)
	binary.LittleEndian.PutUint32(b[16:], uint32(len(payload)))
	copy(b[headerSize:], payload)
	clear(b[headerSize+len(payload):])
	return p + headerSize
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

func decodeUTF16(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

func (h *heap) newString(s string) uint32 {
	b := make([]byte, 2*len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return h.newUTF16(s)
		}
		b[2*i] = s[i]
	}
	return h.newObject(tidString, b)
}

func (h *heap) newUTF16(s string) uint32 {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return h.newObject(tidString, b)
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
	v := make([]byte, 12)
	binary.LittleEndian.PutUint32(v[0:], buf)
	binary.LittleEndian.PutUint32(v[4:], buf)
	binary.LittleEndian.PutUint32(v[8:], uint32(len(b)))
	return h.newObject(tidUint8Array, v)
}

// Array<T> of pointers or values: buffer, dataStart, byteLength, length.
func (h *heap) readPtrArray(p uint32) []uint32 {
	n := h.u32(p + 12)
	data := h.u32(p + 4)
	out := make([]uint32, n)
	for i := range out {
		out[i] = h.u32(data + 4*uint32(i))
	}
	return out
}

func (h *heap) newPtrArray(index uint32, ptrs []uint32) uint32 {
	b := make([]byte, 4*len(ptrs))
	for i, p := range ptrs {
		binary.LittleEndian.PutUint32(b[4*i:], p)
	}
	buf := h.newObject(tidArrayBuffer, b)
	v := make([]byte, 16)
	binary.LittleEndian.PutUint32(v[0:], buf)
	binary.LittleEndian.PutUint32(v[4:], buf)
	binary.LittleEndian.PutUint32(v[8:], uint32(len(b)))
	binary.LittleEndian.PutUint32(v[12:], uint32(len(ptrs)))
	return h.newObject(index, v)
}

// Enums (ethereum.Value, store Value): kind u32, padding u32, payload u64.
func (h *heap) readEnum(p uint32) (kind uint32, payload uint64) {
	b := h.view(p, 16)
	return binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint64(b[8:])
}

func (h *heap) newEnum(index, kind uint32, payload uint64) uint32 {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint32(b, kind)
	binary.LittleEndian.PutUint64(b[8:], payload)
	return h.newObject(index, b)
}

func (h *heap) newStruct(index uint32, ptrs ...uint32) uint32 {
	b := make([]byte, 4*len(ptrs))
	for i, p := range ptrs {
		binary.LittleEndian.PutUint32(b[4*i:], p)
	}
	return h.newObject(index, b)
}

// BigInt travels as little-endian two's complement in the fewest bytes
// (num-bigint's to_signed_bytes_le; zero is one 0 byte).
func signedLE(x *big.Int) []byte {
	if x.Sign() == 0 {
		return []byte{0}
	}
	var be []byte
	if x.Sign() > 0 {
		be = x.Bytes()
		if be[0]&0x80 != 0 {
			be = append([]byte{0}, be...)
		}
	} else {
		// two's complement of |x| in n bytes, n minimal
		n := (x.BitLen() + 8) / 8
		m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
		v := new(big.Int).Add(m, x)
		be = v.FillBytes(make([]byte, n))
		for len(be) > 1 && be[0] == 0xff && be[1]&0x80 != 0 {
			be = be[1:]
		}
	}
	le := make([]byte, len(be))
	for i := range be {
		le[i] = be[len(be)-1-i]
	}
	return le
}

func fromSignedLE(le []byte) *big.Int {
	if len(le) == 0 {
		return new(big.Int)
	}
	be := make([]byte, len(le))
	for i := range le {
		be[i] = le[len(le)-1-i]
	}
	x := new(big.Int).SetBytes(be)
	if be[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(be))))
	}
	return x
}

func (h *heap) readBigInt(p uint32) *big.Int { return fromSignedLE(h.viewBytes(p)) }
func (h *heap) newBigInt(x *big.Int) uint32  { return h.newBytes(signedLE(x)) }
