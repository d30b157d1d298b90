package orders

import (
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// PrepareRequest asks for an order to sign. A limit exercise names the
// option (Market, TokenID) and MinProfit; a limit purchase the Purchase
// terms. Deadline nil means the option's expiry (exercise) or a day after
// the chain's time (purchase).
type PrepareRequest struct {
	ChainID   uint64
	Kind      Kind
	User      common.Address
	Market    common.Address
	TokenID   *big.Int
	MinProfit *big.Int
	Deadline  *big.Int
	Purchase  contracts.PurchaseOrderData
}

// TypedData is EIP-712 typed data as eth_signTypedData_v4 takes it.
type TypedData struct {
	Types       map[string][]TypedField `json:"types"`
	PrimaryType string                  `json:"primaryType"`
	Domain      TypedDomain             `json:"domain"`
	Message     map[string]any          `json:"message"`
}

// TypedField is one member of a typed-data struct.
type TypedField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// TypedDomain is the contract's EIP-712 domain.
type TypedDomain struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	ChainID           uint64 `json:"chainId"`
	VerifyingContract string `json:"verifyingContract"`
}

// Step is a transaction the user sends before the order can be filled
// (the delegation, or the premium token's allowance), simulated.
type Step struct {
	Why       string   `json:"why"`
	Tx        vocab.Tx `json:"tx"`
	From      string   `json:"from"`
	Simulated bool     `json:"simulated"`
}

// Prepared is an order to sign: the typed data, the order it stands for
// (POST it back with the signature added), its hash and digest, and the
// transactions to send first, in order.
type Prepared struct {
	Kind      Kind        `json:"kind"`
	TypedData TypedData   `json:"typedData"`
	Order     SignedOrder `json:"order"`
	Hash      string      `json:"hash"`
	Digest    string      `json:"digest"`
	Before    []Step      `json:"before"`
}

// Prepare builds the typed data of a limit exercise or purchase for the
// user, after the checks the book will make (ownership and expiry, or
// the market), and the delegation or approval still missing.
func (s *Orders) Prepare(ctx context.Context, req PrepareRequest) (Prepared, error) {
	up, err := s.contractOf(req.ChainID)
	if err != nil {
		return Prepared{}, err
	}
	c := checked{up: up, kind: req.Kind, market: req.Market, tokenID: req.TokenID, purchase: req.Purchase}
	c.order = Order{LimitOrder: contracts.LimitOrder{Maker: req.User, Flags: FlagsExercise}}
	if req.Kind == KindPurchase {
		c.order.Flags = FlagsPurchase
		req.Purchase.Market = req.Market
		c.purchase = req.Purchase
		if c.order.Data, err = contracts.EncodePurchaseData(req.Purchase); err != nil {
			return Prepared{}, problem.InvalidParam("tickLower", "the purchase terms do not encode: %v", err)
		}
	} else if c.order.Data, err = contracts.EncodeExerciseData(req.MinProfit, req.TokenID, req.Market); err != nil {
		return Prepared{}, problem.InvalidParam("minProfit", "the terms do not encode: %v", err)
	}
	c.order.Deadline = big.NewInt(1 << 62) // judged below, once the chain's time is known
	if err := s.knownMarket(ctx, c); err != nil {
		return Prepared{}, err
	}
	now, st, err := s.chainState(ctx, &c)
	if err != nil {
		return Prepared{}, err
	}
	c.order.CreatedAt = big.NewInt(now)
	c.order.Deadline = deadlineOf(req, now, st)
	steps, err := s.steps(ctx, c, now, st)
	if err != nil {
		return Prepared{}, err
	}
	o := c.order.Contract()
	so := SignedOrder{ChainID: req.ChainID, CreatedAt: Uint{o.CreatedAt}, Deadline: Uint{o.Deadline}, Maker: o.Maker.Hex(),
		Validator: common.Address{}.Hex(), Flags: Uint{big.NewInt(int64(o.Flags))}, Data: hexutil.Encode(o.Data)}
	return Prepared{Kind: req.Kind, TypedData: typedData(req.ChainID, up.Config.LimitOrders, o), Order: so,
		Hash: StructHash(o).Hex(), Digest: Digest(req.ChainID, up.Config.LimitOrders, o).Hex(), Before: steps}, nil
}

func deadlineOf(req PrepareRequest, now int64, st chain.OrderState) *big.Int {
	switch {
	case req.Deadline != nil:
		return req.Deadline
	case req.Kind == KindExercise:
		return big.NewInt(st.Expiry)
	}
	return big.NewInt(now + 24*3600)
}

// steps checks the order as Submit will, except for what a transaction
// of the user's can fix, and prepares those transactions.
func (s *Orders) steps(ctx context.Context, c checked, now int64, st chain.OrderState) ([]Step, error) {
	user := c.order.Maker
	if c.kind == KindPurchase {
		return s.approveStep(ctx, c, now, st)
	}
	st.Delegated = true // checked below, as a step
	if err := c.fillable(now, st); err != nil {
		return nil, err
	}
	_, enabled, err := c.up.Chain.DelegateView(ctx, c.market, common.Address{}, []chain.Delegation{{Owner: user, Delegate: c.up.Config.LimitOrders}})
	if err != nil {
		return nil, err
	}
	if enabled[0] {
		return []Step{}, nil
	}
	data, err := c.up.Chain.SimulateDelegate(ctx, user, c.market, c.up.Config.LimitOrders, true)
	if err != nil {
		var rev *chain.RevertError
		if errors.As(err, &rev) {
			return nil, problem.Wrap(problem.DelegateWouldRevert, err, "simulating updateExerciseDelegate from the user reverted: %s", rev.Reason)
		}
		return nil, err
	}
	return []Step{{Why: "make LimitOrders the user's exercise delegate on the market (updateExerciseDelegate): the contract exercises the option when the order fills; it covers every option the user holds there until revoked",
		Tx: vocab.Tx{To: c.market.Hex(), Data: hexutil.Encode(data)}, From: user.Hex(), Simulated: true}}, nil
}

// approveStep is the premium token's approve(LimitOrders, maxCostAllowance
// + comission) when the allowance is short, simulated from the user; a
// balance short of it cannot be fixed by a transaction of the book's.
func (s *Orders) approveStep(ctx context.Context, c checked, now int64, st chain.OrderState) ([]Step, error) {
	need := new(big.Int).Add(c.purchase.MaxCostAllowance, c.purchase.Commission)
	if st.Balance.Cmp(need) < 0 {
		return nil, problem.New(problem.OrderNotFillable, "a fill pulls maxCostAllowance + comission = %s of the premium token from the user, who holds %s", need, st.Balance)
	}
	if st.Allowance.Cmp(need) >= 0 {
		return []Step{}, c.fillable(now, st)
	}
	st.Allowance = need
	if err := c.fillable(now, st); err != nil {
		return nil, err
	}
	data := contracts.ApproveCall(c.up.Config.LimitOrders, need)
	if _, err := c.up.Chain.SimulateAtHead(ctx, c.order.Maker, c.premium, data); err != nil {
		return nil, err
	}
	return []Step{{Why: "let LimitOrders pull maxCostAllowance + comission of the premium token (approve): a fill takes the premium (refunding what the market does not charge) and pays the filler the commission",
		Tx: vocab.Tx{To: c.premium.Hex(), Data: hexutil.Encode(data)}, From: c.order.Maker.Hex(), Simulated: true}}, nil
}

// typedData is the order as eth_signTypedData_v4 takes it: integers as
// decimal strings (flags as a number), bytes as 0x-hex.
func typedData(chainID uint64, contract common.Address, o contracts.LimitOrder) TypedData {
	return TypedData{
		Types: map[string][]TypedField{
			"EIP712Domain": {{"name", "string"}, {"version", "string"}, {"chainId", "uint256"}, {"verifyingContract", "address"}},
			"Order": {{"createdAt", "uint256"}, {"deadline", "uint256"}, {"maker", "address"}, {"validator", "address"},
				{"flags", "uint32"}, {"data", "bytes"}},
		},
		PrimaryType: "Order",
		Domain:      TypedDomain{Name: DomainName, Version: DomainVersion, ChainID: chainID, VerifyingContract: contract.Hex()},
		Message: map[string]any{"createdAt": o.CreatedAt.String(), "deadline": o.Deadline.String(), "maker": o.Maker.Hex(),
			"validator": o.Validator.Hex(), "flags": o.Flags, "data": hexutil.Encode(o.Data)},
	}
}
