package orders

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// ReadOnly is the book of chains served from recordings (the demo): a
// recording cannot answer the chain reads a new order is checked with
// (the maker's option, delegation or allowance, the contract's used mark,
// at the head), so it keeps no order. It checks what an order shows by
// itself (its fields, its data, its signature over the chain's domain)
// and refuses to store it, saying so; its reads answer an empty book.
type ReadOnly struct {
	contracts map[uint64]common.Address // chain id: its LimitOrders
}

// NewReadOnly is the read-only book of the chains given with their
// LimitOrders.
func NewReadOnly(contracts map[uint64]common.Address) *ReadOnly {
	return &ReadOnly{contracts: contracts}
}

// Has reports whether chainID is one of the read-only book's.
func (b *ReadOnly) Has(chainID uint64) bool { _, ok := b.contracts[chainID]; return ok }

func (b *ReadOnly) contractOf(chainID uint64) (common.Address, error) {
	c, ok := b.contracts[chainID]
	if !ok || c == (common.Address{}) {
		return common.Address{}, problem.InvalidParam("chainId", "chain %d has no LimitOrders contract in the deployments registry", chainID)
	}
	return c, nil
}

// Submit checks the order without the chain and refuses to store it:
// 422 DEMO_STORES_NOTHING when it checks out, the check's own refusal
// otherwise.
func (b *ReadOnly) Submit(_ context.Context, so SignedOrder) (View, bool, error) {
	contract, err := b.contractOf(so.ChainID)
	if err != nil {
		return View{}, false, err
	}
	c, err := verify(so, contract)
	if err != nil {
		return View{}, false, err
	}
	return View{}, false, problem.New(problem.DemoStoresNothing, "order %s checks out by itself: a %s order signed by its maker %s over chain %d's domain (LimitOrders %s); but chain %d is served from the demo's recordings, which cannot check the maker's option, delegation or allowance at the chain's head, so nothing was stored: serve the chain from the network to keep orders (docs/orders.md)",
		c.hash.Hex(), c.kind, c.order.Maker.Hex(), so.ChainID, contract.Hex(), so.ChainID)
}

// List answers the empty book.
func (b *ReadOnly) List(_ context.Context, req ListRequest) ([]View, error) {
	if _, err := b.contractOf(req.ChainID); err != nil {
		return nil, err
	}
	return []View{}, nil
}

// Fillable answers that nothing is fillable: the book is empty.
func (b *ReadOnly) Fillable(_ context.Context, req FillableRequest) ([]Fill, error) {
	if _, err := b.contractOf(req.ChainID); err != nil {
		return nil, err
	}
	return []Fill{}, nil
}

// Prepare refuses: the typed data's createdAt and the steps before it
// are read at the chain's head, which a recording cannot answer.
func (b *ReadOnly) Prepare(_ context.Context, req PrepareRequest) (Prepared, error) {
	if _, err := b.contractOf(req.ChainID); err != nil {
		return Prepared{}, err
	}
	return Prepared{}, problem.New(problem.DemoStoresNothing, "chain %d is served from the demo's recordings: an order's typed data and the transactions before it are read at the chain's head, which a recording cannot answer; serve the chain from the network (docs/orders.md)", req.ChainID)
}

// CancelPrepare finds no order: the book is empty.
func (b *ReadOnly) CancelPrepare(_ context.Context, chainID uint64, hash common.Hash) (PreparedCancel, error) {
	if _, err := b.contractOf(chainID); err != nil {
		return PreparedCancel{}, err
	}
	return PreparedCancel{}, problem.New(problem.OrderNotFound, "the demo's book holds no order %s on chain %d: it stores none", hash.Hex(), chainID).On("hash")
}

// Delete is accepted: the empty book holds no order on the option.
func (b *ReadOnly) Delete(_ context.Context, req DeleteRequest) ([]View, error) {
	if _, err := b.contractOf(req.ChainID); err != nil {
		return nil, err
	}
	if !common.IsHexAddress(req.OptionMarket) {
		return nil, problem.InvalidParam("optionMarket", "want the option market's 0x address")
	}
	if req.TokenID.Int == nil {
		return nil, problem.InvalidParam("tokenId", "tokenId is required")
	}
	return []View{}, nil
}
