package gateway

import (
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// Every operation states how its answer's block is chosen, beside its TTL:
// a route added without it would read the chain at a block the subgraph
// may not have indexed, which no test with the subgraph at the chain head
// shows. A server given such a route refuses to be built, naming it.
func TestEveryEndpointStatesItsPin(t *testing.T) {
	t.Parallel()
	for _, e := range apiEndpoints {
		if !e.pin.Stated() {
			t.Errorf("%s (%s) states no pin strategy", e.path, e.operation)
		}
	}
	o := DefaultOptions(service.New(map[uint64]*vocab.Upstreams{42161: {}}))
	WithExampleEndpoint(&o)
	if _, err := New(o); err != nil {
		t.Fatalf("a server whose routes all state their pin: %v", err)
	}
	o.extra[len(o.extra)-1].pin = block.Strategy{}
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), PathExample) {
		t.Errorf("a server with a route stating no pin: %v, want an error naming %s", err, PathExample)
	}
}
