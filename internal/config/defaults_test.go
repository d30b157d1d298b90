package config

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// The embedded defaults are what subgraph/manifest.mjs writes from the
// deployments registry (subgraph/networks.json), byte for byte: the
// registry is the one place a deployment is written, and a hand edit of
// defaults.json is lost at the next generation. CI also regenerates and
// diffs the file; this test says so on a developer's machine with node.
func TestDefaultsAreTheRegistrysGeneration(t *testing.T) {
	prereq.Programs(t, "node")
	script := filepath.Join("..", "..", "subgraph", "manifest.mjs")
	out, err := exec.Command("node", script, "--defaults").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("node manifest.mjs --defaults: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("node manifest.mjs --defaults: %v", err)
	}
	committed, err := os.ReadFile("defaults.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, committed) {
		t.Errorf("internal/config/defaults.json is not what subgraph/manifest.mjs writes from subgraph/networks.json: edit the registry and run `npm run manifests` in subgraph/")
	}
}
