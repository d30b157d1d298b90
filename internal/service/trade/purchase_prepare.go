package trade

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// PurchasePrepareRequest is a purchase quote request from a buyer, with
// how much the cost may grow before the transaction refuses it.
type PurchasePrepareRequest struct {
	PurchaseRequest
	Slippage clamm.Slippage
}

// PreparedPurchase is the mintOption transaction for a quote, what it will
// cost and what the buyer will hold.
type PreparedPurchase struct {
	Quote PurchaseQuote `json:"quote"`
	// MaxCostAllowance is floor((premium + fees) * (100 + slippage) / 100):
	// mintOption reverts DopexV2OptionMarket__MaxCostAllowanceExceeded, and
	// takes nothing, if the cost has grown beyond it when it runs.
	MaxCostAllowance string   `json:"maxCostAllowance"`
	Tx               vocab.Tx `json:"tx"`
	// Allowance and Balance are the buyer's, of the collateral, at the
	// quote's block (the allowance to the market, which pulls the cost).
	Allowance string `json:"allowance"`
	Balance   string `json:"balance"`
	// Approval is the approve the buyer must send first when the allowance
	// is below maxCostAllowance; null when it suffices.
	Approval *vocab.Approval `json:"approval"`
	// Simulated: the transaction ran from the buyer at the chain's head
	// without reverting, after the approval when there is one (the
	// approval and mintOption in one simulation, as the buyer will send
	// them); a revert is a 422 instead. SimulatedAt is the block it ran
	// at, which may be newer than the answer's (asOf, where the quote and
	// the allowance were read).
	Simulated   bool            `json:"simulated"`
	SimulatedAt *vocab.BlockRef `json:"simulatedAt"`
	Option      OptionToHold    `json:"option"`
}

// OptionToHold is the option the transaction mints to the buyer.
type OptionToHold struct {
	Type      string `json:"type"`
	TickLower int    `json:"tickLower"`
	TickUpper int    `json:"tickUpper"`
	TTL       uint64 `json:"ttl"`
	// Size is the collateral the option controls (what its legs withdraw).
	Size  string        `json:"size"`
	Legs  []PurchaseLeg `json:"legs"`
	Token vocab.Token   `json:"token"`
}

// PurchasePrepare builds mintOption for the quote's legs with
// maxCostAllowance = (premium + fee) * (1 + slippage). When the buyer's
// allowance to the market covers it, the transaction is simulated from the
// buyer at the chain's head (not the answer's block, which trails it by
// the subgraph's lag: the transaction will be sent against the head) and
// a revert is a 422 naming the contract's error and that block; otherwise
// the approve to send first is returned and simulated with it, first.
func (s *Trade) PurchasePrepare(ctx context.Context, req PurchasePrepareRequest) (PreparedPurchase, error) {
	st, err := s.quote(ctx, req.PurchaseRequest)
	if err != nil {
		return PreparedPurchase{}, err
	}
	maxCost := req.Slippage.MaxIn(new(big.Int).Add(st.premium, st.fee))
	data, err := st.mintCalldata(req, maxCost)
	if err != nil {
		return PreparedPurchase{}, vocab.PastUint256(err)
	}
	allowance, balance := st.head.Account[2], st.head.Account[3]
	if req.IsCall {
		allowance, balance = st.head.Account[0], st.head.Account[1]
	}
	out := PreparedPurchase{
		Quote: st.q, MaxCostAllowance: maxCost.String(), Tx: vocab.Tx{To: req.Market.Hex(), Data: hexutil.Encode(data)},
		Allowance: allowance.String(), Balance: balance.String(),
		Option: OptionToHold{Type: st.q.Type, TickLower: st.tickLow, TickUpper: st.tickHigh, TTL: req.TTL, Size: st.q.Size, Legs: st.q.Legs, Token: st.q.Token},
	}
	if allowance.Cmp(maxCost) < 0 {
		if out.Approval, err = vocab.ApprovalOf(st.token, req.Market, maxCost, allowance); err != nil {
			return PreparedPurchase{}, err
		}
		return st.simulateApproved(ctx, req.User, out, data)
	}
	at, err := st.up.Chain.SimulateAtHead(ctx, req.User, req.Market, data)
	if err != nil {
		if rev, ok := err.(*chain.RevertError); ok {
			return PreparedPurchase{}, mintReverts(req.User, at.Number, rev)
		}
		return PreparedPurchase{}, err
	}
	out.Simulated, out.SimulatedAt = true, vocab.BlockRefOf(at)
	return out, nil
}

// simulateApproved runs the approval and then mintOption from the buyer
// at the chain's head, in one eth_call through the probe the liquidity
// prepares use (chain.SimulateLP): a purchase that reverts only once the
// allowance is in place (a balance below the cost, a cost grown past
// maxCostAllowance) is refused before the buyer signs the approval.
func (st *quoteState) simulateApproved(ctx context.Context, user common.Address, out PreparedPurchase, data []byte) (PreparedPurchase, error) {
	head, err := st.up.Chain.ReadHead(ctx)
	if err != nil {
		return PreparedPurchase{}, err
	}
	approvals := []vocab.Approval{*out.Approval}
	steps := append(vocab.ApprovalSteps(approvals), chain.LPStep{To: common.HexToAddress(out.Tx.To), Data: data})
	sim, err := st.up.Chain.SimulateLP(ctx, head, chain.LPSimulation{Signer: user, Tokens: []common.Address{st.token}, Steps: steps})
	if err != nil {
		return PreparedPurchase{}, err
	}
	if err := vocab.ApprovalRevert(problem.PurchaseWouldRevert, approvals, user, sim.At.Number, sim.Sequence); err != nil {
		return PreparedPurchase{}, err
	}
	if rev := sim.Sequence[len(steps)-1].Revert; rev != nil {
		return PreparedPurchase{}, mintReverts(user, sim.At.Number, rev)
	}
	out.Simulated, out.SimulatedAt = true, vocab.BlockRefOf(sim.At)
	return out, nil
}

func mintReverts(user common.Address, at uint64, rev *chain.RevertError) error {
	return problem.Wrap(problem.PurchaseWouldRevert, rev, "mintOption reverts when simulated from %s at block %d (the chain's head): %s", user.Hex(), at, rev.Reason)
}

// mintCalldata is mintOption(OptionParams) for the quote's legs. The
// option's ticks are the first leg's (every leg shares the strike tick,
// which is all the market checks).
func (st *quoteState) mintCalldata(req PurchasePrepareRequest, maxCost *big.Int) ([]byte, error) {
	legs := make([]clamm.MintLeg, len(st.legs))
	for i, l := range st.legs {
		legs[i] = clamm.MintLeg{Handler: l.handler, Pool: l.pool, Hook: l.hook, TickLower: l.tickLower, TickUpper: l.tickUpper, Liquidity: l.liquidity}
	}
	return clamm.MintOptionCalldata(clamm.MintParams{Legs: legs, TickLower: st.tickLow, TickUpper: st.tickHigh, TTL: req.TTL, IsCall: req.IsCall, MaxCostAllowance: maxCost})
}
