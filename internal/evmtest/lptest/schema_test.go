package lptest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

var (
	docOnce sync.Once
	doc     *openapi3.T
	docErr  error
)

// matchesSchema checks a real answer of the service, encoded as the
// gateway encodes it, against the OpenAPI document's component schema:
// the demo records no deposit or withdrawal, so the contract test cannot
// see these answers; this one does.
func matchesSchema(t *testing.T, name string, v any) {
	t.Helper()
	docOnce.Do(func() {
		doc, docErr = openapi3.NewLoader().LoadFromData(gateway.OpenAPI())
		if docErr == nil {
			docErr = doc.Validate(context.Background())
		}
	})
	if docErr != nil {
		t.Fatal(docErr)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var body any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if obj, ok := body.(map[string]any); ok {
		// The gateway puts the answer's block first in every object
		// answer; the service does not know it. Its shape is the contract
		// test's to check: here it stands in so the service's part is
		// what this check judges.
		obj["asOf"] = map[string]any{"number": 1, "hash": "0x" + strings.Repeat("ab", 32), "timestamp": 1}
	}
	if err := doc.Components.Schemas[name].Value.VisitJSON(body); err != nil {
		t.Errorf("%s does not match the document: %v\n%.600s", name, err, raw)
	}
}
