package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// ModeIndexed is a chain the gateway indexes itself (an RPC URL and no
// subgraph URL): its subgraph reads go to its own index.
const ModeIndexed = config.ModeIndexed

// Index is a chain's embedded indexer as the app uses it
// (internal/indexer, which the command wires in through Options.Index so
// that the app's other users do not link the indexer's wasm runtime and
// database).
type Index interface {
	// QueryContext answers a Graph Node query from the index's store,
	// stopping when ctx ends.
	QueryContext(context.Context, graphnode.Request) graphnode.Response
	// Status is where indexing stands (readiness shows it).
	Status() graphnode.Indexing
	// Run indexes until ctx ends or indexing stops for good.
	Run(ctx context.Context) error
	// Close releases the store; Run must have returned.
	Close() error
}

// OpenIndex opens the index of a chain the gateway indexes itself.
type OpenIndex func(ctx context.Context, ch *config.Chain) (Index, error)

// indexURL is the placeholder subgraph URL of an indexed chain: its
// subgraph client's transport answers in process.
func indexURL(id uint64) string { return fmt.Sprintf("http://embedded-index.invalid/subgraphs/%d", id) }

// openIndexed opens ch's index and returns the chain as the clients see
// it (the placeholder URL) with the transports that reach the index.
func openIndexed(o Options, ch *config.Chain) (*config.Chain, upstream.Transports, Index, error) {
	if o.Index == nil {
		return nil, upstream.Transports{}, nil, fmt.Errorf("chain %d has an RPC URL and no subgraph URL, so the gateway would index it, which this program cannot: set CLAMM_CHAIN_%d_SUBGRAPH_URL", ch.ID, ch.ID)
	}
	idx, err := o.Index(context.Background(), ch)
	if err != nil {
		return nil, upstream.Transports{}, nil, fmt.Errorf("chain %d index: %w", ch.ID, err)
	}
	if c, ok := idx.(prometheus.Collector); ok && o.Metrics != nil {
		if err := o.Metrics.Register(c); err != nil {
			_ = idx.Close()
			return nil, upstream.Transports{}, nil, fmt.Errorf("chain %d index metrics: %w", ch.ID, err)
		}
	}
	c := *ch
	c.SubgraphURL = indexURL(ch.ID)
	return &c, upstream.Transports{Subgraph: &graphnode.Server{Store: idx}}, idx, nil
}

// queryAPIs are the indexed chains' query APIs for the gateway, each
// answering at most max queries at once, with its load in m (if set):
// clamm_index_queries_in_flight and clamm_index_queries_refused_total.
func queryAPIs(indexes map[uint64]Index, max int, m *metrics.Metrics) (map[uint64]gateway.QueryAPI, error) {
	out := map[uint64]gateway.QueryAPI{}
	for id, idx := range indexes {
		api := &graphnode.Server{Store: idx, MaxQueries: max}
		out[id] = api
		if m == nil {
			continue
		}
		chain := prometheus.Labels{"chain": strconv.FormatUint(id, 10)}
		for _, c := range []prometheus.Collector{
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "clamm_index_queries_in_flight", ConstLabels: chain,
				Help: "Queries the indexed chain's query API (/subgraphs/<chainId>) is answering, per chain."},
				func() float64 { n, _ := api.Load(); return float64(n) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "clamm_index_queries_refused_total", ConstLabels: chain,
				Help: "Queries the indexed chain's query API refused at CLAMM_INDEX_MAX_QUERIES (503 OVERLOADED), per chain."},
				func() float64 { _, n := api.Load(); return float64(n) }),
		} {
			if err := m.Register(c); err != nil {
				return nil, fmt.Errorf("chain %d query API metrics: %w", id, err)
			}
		}
	}
	return out, nil
}

// RunIndexes runs every chain's indexer until ctx ends; wait returns when
// all have stopped. A chain whose indexing stops for good (a mapping
// error) stops alone: the others go on, and the gateway keeps serving.
func (a *App) RunIndexes(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	for _, idx := range a.Indexes {
		wg.Add(1)
		go func(idx Index) {
			defer wg.Done()
			_ = idx.Run(ctx) // the indexer logs and reports (Status) why it stopped
		}(idx)
	}
	return wg.Wait
}

// closeIndexes closes every index.
func closeIndexes(indexes map[uint64]Index) error {
	var errs []error
	for _, idx := range indexes {
		errs = append(errs, idx.Close())
	}
	return errors.Join(errs...)
}

// indexingOf is idx's status as the use cases' own type (vocab.Indexing):
// the use cases import nothing of the index, so the app, which wires both,
// translates. A state the use cases do not know passes as it is and reads
// as not ready (anything but synced is). The error, which /readyz shows,
// goes through secrets: a node's error may quote its URL.
func indexingOf(idx Index, secrets *secret.Redactor) func() vocab.Indexing {
	return func() vocab.Indexing {
		st := idx.Status()
		state, ok := indexingStates[st.State]
		if !ok {
			state = st.State
		}
		return vocab.Indexing{ChainID: st.ChainID, State: state, StartBlock: st.StartBlock,
			Block: st.Block, ChainHead: st.ChainHead, Error: secrets.Text(st.Error), Stalled: st.Stalled,
			StoreError: secrets.Text(st.StoreError)}
	}
}

// indexingStates names each state of the indexer's status in the use
// cases' words.
var indexingStates = map[string]string{
	graphnode.IndexingStarting: vocab.IndexingStarting,
	graphnode.IndexingBehind:   vocab.IndexingBehind,
	graphnode.IndexingSynced:   vocab.IndexingSynced,
	graphnode.IndexingFailed:   vocab.IndexingFailed,
}
