package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed recordings are what the generator writes now: the test
// regenerates them from the demo's scenarios into a temporary directory and
// compares every file byte for byte, so it fails when the recordings fall
// behind the scenario, the subgraph's compiled mappings (the store is what
// they write for the scenario's history), the history's logs, or the
// gateway's requests (go generate ./internal/demo rewrites them).
func TestRecordingsAreRegenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every demo request through the gateway")
	}
	dir := t.TempDir()
	if err := generate(filepath.Join("..", "..", "..", "testdata", "scenarios"), dir); err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "recordings")
	chains, err := os.ReadDir(dir)
	if err != nil || len(chains) == 0 {
		t.Fatalf("generated no chain: %v", err)
	}
	for _, c := range chains {
		files, err := os.ReadDir(filepath.Join(dir, c.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadDir(filepath.Join(committed, c.Name()))
		if err != nil || len(want) != len(files) {
			t.Errorf("chain %s: %d files generated, %d committed (%v); run go generate ./internal/demo", c.Name(), len(files), len(want), err)
		}
		for _, f := range files {
			got, _ := os.ReadFile(filepath.Join(dir, c.Name(), f.Name()))
			old, err := os.ReadFile(filepath.Join(committed, c.Name(), f.Name()))
			if err != nil || !bytes.Equal(got, old) {
				t.Errorf("recordings/%s/%s differs from what the generator writes now (%v); run go generate ./internal/demo", c.Name(), f.Name(), err)
			}
		}
	}
}
