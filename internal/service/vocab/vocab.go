package vocab

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Tx is the transaction to sign.
type Tx struct {
	To   string `json:"to"`
	Data string `json:"data"`
}

// BlockRef names a block: its number, hash and time (unix seconds).
type BlockRef struct {
	Number    uint64 `json:"number"`
	Hash      string `json:"hash"`
	Timestamp int64  `json:"timestamp"`
}

// Approval is a missing ERC20 allowance and the transaction that sets it.
type Approval struct {
	Token   string `json:"token"`
	Spender string `json:"spender"`
	// Amount is the allowance to set (maxCostAllowance); Missing what the
	// current allowance lacks of it.
	Amount  string `json:"amount"`
	Missing string `json:"missing"`
	Tx      Tx     `json:"tx"`
}

func ApprovalOf(token, spender common.Address, amount, current *big.Int) (*Approval, error) {
	data, err := clamm.ApproveCalldata(spender, amount)
	if err != nil {
		return nil, PastUint256(err)
	}
	return &Approval{Token: token.Hex(), Spender: spender.Hex(), Amount: amount.String(), Missing: new(big.Int).Sub(amount, current).String(),
		Tx: Tx{To: token.Hex(), Data: hexutil.Encode(data)}}, nil
}

func BlockRefOf(at block.Ref) *BlockRef {
	return &BlockRef{Number: at.Number, Hash: at.Hash, Timestamp: at.Timestamp}
}

// TokenAmount is an amount of a token in its base units.
type TokenAmount struct {
	Token  Token  `json:"token"`
	Amount string `json:"amount"`
}

// Handler identifies where a strike's liquidity sits.
type Handler struct {
	Name       string     `json:"name"`
	Deprecated bool       `json:"deprecated"`
	Handler    HandlerRef `json:"handler"`
	Pool       string     `json:"pool"`
}

// HandlerRef is the inner handler object: the interface types it as an
// object, so it carries the handler contract's address.
type HandlerRef struct {
	Address string `json:"address"`
}

// HookRules is the machine-readable form of a range's hook: the rules its
// onPositionUse enforces at purchase (exercise is never gated by a hook).
type HookRules struct {
	// Name is "none" for a range without a hook, "unknown" for a hook the
	// gateway has no rules for, else the hook contract's name.
	Name string `json:"name"`
	// Known is false for an unknown hook: it may refuse any purchase.
	Known bool `json:"known"`
	// MaxTTL is the longest option ttl in seconds the hook accepts; nil: no bound.
	MaxTTL *int64 `json:"maxTtl"`
	// NoWeekends: purchases revert while the block's UTC day is a Saturday or Sunday.
	NoWeekends bool `json:"noWeekends"`
	// MinIV: purchases revert unless the market's optionPricing().ttlToVol(ttl)
	// is at least this; nil: no floor.
	MinIV *uint64 `json:"minIv"`
}

// hookRules states what buying from a range with this hook requires: from
// the configuration's hooks registry; a hook not in it is "unknown" (its
// rules are not guessed).
func HookRulesOf(c *config.Chain, hook common.Address) HookRules {
	if hook == (common.Address{}) {
		return HookRules{Name: "none", Known: true}
	}
	h, ok := c.Hooks[hook]
	if !ok {
		return HookRules{Name: "unknown", Known: false}
	}
	out := HookRules{Name: h.Name, Known: true, NoWeekends: h.NoWeekends}
	if h.MaxTTL > 0 {
		ttl := int64(h.MaxTTL.D() / time.Second)
		out.MaxTTL = &ttl
	}
	if h.MinIV > 0 {
		iv := h.MinIV
		out.MinIV = &iv
	}
	return out
}

func SubgraphGarbage(err error) error {
	return problem.Wrap(problem.SubgraphError, err, "the subgraph returned a strike that does not make sense")
}

func Ptr(s string) *string { return &s }

// Token is the token object of the responses.
type Token struct {
	Address  string `json:"address"`
	Decimals string `json:"decimals"`
	Symbol   string `json:"symbol"`
}

func TokenOf(t chain.Token) Token {
	return Token{Address: t.Address.Hex(), Decimals: fmt.Sprint(t.Decimals), Symbol: t.Symbol}
}

// pastUint256 names an argument of the built calldata that its ABI type
// cannot hold (contracts.RangeError: the most the purchase may cost,
// premium plus fee with slippage, past 2^256-1) as the refusal it is,
// rather than the approval and mintOption that encoded it modulo 2^256
// while the answer showed the whole number.
func PastUint256(err error) error {
	var re *contracts.RangeError
	if errors.As(err, &re) {
		return problem.Wrap(problem.PurchaseWouldRevert, err, "the most this purchase may cost (premium plus fee, with slippage) is %s, past 2^256-1: no approval can cover it and mintOption would revert", re.Value)
	}
	return err
}

// ApprovalSteps are approvals as the first steps of a probed simulation
// (chain.SimulateLP): a prepare that hands out approvals runs them, then
// its own transaction, from the user in one eth_call, so what reverts only
// once the allowance is in place (a short balance, a handler pulling more
// than it was approved for) is refused before anything is signed.
func ApprovalSteps(as []Approval) []chain.LPStep {
	steps := make([]chain.LPStep, len(as))
	for i, a := range as {
		steps[i] = chain.LPStep{To: common.HexToAddress(a.Tx.To), Data: common.FromHex(a.Tx.Data)}
	}
	return steps
}

// ApprovalRevert is the error of the first approval step of outcomes that
// reverted (a token refusing to change a non-zero allowance, say), nil
// when every approval went through.
func ApprovalRevert(code *problem.Code, as []Approval, user common.Address, at uint64, outcomes []chain.StepOutcome) error {
	for i := range as {
		if rev := outcomes[i].Revert; rev != nil {
			return problem.Wrap(code, rev, "the approval of %s to %s reverts when simulated from %s at block %d: %s", as[i].Token, as[i].Spender, user.Hex(), at, rev.Reason)
		}
	}
	return nil
}
