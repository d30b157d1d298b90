package graphnode

import (
	"context"
	"fmt"
	"strings"
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

// cancelling is a store whose first read ends the request (a client that
// hangs up mid-query), counting the reads and entities resolved after.
type cancelling struct {
	memorySource
	cancel func()
	reads  int
}

func (c *cancelling) Rows(ctx context.Context, typ string, n uint64) ([]Row, error) {
	c.reads++
	c.cancel()
	return c.memorySource.Rows(ctx, typ, n)
}

// A query whose request ends stops: once the context is cancelled no
// other collection is read and no entity is resolved, and the answer is
// an error, never a partial answer (attack 5, S3: the work went on ~25 s
// after the client had gone). The server then answers the context's
// error, for the caller to say what happened.
func TestQueryStopsWhenItsContextEnds(t *testing.T) {
	s, err := ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore(s)
	for i := range 50 {
		id := fmt.Sprintf("0x%02x", i)
		if err := st.Set("Pool", id, Entity{"id": String(id), "sqrtPriceX96": BigIntOf(1), "tick": Int(0)}, 1); err != nil {
			t.Fatal(err)
		}
	}
	st.SetHead(Block{Number: 1, Hash: "0x01", Timestamp: 100})
	ctx, cancel := context.WithCancel(context.Background())
	src := &cancelling{memorySource: memorySource{st}, cancel: cancel}
	st.mu.RLock()
	resp := ExecuteContext(ctx, s, src, Request{Query: `{ pools { id tick } strikes { id } markets { id } }`})
	st.mu.RUnlock()
	if resp.Data != nil || len(resp.Errors) != 1 || !strings.Contains(resp.Errors[0].Message, "context canceled") {
		t.Errorf("answer after the request ended: %+v", resp)
	}
	if src.reads != 1 {
		t.Errorf("%d collections read; the request ended at the first", src.reads)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if out, err := (&Server{Store: st}).AnswerContext(ctx, []byte(`{"query":"{ pools { id } }"}`)); err != context.Canceled || out != nil {
		t.Errorf("the server answered %q, %v; want the context's error", out, err)
	}
}
