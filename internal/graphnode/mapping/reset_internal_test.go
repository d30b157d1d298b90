package mapping

import (
	"context"
	"strings"
	"testing"
)

// A module whose section claims more bytes than it has is an error from
// New (wazero's, the reset's rewrite given up), never a panic.
func TestTruncatedModuleIsAnError(t *testing.T) {
	mod := []byte("\x00asm\x01\x00\x00\x00" + "\x01\x7f\x00") // a type section of 127 bytes, 1 present
	if _, _, err := exportGlobals(mod); err == nil || !strings.Contains(err.Error(), "unexpected end") {
		t.Fatalf("exportGlobals: %v", err)
	}
	if _, err := New(context.Background(), "m.wasm", mod, Memory(newStore(t)), Options{}); err == nil {
		t.Fatal("New took a truncated module")
	}
}
