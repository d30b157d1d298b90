package trade

import (
	"context"
	"math/big"

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
	// without reverting (only when the allowance suffices; a revert is a
	// 422 instead). SimulatedAt is the block it ran at, which may be newer
	// than the answer's (asOf, where the quote and the allowance were
	// read); nil when not simulated.
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
// the approve to send first is returned and nothing is simulated.
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
		out.Approval, err = vocab.ApprovalOf(st.token, req.Market, maxCost, allowance)
		return out, err
	}
	at, err := st.up.Chain.SimulateAtHead(ctx, req.User, req.Market, data)
	if err != nil {
		if rev, ok := err.(*chain.RevertError); ok {
			return PreparedPurchase{}, problem.Wrap(problem.PurchaseWouldRevert, err, "mintOption reverts when simulated from %s at block %d (the chain's head): %s", req.User.Hex(), at.Number, rev.Reason)
		}
		return PreparedPurchase{}, err
	}
	out.Simulated, out.SimulatedAt = true, vocab.BlockRefOf(at)
	return out, nil
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
