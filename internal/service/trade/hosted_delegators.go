package trade

import (
	"context"

	"github.com/ethereum/go-ethereum/common"
)

// DelegatorsRequest is the hosted API's older delegators request: a user
// (its `account`) and a market of a chain.
type DelegatorsRequest struct {
	ChainID uint64
	Market  common.Address
	User    common.Address
}

// HostedDelegator is one known exercise delegate as the hosted API's
// /clamm/auto-exerciser/delegators gave it (elvarg's getAutoExercisers):
// its name, whether the user has it enabled on the market now, and the
// transactions that enable and disable it.
type HostedDelegator struct {
	Name                string   `json:"name"`
	Approved            bool     `json:"approved"`
	ApproveTxData       HostedTx `json:"approveTxData"`
	RevokeApproveTxData HostedTx `json:"revokeApproveTxData"`
}

// HostedTx is a transaction as the hosted API gave it: calldata and target.
type HostedTx struct {
	TxData string `json:"txData"`
	To     string `json:"to"`
}

// knownDelegate is an exercise delegate of the deployments registry.
type knownDelegate struct {
	name string
	addr common.Address
}

// HostedDelegators answers every exercise delegate the chain's registry
// knows (its auto-exerciser, TIME-BASED as the hosted API named it, and
// its LimitOrders contract, LIMIT-ORDERS: a take-profit is filled as the
// owner's delegate) with the user's status on the market and both
// updateExerciseDelegate transactions, each built and simulated by the
// delegate prepare (DelegatePrepare). A chain with neither answers [].
func (s *Trade) HostedDelegators(ctx context.Context, req DelegatorsRequest) ([]HostedDelegator, error) {
	up, err := s.chains.Of(req.ChainID, false)
	if err != nil {
		return nil, err
	}
	var known []knownDelegate
	if a := up.Config.AutoExerciser; a != (common.Address{}) {
		known = append(known, knownDelegate{"TIME-BASED", a})
	}
	if a := up.Config.LimitOrders; a != (common.Address{}) {
		known = append(known, knownDelegate{"LIMIT-ORDERS", a})
	}
	out := make([]HostedDelegator, 0, len(known))
	for _, d := range known {
		approve, err := s.DelegatePrepare(ctx, DelegateRequest{ChainID: req.ChainID, Market: req.Market, User: req.User, Delegate: &d.addr, Enable: true})
		if err != nil {
			return nil, err
		}
		revoke, err := s.DelegatePrepare(ctx, DelegateRequest{ChainID: req.ChainID, Market: req.Market, User: req.User, Delegate: &d.addr, Enable: false})
		if err != nil {
			return nil, err
		}
		out = append(out, HostedDelegator{
			Name: d.name, Approved: approve.Enabled,
			ApproveTxData:       HostedTx{TxData: approve.Tx.Data, To: approve.Tx.To},
			RevokeApproveTxData: HostedTx{TxData: revoke.Tx.Data, To: revoke.Tx.To},
		})
	}
	return out, nil
}
