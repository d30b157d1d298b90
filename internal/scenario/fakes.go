package scenario

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/subgraph/subgraphtest"
)

// Fakes are one chain's fake upstreams loaded with scenarios, reachable
// in-process (no sockets) through the HTTP clients below.
type Fakes struct {
	Node     *chaintest.Node
	Subgraph *subgraphtest.Server
}

// NewFakes loads the scenarios (all of one chain) into fresh fakes.
func NewFakes(scenarios ...*Scenario) *Fakes {
	f := &Fakes{Node: chaintest.NewNode(), Subgraph: &subgraphtest.Server{}}
	for _, s := range scenarios {
		s.Populate(f.Node, f.Subgraph)
	}
	return f
}

// Load reads and parses scenario files.
func Load(paths ...string) ([]*Scenario, error) {
	out := make([]*Scenario, 0, len(paths))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s, err := Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// SubgraphHTTP is an http.Client whose requests the fake subgraph answers.
func (f *Fakes) SubgraphHTTP() *http.Client {
	return &http.Client{Transport: replay.HandlerTransport{Handler: f.Subgraph}}
}

// RPC is a go-ethereum rpc client whose requests the fake node answers.
func (f *Fakes) RPC() *rpc.Client {
	c, err := rpc.DialOptions(context.Background(), "http://fake-rpc.invalid",
		rpc.WithHTTPClient(&http.Client{Transport: replay.HandlerTransport{Handler: f.Node}}))
	if err != nil {
		panic(err) // dialing HTTP does not connect; only a malformed URL fails
	}
	return c
}
