package subgraph_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed build output (subgraph/build, which the tests and the
// scenarios run) was built from the schema in the tree: graph build copies
// the schema verbatim, so a schema changed without a rebuild fails here, on
// every go test, rather than only in CI's rebuild-and-diff (which also
// catches a mapping changed without one: comparing wasm needs graph-cli).
func TestCommittedBuildHasTheTreesSchema(t *testing.T) {
	want, err := os.ReadFile("schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	for _, built := range []string{"build/schema.graphql", "build/mantle/schema.graphql"} {
		got, err := os.ReadFile(filepath.FromSlash(built))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("subgraph/%s differs from subgraph/schema.graphql: the committed build is stale; rebuild it (npm ci and npm run build in subgraph/) and commit it", built)
		}
	}
}
