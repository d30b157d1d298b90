package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// book is the signed-order book over the chains served from the network
// (live or indexed): the book checks every order against the chain,
// which the demo's recordings and a chain without upstreams cannot
// answer. Its store opens at the first order request, not at start: a
// gateway (or a test) that never serves an order creates no file.
// CLAMM_ORDERS_DATABASE_URL names a PostgreSQL database several replicas
// share; otherwise the embedded SQLite store at CLAMM_ORDERS_PATH keeps
// it. A store that fails to open is retried at the next request.
type book struct {
	cfg    *config.Config
	chains vocab.Chains

	mu     sync.Mutex
	repo   orders.Repository
	orders *orders.Orders
}

// newBook is the book of w's network chains, or nil when there are none
// (the order routes are then 404).
func newBook(cfg *config.Config, w wired) *book {
	chains := vocab.Chains{}
	for id, mode := range w.modes {
		if mode == ModeLive || mode == ModeIndexed {
			chains[id] = w.ups[id]
		}
	}
	if len(chains) == 0 {
		return nil
	}
	return &book{cfg: cfg, chains: chains}
}

// open is the book, its store opened on first use.
func (b *book) open() (*orders.Orders, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.orders != nil {
		return b.orders, nil
	}
	var err error
	if b.cfg.OrdersDatabaseURL != "" {
		// The URL may carry a password: the error is redacted.
		if b.repo, err = orders.OpenPostgres(b.cfg.OrdersDatabaseURL); err != nil {
			err = errors.New(Secrets(b.cfg).Text(err.Error()))
			return nil, problem.Wrap(problem.InternalError, err, "the order book's database (CLAMM_ORDERS_DATABASE_URL) did not open")
		}
	} else if b.repo, err = orders.OpenSQLite(b.cfg.OrdersPath); err != nil {
		return nil, problem.Wrap(problem.InternalError, err, "the order book's store (CLAMM_ORDERS_PATH %s) did not open", b.cfg.OrdersPath)
	}
	b.orders = orders.New(b.chains, b.repo, orders.Limits{PerMaker: b.cfg.OrdersPerMaker})
	return b.orders, nil
}

// Close closes the store if it was opened.
func (b *book) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
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
	o, err := b.open()
	if err != nil {
		return orders.Prepared{}, err
	}
	return o.Prepare(ctx, req)
}

func (b *book) Submit(ctx context.Context, so orders.SignedOrder) (orders.View, bool, error) {
	o, err := b.open()
	if err != nil {
		return orders.View{}, false, err
	}
	return o.Submit(ctx, so)
}

func (b *book) List(ctx context.Context, req orders.ListRequest) ([]orders.View, error) {
	o, err := b.open()
	if err != nil {
		return nil, err
	}
	return o.List(ctx, req)
}

func (b *book) Fillable(ctx context.Context, req orders.FillableRequest) ([]orders.Fill, error) {
	o, err := b.open()
	if err != nil {
		return nil, err
	}
	return o.Fillable(ctx, req)
}

func (b *book) CancelPrepare(ctx context.Context, chainID uint64, hash common.Hash) (orders.PreparedCancel, error) {
	o, err := b.open()
	if err != nil {
		return orders.PreparedCancel{}, err
	}
	return o.CancelPrepare(ctx, chainID, hash)
}

func (b *book) Delete(ctx context.Context, req orders.DeleteRequest) ([]orders.View, error) {
	o, err := b.open()
	if err != nil {
		return nil, err
	}
	return o.Delete(ctx, req)
}
