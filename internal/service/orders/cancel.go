package orders

import (
	"context"
	"errors"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// PreparedCancel is the cancel(order, signature) transaction of an order
// in the book, simulated from its maker.
type PreparedCancel struct {
	Hash      string   `json:"hash"`
	Tx        vocab.Tx `json:"tx"`
	From      string   `json:"from"`
	Simulated bool     `json:"simulated"`
}

// CancelPrepare builds the on-chain cancel of a book order. Only the
// order's signer may send it (the contract compares the caller with the
// signature's signer), so it is simulated from the maker.
func (s *Orders) CancelPrepare(ctx context.Context, chainID uint64, hash common.Hash) (PreparedCancel, error) {
	up, err := s.contractOf(chainID)
	if err != nil {
		return PreparedCancel{}, err
	}
	rec, ok, err := s.repo.Get(ctx, chainID, hash)
	if err != nil {
		return PreparedCancel{}, storeErr(err)
	}
	if !ok {
		return PreparedCancel{}, problem.New(problem.OrderNotFound, "the book holds no order %s on chain %d", hash.Hex(), chainID).On("hash")
	}
	_, o, err := s.queryOf(ctx, rec)
	if err != nil {
		return PreparedCancel{}, err
	}
	data, err := contracts.CancelOrderCall(o.Contract(), o.Sig)
	if err != nil {
		return PreparedCancel{}, problem.Wrap(problem.Overloaded, err, "the stored order does not encode")
	}
	if _, err := up.Chain.SimulateAtHead(ctx, rec.Maker, up.Config.LimitOrders, data); err != nil {
		var rev *chain.RevertError
		if errors.As(err, &rev) {
			return PreparedCancel{}, problem.Wrap(problem.OrderNotFillable, err, "cancel reverts when simulated from the maker: %s", rev.Reason)
		}
		return PreparedCancel{}, err
	}
	return PreparedCancel{Hash: hash.Hex(), Tx: vocab.Tx{To: up.Config.LimitOrders.Hex(), Data: hexutil.Encode(data)}, From: rec.Maker.Hex(), Simulated: true}, nil
}

// DeleteRequest is the hosted API's /clamm/orders/delete body.
type DeleteRequest struct {
	ChainID      uint64 `json:"chainId"`
	TokenID      Uint   `json:"tokenId"`
	OptionMarket string `json:"optionMarket"`
}

// Delete answers the hosted API's delete: it carries no signature, so it
// is accepted only once the chain closed every book order on the option
// (a cancel or a fill); those orders then read cancelled or filled.
func (s *Orders) Delete(ctx context.Context, req DeleteRequest) ([]View, error) {
	if !common.IsHexAddress(req.OptionMarket) {
		return nil, problem.InvalidParam("optionMarket", "want the option market's 0x address")
	}
	if req.TokenID.Int == nil {
		return nil, problem.InvalidParam("tokenId", "tokenId is required")
	}
	m := common.HexToAddress(req.OptionMarket)
	views, err := s.List(ctx, ListRequest{ChainID: req.ChainID, Market: &m, TokenID: req.TokenID.String()})
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		if v.Closed == nil {
			return nil, problem.New(problem.OrderNotCancelled, "order %s on option %s is %s on chain: send its cancel first (GET /clamm/orders/cancel/prepare)", v.Hash, req.TokenID.Int, v.Status)
		}
	}
	return views, nil
}
