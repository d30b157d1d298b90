package subgraph_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed build output (subgraph/build, which the tests and the
// scenarios run) of every network in networks.json was built from the
// schema in the tree: graph build copies the schema verbatim, so a schema
// changed without a rebuild, or a network added without its build, fails
// here, on every go test, rather than only in CI's rebuild-and-diff (which
// also catches a mapping changed without one: comparing wasm needs
// graph-cli).
func TestCommittedBuildHasTheTreesSchema(t *testing.T) {
	want, err := os.ReadFile("schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("networks.json")
	if err != nil {
		t.Fatal(err)
	}
	var networks map[string]json.RawMessage
	if err := json.Unmarshal(raw, &networks); err != nil {
		t.Fatal(err)
	}
	var builds []string // every network's build: arbitrum-one's in build/, the others' in build/<network>
	for network := range networks {
		switch {
		case strings.HasPrefix(network, "_"):
		case network == "arbitrum-one":
			builds = append(builds, "build/schema.graphql")
		default:
			builds = append(builds, "build/"+network+"/schema.graphql")
		}
	}
	for _, built := range builds {
		got, err := os.ReadFile(filepath.FromSlash(built))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("subgraph/%s differs from subgraph/schema.graphql: the committed build is stale; rebuild it (npm ci and npm run build in subgraph/) and commit it", built)
		}
	}
}
