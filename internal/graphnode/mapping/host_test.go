package mapping

import (
	"context"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// newStore is an empty in-memory store of the subgraph's schema.
func newStore(t *testing.T) *graphnode.Store {
	t.Helper()
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	return graphnode.NewStore(s)
}

func TestMissingImportNamedAtInstantiation(t *testing.T) {
	// a module importing index.store.nope: () -> ()
	mod := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x04\x01\x60\x00\x00" +
		"\x02\x14\x01\x05index\x0astore.nope\x00\x00")
	_, err := New(context.Background(), "m.wasm", mod, Memory(newStore(t)), Options{})
	if err == nil || !strings.Contains(err.Error(), "index.store.nope") {
		t.Fatalf("err = %v, want it to name index.store.nope", err)
	}
}
