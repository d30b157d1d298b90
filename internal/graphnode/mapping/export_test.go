package mapping

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// Doors of the external tests (package mapping_test) into a host's
// instance. Those tests run the built mappings through mappingtest, which
// imports this package, so they cannot be in it.

// Ready gives h an instance in a fresh one's state, as before a trigger;
// Release closes it; Instantiate starts a new one.
func Ready(ctx context.Context, h *Host) error       { return h.ready(ctx) }
func Release(h *Host)                                { h.release() }
func Instantiate(ctx context.Context, h *Host) error { return h.instantiate(ctx) }

// Instance is the instance h keeps (nil: none).
func Instance(h *Host) api.Module {
	if h.heap == nil {
		return nil
	}
	return h.heap.mod
}

// Resets reports whether h resets the instance it keeps; NeverReset makes
// it instantiate anew for each trigger.
func Resets(h *Host) bool { return h.pristine != nil }
func NeverReset(h *Host)  { h.pristine = nil }

// Globals are the exports of h's module's mutable globals.
func Globals(h *Host) []string { return h.globals }

// StringRoundTrip writes s into h's instance as a mapping's string, and
// returns the bytes of the object written and the string read back.
func StringRoundTrip(h *Host, s string) (raw []byte, back string) {
	p := h.heap.newString(s)
	return h.heap.bytesAt(p, h.heap.rtSize(p)), h.heap.readString(p)
}
