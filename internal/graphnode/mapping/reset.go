package mapping

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tetratelabs/wazero/api"
)

// A trigger must start from a fresh instance's state (Graph Node
// instantiates one per trigger), but instantiating is a third of a
// mapping's cost: wazero evaluates hundreds of data segments and
// allocates the memory anew each time. The host keeps one instance and,
// before each trigger, puts back what a fresh one holds after its start
// function: the whole memory as it was then (the pages grown since
// zeroed, as a fresh grow gives them) and every mutable global. That is
// all of an instance's state the mappings can change: they use no passive
// data or element segments (a module with a data count section, or an
// element segment that is not active, is not reset but instantiated per
// trigger) and AssemblyScript 0.19 emits no table writes. The one
// difference left is memory.size, larger when an earlier trigger grew the
// memory: the runtime's allocator reads it only to decide whether to grow,
// so no pointer and no value a handler sees depends on it. Memory past
// maxResetMemory is not zeroed but the instance dropped.

// maxResetMemory is the largest memory a reset zeroes; an instance whose
// memory grew past it is closed and the next trigger instantiates anew.
const maxResetMemory = 4 << 20

// globalPrefix names the exports exportGlobals adds.
const globalPrefix = "\x00reset.global."

// pristine is a fresh instance's state just after its start function.
type pristine struct {
	mem     []byte
	globals []uint64
	// mod and its are the instance last reset and its mutable globals
	// (wazero makes a new api.Global at each ExportedGlobal).
	mod api.Module
	its []api.MutableGlobal
}

// exportGlobals returns the module code with each of its mutable globals
// exported as globalPrefix and the global's index (wazero reaches a
// module's globals only through exports), and those exports' names; an
// error if the module uses what a reset cannot restore.
func exportGlobals(code []byte) ([]byte, []string, error) {
	if len(code) < 8 {
		return nil, nil, errors.New("not a wasm module")
	}
	var imported uint32
	var mutable []uint32
	exportAt := -1
	out := append([]byte(nil), code[:8]...)
	for r := (reader{b: code, i: 8}); r.i < len(code); {
		start := r.i
		id := r.byte()
		body := r.section()
		if r.err != nil {
			return nil, nil, r.err
		}
		switch id {
		case 2:
			imported = body.importedGlobals()
		case 6:
			mutable = body.mutableGlobals(imported)
		case 7:
			exportAt = len(out)
		case 9:
			if !body.activeElements() {
				return nil, nil, errors.New("a passive or declarative element segment")
			}
		case 12:
			return nil, nil, errors.New("a data count section (bulk memory)")
		}
		if body.err != nil {
			return nil, nil, fmt.Errorf("section %d: %w", id, body.err)
		}
		out = append(out, code[start:r.i]...)
	}
	if exportAt < 0 {
		return nil, nil, errors.New("no export section")
	}
	names := make([]string, len(mutable))
	for i, g := range mutable {
		names[i] = globalPrefix + strconv.FormatUint(uint64(g), 10)
	}
	return withExports(out, exportAt, names, mutable)
}

// withExports rewrites the export section at offset at with the global
// exports added.
func withExports(code []byte, at int, names []string, globals []uint32) ([]byte, []string, error) {
	r := reader{b: code, i: at + 1}
	body := r.section()
	end := r.i
	n := body.u32()
	if r.err != nil || body.err != nil {
		return nil, nil, errors.New("export section")
	}
	payload := appendU32(nil, n+uint32(len(names)))
	payload = append(payload, body.b[body.i:]...)
	for i, name := range names {
		payload = appendU32(payload, uint32(len(name)))
		payload = append(payload, name...)
		payload = append(payload, 3) // a global
		payload = appendU32(payload, globals[i])
	}
	out := append([]byte(nil), code[:at]...)
	out = append(out, 7)
	out = appendU32(out, uint32(len(payload)))
	out = append(out, payload...)
	return append(out, code[end:]...), names, nil
}

// snapshot reads the state a reset puts back from a fresh instance.
func snapshot(mod api.Module, names []string) (*pristine, error) {
	mem := mod.Memory()
	if mem == nil {
		return nil, errors.New("no memory")
	}
	buf, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil, errors.New("memory unreadable")
	}
	p := &pristine{mem: append([]byte(nil), buf...)}
	for _, n := range names {
		g := mod.ExportedGlobal(n)
		if g == nil {
			return nil, fmt.Errorf("global export %q missing", n)
		}
		p.globals = append(p.globals, g.Get())
	}
	return p, nil
}

// reset puts back mod's state as p holds it; false if it cannot (the
// memory grew past maxResetMemory).
func (p *pristine) reset(mod api.Module, names []string) bool {
	mem := mod.Memory()
	if mem.Size() > maxResetMemory || mem.Size() < uint32(len(p.mem)) {
		return false
	}
	buf, ok := mem.Read(0, mem.Size())
	if !ok {
		return false
	}
	copy(buf, p.mem)
	clear(buf[len(p.mem):])
	if p.mod != mod {
		p.mod, p.its = nil, p.its[:0]
		for _, n := range names {
			g, ok := mod.ExportedGlobal(n).(api.MutableGlobal)
			if !ok {
				return false
			}
			p.its = append(p.its, g)
		}
		p.mod = mod
	}
	for i, g := range p.its {
		g.Set(p.globals[i])
	}
	return true
}

// reader reads a wasm binary's LEB128 numbers and bytes, remembering the
// first error.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) byte() byte {
	if r.i >= len(r.b) {
		r.err = errors.New("unexpected end")
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errors.New("bad LEB128")
	return 0
}

// section reads a section's size and returns a reader of its body, r
// past it; a size past the end is an error, never a slice out of range.
func (r *reader) section() reader {
	size := r.u32()
	start := r.i
	r.skip(size)
	if r.err != nil {
		return reader{err: r.err}
	}
	return reader{b: r.b[start:r.i]}
}

func (r *reader) skip(n uint32) {
	if r.i+int(n) > len(r.b) {
		r.err = errors.New("unexpected end")
		return
	}
	r.i += int(n)
}

func (r *reader) limits() {
	if flags := r.byte(); flags&1 == 1 {
		r.u32()
	}
	r.u32()
}

// importedGlobals counts the import section's globals (they come first in
// the global index space).
func (r *reader) importedGlobals() uint32 {
	var n uint32
	for k := r.u32(); k > 0 && r.err == nil; k-- {
		r.skip(r.u32()) // module
		r.skip(r.u32()) // field
		switch r.byte() {
		case 0:
			r.u32()
		case 1:
			r.byte()
			r.limits()
		case 2:
			r.limits()
		case 3:
			r.byte()
			r.byte()
			n++
		default:
			r.err = errors.New("unknown import kind")
		}
	}
	return n
}

// mutableGlobals lists the global section's mutable globals by index.
func (r *reader) mutableGlobals(first uint32) []uint32 {
	var out []uint32
	k := r.u32()
	for i := uint32(0); i < k && r.err == nil; i++ {
		r.byte() // value type
		if r.byte() == 1 {
			out = append(out, first+i)
		}
		r.constExpr()
	}
	return out
}

// constExpr skips a constant expression up to its end opcode.
func (r *reader) constExpr() {
	for r.err == nil {
		switch op := r.byte(); op {
		case 0x0b:
			return
		case 0x41, 0x42, 0x23, 0xd2: // i32.const, i64.const, global.get, ref.func
			r.sleb()
		case 0x43:
			r.skip(4)
		case 0x44:
			r.skip(8)
		case 0xd0:
			r.byte()
		default:
			r.err = fmt.Errorf("opcode %#x in a constant expression", op)
		}
	}
}

func (r *reader) sleb() {
	for r.err == nil && r.byte()&0x80 != 0 {
	}
}

// activeElements reports whether every element segment is an active one
// of table 0 in the MVP form (flag 0).
func (r *reader) activeElements() bool {
	for k := r.u32(); k > 0 && r.err == nil; k-- {
		if r.u32() != 0 {
			return false
		}
		r.constExpr()
		for n := r.u32(); n > 0 && r.err == nil; n-- {
			r.u32()
		}
	}
	return r.err == nil
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
