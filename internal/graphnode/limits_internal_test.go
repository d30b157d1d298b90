package graphnode

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/clamm-gateway/clamm-gateway/queries"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Other replicas read an index through its query API with the gateway's
// own documents: each is within DefaultLimits at its largest pages (every
// Int variable, the `first`s among them, at Graph Node's bound of 1,000).
func TestGatewayDocumentsWithinLimits(t *testing.T) {
	s, err := ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range queries.Embedded() {
		doc, gerr := parser.ParseQuery(&ast.Source{Input: d.Text})
		if gerr != nil {
			t.Fatal(gerr)
		}
		if errs := validator.ValidateWithRules(s.API, doc, rules); len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs)
		}
		for _, op := range doc.Operations {
			vars := map[string]any{}
			for _, v := range op.VariableDefinitions {
				if v.Type.Name() == "Int" {
					vars[v.Variable] = int64(MaxFirst)
				}
			}
			if e := s.bounded(doc, op, vars); e != nil {
				t.Errorf("queries/%s.graphql at its largest pages: %s", name, e.Message)
			}
		}
	}
}
