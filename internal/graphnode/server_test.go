package graphnode_test

import (
	"context"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// failingStore answers every query with a store failure in SQLite's words.
type failingStore struct{}

func (failingStore) QueryContext(context.Context, graphnode.Request) graphnode.Response {
	return graphnode.Response{Errors: []graphnode.Error{{Message: "Store error: sqlite3: no such index: e_lpdeposit_user_open"}}}
}

// A store failure keeps Graph Node's prefix but none of the store's own
// words (its tables, indexes, plan): those are for the operator's /readyz.
func TestStoreErrorsNameNothingOfTheStore(t *testing.T) {
	out, err := (&graphnode.Server{Store: failingStore{}}).AnswerContext(context.Background(), []byte(`{"query":"{ _meta { block { number } } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); !strings.Contains(s, `"Store error`) || strings.Contains(s, "sqlite3") || strings.Contains(s, "e_lpdeposit") {
		t.Errorf("answer %s", s)
	}
}
