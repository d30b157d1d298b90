package trade

import (
	"context"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// DelegateRequest is a validated delegate-prepare request. Delegate nil
// means the chain's auto-exerciser (the deployments registry's).
type DelegateRequest struct {
	ChainID  uint64
	Market   common.Address
	User     common.Address
	Delegate *common.Address
	Enable   bool
}

// PreparedDelegate is the updateExerciseDelegate transaction for a user,
// simulated from the user at the answer's block, with what it allows.
type PreparedDelegate struct {
	// Tx is what From must send (to the market, no value).
	Tx   vocab.Tx `json:"tx"`
	From string   `json:"from"`
	// Delegate and Enable are the transaction's arguments.
	Delegate string `json:"delegate"`
	Enable   bool   `json:"enable"`
	// Enabled is exerciseDelegator(user, delegate) now; after the
	// transaction it is Enable (Changes says whether that differs).
	Enabled bool `json:"enabled"`
	Changes bool `json:"changes"`
	// Simulated: the transaction ran from the user without reverting.
	Simulated bool `json:"simulated"`
	// IsAutoExerciser: the delegate is the chain's auto-exerciser;
	// AutoExercise then gives its terms (null otherwise).
	IsAutoExerciser bool               `json:"isAutoExerciser"`
	AutoExercise    *AutoExerciseTerms `json:"autoExercise"`
	// Allows says what enabling the delegate lets it do (or what
	// disabling takes away).
	Allows string `json:"allows"`
}

// DelegatePrepare builds updateExerciseDelegate(delegate, enable) for the
// user on the market: it refuses a market that is not one (404), reads the
// delegate's current status and, when the delegate is the chain's
// auto-exerciser, its terms (one aggregate3), and simulates the
// transaction from the user; a revert is 422 DELEGATE_WOULD_REVERT with
// the contract's reason.
func (s *Trade) DelegatePrepare(ctx context.Context, req DelegateRequest) (PreparedDelegate, error) {
	up, err := s.chains.Of(req.ChainID, false)
	if err != nil {
		return PreparedDelegate{}, err
	}
	delegate, err := delegateOf(up, req)
	if err != nil {
		return PreparedDelegate{}, err
	}
	if _, err := up.Chain.Market(ctx, req.Market); err != nil {
		return PreparedDelegate{}, err
	}
	auto := up.Config.AutoExerciser != (common.Address{}) && delegate == up.Config.AutoExerciser
	var ae common.Address
	if auto {
		ae = delegate
	}
	terms, enabled, err := up.Chain.DelegateView(ctx, req.Market, ae, []chain.Delegation{{Owner: req.User, Delegate: delegate}})
	if err != nil {
		return PreparedDelegate{}, err
	}
	data, err := up.Chain.SimulateDelegate(ctx, req.User, req.Market, delegate, req.Enable)
	if err != nil {
		var rev *chain.RevertError
		if errors.As(err, &rev) {
			return PreparedDelegate{}, problem.Wrap(problem.DelegateWouldRevert, err, "simulating updateExerciseDelegate from the user reverted: %s", rev.Reason)
		}
		return PreparedDelegate{}, err
	}
	out := PreparedDelegate{
		Tx: vocab.Tx{To: req.Market.Hex(), Data: hexutil.Encode(data)}, From: req.User.Hex(), Delegate: delegate.Hex(), Enable: req.Enable,
		Enabled: enabled[0], Changes: enabled[0] != req.Enable, Simulated: true, IsAutoExerciser: auto,
	}
	if terms != nil {
		t := termsOf(terms)
		out.AutoExercise = &t
	}
	out.Allows = allows(out)
	return out, nil
}

// delegateOf is the delegate asked, or the chain's auto-exerciser; a zero
// address, the user itself or a chain without an auto-exerciser when none
// is named is the client's mistake.
func delegateOf(up *vocab.Upstreams, req DelegateRequest) (common.Address, error) {
	if req.Delegate == nil {
		if up.Config.AutoExerciser == (common.Address{}) {
			return common.Address{}, problem.InvalidParam("delegate", "chain %d has no auto-exerciser in the deployments registry: name the delegate", req.ChainID)
		}
		return up.Config.AutoExerciser, nil
	}
	switch *req.Delegate {
	case common.Address{}:
		return common.Address{}, problem.InvalidParam("delegate", "the zero address cannot exercise anything")
	case req.User:
		return common.Address{}, problem.InvalidParam("delegate", "the user may always exercise its own options: name another account")
	}
	return *req.Delegate, nil
}

// allows is the sentence Allows holds.
func allows(p PreparedDelegate) string {
	who := "the delegate " + p.Delegate
	grant := fmt.Sprintf("%s may call exerciseOption for every option %s owns on this market, now and later, until it is disabled; the market pays the exercise's profit to the delegate, which passes on what it chooses. It cannot transfer, split or settle the options", who, p.From)
	if p.AutoExercise != nil {
		t := p.AutoExercise
		grant = fmt.Sprintf("the auto-exerciser %s may exercise every option %s owns on this market, now and later, until it is disabled, but only in the last %d seconds before each option's expiry; it sends the profit to the option's owner less an executor fee of at most %s (MAX_EXECUTOR_FEE %s / EXECUTOR_FEE_PRECISION %s, paid to feeTo %s). Its keepers choose which options to exercise: opting in is no guarantee that one will",
			t.Exerciser, p.From, t.Window, t.MaxFeeShare, t.MaxExecutorFee, t.ExecutorFeePrecision, t.FeeTo)
	}
	if !p.Enable {
		return "disables " + who + ": afterwards only " + p.From + " (and its other enabled delegates) may exercise its options on this market. While enabled, " + grant
	}
	return grant
}
