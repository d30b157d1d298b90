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

// Every operation states whether its answers are streamed; the reads the
// issue names stream (a trading screen follows them), and a streamed
// route can be opened as a stream. A server given a route that states
// nothing refuses to be built, naming it.
func TestEveryEndpointStatesItsStream(t *testing.T) {
	t.Parallel()
	must := map[string]bool{PathStrikesChain: true, PathOptionsChain: true, PathMarkPrice: true, PathCandles: true,
		PathPurchasePositions: true, PathDepositPositions: true, PathExpiringOptions: true, PathStats: true}
	for _, e := range apiEndpoints {
		switch {
		case e.stream == unstatedStream:
			t.Errorf("%s (%s) states not whether it streams", e.path, e.operation)
		case must[e.path] && e.stream != streams:
			t.Errorf("%s (%s) is not streamed", e.path, e.operation)
		case (e.stream == streams) != (e.open != nil):
			t.Errorf("%s (%s): streamed %v, but its stream opener set %v", e.path, e.operation, e.stream == streams, e.open != nil)
		}
	}
	o := DefaultOptions(service.New(map[uint64]*vocab.Upstreams{42161: {}}))
	WithExampleEndpoint(&o)
	o.extra[len(o.extra)-1].stream = unstatedStream
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), PathExample) {
		t.Errorf("a server with a route stating not whether it streams: %v, want an error naming %s", err, PathExample)
	}
}
