package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// book is the signed-order book over the chains served from the network
// (live or indexed, or given transports standing for them): the book
// checks every order against the chain,
// which the demo's recordings and a chain without upstreams cannot
// answer. Its store opens at the first order request, not at start: a
// gateway (or a test) that never serves an order creates no file.
// CLAMM_ORDERS_DATABASE_URL names a PostgreSQL database several replicas
// share; otherwise the embedded SQLite store at CLAMM_ORDERS_PATH keeps
// it. A store that fails to open is 503 ORDER_BOOK_UNAVAILABLE, and
// retried at the next request.
type book struct {
	cfg    *config.Config
	chains vocab.Chains
	// demo answers the chains served from the demo's recordings: it
	// checks an order by itself and stores nothing (orders.ReadOnly).
	demo *orders.ReadOnly

	mu     sync.Mutex
	repo   orders.Repository
	orders *orders.Orders
	// opening is the open under way (nil when none): requests wait for it
	// or for their own end, never for a lock held across the open.
	opening *opening
	closed  bool
}

// opening is one open of the store: done closes when it ends, err is
// its failure.
type opening struct {
	done chan struct{}
	err  error
}

// newBook is the book of w's network chains, or nil when there are none
// (the order routes are then 404).
func newBook(cfg *config.Config, w wired) *book {
	chains := vocab.Chains{}
	recorded := map[uint64]common.Address{}
	for id, mode := range w.modes {
		switch mode {
		case ModeLive, ModeIndexed, ModeTransports: // given transports stand for the network
			chains[id] = w.ups[id]
		case ModeDemo:
			recorded[id] = cfg.Chains[id].LimitOrders
		}
	}
	if len(chains) == 0 && len(recorded) == 0 {
		return nil
	}
	b := &book{cfg: cfg, chains: chains, demo: orders.NewReadOnly(recorded)}
	for _, up := range chains {
		up.SellOrders = b // the positions' sellOrder
	}
	return b
}

// open is the book, its store opened on first use. One open runs at a
// time, detached from the request that started it and bounded by
// CLAMM_REQUEST_TIMEOUT (a database that never answers cannot hold it);
// each request waits for it at most until its own end.
func (b *book) open(ctx context.Context) (*orders.Orders, error) {
	b.mu.Lock()
	if b.orders != nil {
		o := b.orders
		b.mu.Unlock()
		return o, nil
	}
	op := b.opening
	if op == nil && !b.closed {
		op = &opening{done: make(chan struct{})}
		b.opening = op
		go b.openStore(op)
	}
	b.mu.Unlock()
	if op == nil {
		return nil, problem.New(problem.OrderBookUnavailable, "the order book is closed: the gateway is shutting down")
	}
	select {
	case <-op.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if op.err != nil {
		return nil, op.err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.orders == nil {
		return nil, problem.New(problem.OrderBookUnavailable, "the order book is closed: the gateway is shutting down")
	}
	return b.orders, nil
}

// openStore runs one open and publishes its store, or its failure.
func (b *book) openStore(op *opening) {
	defer close(op.done)
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.RequestTimeout.D())
	defer cancel()
	repo, err := b.openRepo(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opening = nil
	switch {
	case err != nil:
		op.err = err
	case b.closed:
		_ = repo.Shutdown()
		op.err = problem.New(problem.OrderBookUnavailable, "the order book is closed: the gateway is shutting down")
	default:
		b.repo, b.orders = repo, orders.New(b.chains, repo, orders.Limits{PerMaker: b.cfg.OrdersPerMaker})
	}
}

func (b *book) openRepo(ctx context.Context) (orders.Repository, error) {
	if b.cfg.OrdersDatabaseURL != "" {
		repo, err := orders.OpenPostgres(ctx, b.cfg.OrdersDatabaseURL)
		if err != nil {
			// The URL may carry a password: the error is redacted.
			err = errors.New(Secrets(b.cfg).Text(err.Error()))
			return nil, problem.Wrap(problem.OrderBookUnavailable, err, "the order book's database (CLAMM_ORDERS_DATABASE_URL) did not open; nothing was read or stored")
		}
		return repo, nil
	}
	repo, err := orders.OpenSQLite(ctx, b.cfg.OrdersPath)
	if err != nil {
		return nil, problem.Wrap(problem.OrderBookUnavailable, err, "the order book's store (CLAMM_ORDERS_PATH %s) did not open; nothing was read or stored", b.cfg.OrdersPath)
	}
	return repo, nil
}

// Close closes the store if it was opened; an open under way closes its
// store when it ends.
func (b *book) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.repo == nil {
		return nil
	}
	err := b.repo.Shutdown()
	b.repo, b.orders = nil, nil
	if err != nil {
		return fmt.Errorf("the order book's store: %w", err)
	}
	return nil
}

func (b *book) Prepare(ctx context.Context, req orders.PrepareRequest) (orders.Prepared, error) {
	if b.demo.Has(req.ChainID) {
		return b.demo.Prepare(ctx, req)
	}
	o, err := b.open(ctx)
	if err != nil {
		return orders.Prepared{}, err
	}
	return o.Prepare(ctx, req)
}

func (b *book) Submit(ctx context.Context, so orders.SignedOrder) (orders.View, bool, error) {
	if b.demo.Has(so.ChainID) {
		return b.demo.Submit(ctx, so)
	}
	o, err := b.open(ctx)
	if err != nil {
		return orders.View{}, false, err
	}
	return o.Submit(ctx, so)
}

func (b *book) List(ctx context.Context, req orders.ListRequest) ([]orders.View, error) {
	if b.demo.Has(req.ChainID) {
		return b.demo.List(ctx, req)
	}
	o, err := b.open(ctx)
	if err != nil {
		return nil, err
	}
	return o.List(ctx, req)
}

func (b *book) Fillable(ctx context.Context, req orders.FillableRequest) ([]orders.Fill, error) {
	if b.demo.Has(req.ChainID) {
		return b.demo.Fillable(ctx, req)
	}
	o, err := b.open(ctx)
	if err != nil {
		return nil, err
	}
	return o.Fillable(ctx, req)
}

func (b *book) CancelPrepare(ctx context.Context, chainID uint64, hash common.Hash) (orders.PreparedCancel, error) {
	if b.demo.Has(chainID) {
		return b.demo.CancelPrepare(ctx, chainID, hash)
	}
	o, err := b.open(ctx)
	if err != nil {
		return orders.PreparedCancel{}, err
	}
	return o.CancelPrepare(ctx, chainID, hash)
}

func (b *book) Delete(ctx context.Context, req orders.DeleteRequest) ([]orders.View, error) {
	if b.demo.Has(req.ChainID) {
		return b.demo.Delete(ctx, req)
	}
	o, err := b.open(ctx)
	if err != nil {
		return nil, err
	}
	return o.Delete(ctx, req)
}

// SellOrders reads the positions' take-profits. An embedded store that
// was never created holds none: a positions read does not create it (a
// gateway that never served an order keeps no file).
func (b *book) SellOrders(ctx context.Context, chainID uint64, market, owner common.Address, tokenIDs []string) (map[string]*vocab.SellOrder, error) {
	b.mu.Lock()
	opened := b.orders != nil
	b.mu.Unlock()
	if !opened && b.cfg.OrdersDatabaseURL == "" {
		if _, err := os.Stat(b.cfg.OrdersPath); errors.Is(err, fs.ErrNotExist) {
			return map[string]*vocab.SellOrder{}, nil
		}
	}
	o, err := b.open(ctx)
	if err != nil {
		return nil, err
	}
	return o.SellOrders(ctx, chainID, market, owner, tokenIDs)
}
