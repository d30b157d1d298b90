package scenario

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
	"github.com/clamm-gateway/clamm-gateway/internal/swap/swaptest"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// Fakes are one chain's fake upstreams loaded with scenarios, reachable
// in-process (no sockets) through the HTTP clients below.
type Fakes struct {
	Node     *chaintest.Node
	Subgraph *graphnodetest.Server
	OneInch  *swaptest.OneInch

	scenarios []*Scenario
}

// NewFakes loads the scenarios (all of one chain) into fresh fakes for the
// test t, with the chain's default swappers and quoter (internal/config)
// deployed.
func NewFakes(t testing.TB, scenarios ...*Scenario) *Fakes {
	t.Helper()
	return NewFakesFor(t, defaultChain(scenarios), scenarios...)
}

// NewFakesFor is NewFakes with the swappers and quoter of ch (may be nil).
func NewFakesFor(t testing.TB, ch *config.Chain, scenarios ...*Scenario) *Fakes {
	t.Helper()
	n := chaintest.NewNode(t)
	return loaded(n, swaptest.NewOneInch(t, swaptest.NodePrice(n)), ch, scenarios)
}

// NewFakesForGenerator is NewFakes for the demo generator, which runs the
// fakes outside any test.
func NewFakesForGenerator(scenarios ...*Scenario) *Fakes {
	n := chaintest.NewNodeForGenerator()
	return loaded(n, swaptest.NewOneInchForGenerator(swaptest.NodePrice(n)), defaultChain(scenarios), scenarios)
}

func defaultChain(scenarios []*Scenario) *config.Chain {
	if len(scenarios) == 0 {
		return nil
	}
	return config.Default().Chains[scenarios[0].ChainID]
}

// loaded fills node and the subgraph with the scenarios and deploys ch's
// swappers on the node.
func loaded(node *chaintest.Node, oneInch *swaptest.OneInch, ch *config.Chain, scenarios []*Scenario) *Fakes {
	f := &Fakes{Node: node, Subgraph: graphnodetest.New(), OneInch: oneInch}
	for _, s := range scenarios {
		f.Add(s)
	}
	deployAutoExerciser(f.Node, ch, scenarios)
	price := oneInch.Price
	if ch != nil && len(ch.Quoters) > 0 {
		f.Node.DexQuoters = map[common.Address]bool{}
		for _, q := range ch.Quoters {
			f.Node.DexQuoters[q.Address] = true
		}
	}
	if ch != nil {
		for _, sw := range ch.Swappers {
			switch sw.Kind {
			case config.SwapperUniswapV3:
				f.Node.Quoter = sw.Quoter
				f.Node.Swappers[sw.Address] = chaintest.UniV3Swapper{Node: f.Node}
				for _, a := range sw.ByDex {
					f.Node.Swappers[a] = chaintest.UniV3Swapper{Node: f.Node}
				}
			case config.Swapper1inch:
				f.Node.Swappers[sw.Address] = swaptest.Swapper{Price: price}
			}
		}
	}
	return f
}

// Add loads one more scenario of the fakes' chain: its head state into the
// node, and the subgraph's store indexed anew from every scenario's
// history by the compiled mappings (Index). A scenario the mappings cannot
// index is a broken fixture: it panics with the reason.
func (f *Fakes) Add(s *Scenario) {
	s.Populate(f.Node)
	f.scenarios = append(f.scenarios, s)
	if err := Index(&f.Subgraph.Store, f.Node, f.scenarios); err != nil {
		panic(fmt.Sprintf("index scenarios: %v", err))
	}
}

// Transports put the fakes behind the real clients, in process.
func (f *Fakes) Transports() upstream.Transports {
	return upstream.Transports{Subgraph: HandlerTransport{Handler: f.Subgraph}, RPC: HandlerTransport{Handler: f.Node},
		Quote: HandlerTransport{Handler: f.OneInch}}
}

// HandlerTransport serves requests with an in-process handler: no sockets,
// no network, deterministic headers. It puts the fake upstreams behind
// the real clients (tests, the demo generator).
type HandlerTransport struct{ Handler http.Handler }

// RoundTrip implements http.RoundTripper.
func (t HandlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.Handler.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// QuoteHTTP is an http.Client whose requests the fake 1inch API answers.
func (f *Fakes) QuoteHTTP() *http.Client {
	return &http.Client{Transport: HandlerTransport{Handler: f.OneInch}}
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
	return &http.Client{Transport: HandlerTransport{Handler: f.Subgraph}}
}

// RPC is a go-ethereum rpc client whose requests the fake node answers.
func (f *Fakes) RPC() *rpc.Client {
	c, err := rpc.DialOptions(context.Background(), "http://fake-rpc.invalid",
		rpc.WithHTTPClient(&http.Client{Transport: HandlerTransport{Handler: f.Node}}))
	if err != nil {
		panic(err) // dialing HTTP does not connect; only a malformed URL fails
	}
	return c
}
