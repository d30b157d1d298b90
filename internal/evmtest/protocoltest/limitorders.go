package protocoltest

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// The limit-orders contract's flags (stryke-xyz/clamm OrderLib).
const (
	OTCFlag        uint32 = 0x001
	MarketFillFlag uint32 = 0x010
	SellFlag       uint32 = 0x100
	BuyFlag        uint32 = 0x200
)

// LimitOrder is the contract's Order tuple, LimitSig its Signature
// (r, s, v in that order): the gateway's own types (package contracts).
type (
	LimitOrder = contracts.LimitOrder
	LimitSig   = contracts.LimitSig
)

// DeployLimitOrders deploys the limit-orders contract (sol/LimitOrders.sol).
func (p *Protocol) DeployLimitOrders() common.Address {
	p.LimitOrders = p.Chain.Deploy(LimitOrdersC)
	p.register(p.LimitOrders, LimitOrdersC.ABI)
	return p.LimitOrders
}

var (
	u256, _   = abi.NewType("uint256", "", nil)
	addrT, _  = abi.NewType("address", "", nil)
	i24, _    = abi.NewType("int24", "", nil)
	boolT, _  = abi.NewType("bool", "", nil)
	exerciseD = abi.Arguments{{Type: u256}, {Type: u256}, {Type: addrT}}
	purchaseD = abi.Arguments{{Type: u256}, {Type: u256}, {Type: addrT}, {Type: u256}, {Type: u256}, {Type: u256}, {Type: i24}, {Type: i24}, {Type: boolT}}
)

// ExerciseOrderData is a limit exercise's data: abi.encode(minProfit,
// tokenId, optionMarket).
func ExerciseOrderData(minProfit, tokenID *big.Int, market common.Address) []byte {
	b, err := exerciseD.Pack(minProfit, tokenID, market)
	if err != nil {
		panic(err)
	}
	return b
}

// PurchaseOrder is a limit purchase's data (the contract's PurchaseOrder).
type PurchaseOrder struct {
	MaxCostAllowance, TTL *big.Int
	Market                common.Address
	Liquidity, Commission *big.Int
	TTLThreshold          *big.Int
	TickLower, TickUpper  int
	IsCall                bool
}

// Encode is abi.encode of the nine fields, in the contract's order.
func (o PurchaseOrder) Encode() []byte {
	b, err := purchaseD.Pack(o.MaxCostAllowance, o.TTL, o.Market, o.Liquidity, o.Commission, o.TTLThreshold,
		big.NewInt(int64(o.TickLower)), big.NewInt(int64(o.TickUpper)), o.IsCall)
	if err != nil {
		panic(err)
	}
	return b
}

// LimitTypedData is the order as EIP-712 typed data for the chain's
// limit-orders contract, the way a wallet's eth_signTypedData_v4 gets it.
func (p *Protocol) LimitTypedData(o LimitOrder) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"}},
			"Order": {{Name: "createdAt", Type: "uint256"}, {Name: "deadline", Type: "uint256"},
				{Name: "maker", Type: "address"}, {Name: "validator", Type: "address"},
				{Name: "flags", Type: "uint32"}, {Name: "data", Type: "bytes"}},
		},
		PrimaryType: "Order",
		Domain: apitypes.TypedDataDomain{Name: "Stryke Limit Orders", Version: "1",
			ChainId: math.NewHexOrDecimal256(ChainID), VerifyingContract: p.LimitOrders.Hex()},
		Message: apitypes.TypedDataMessage{
			"createdAt": o.CreatedAt.String(), "deadline": o.Deadline.String(),
			"maker": o.Maker.Hex(), "validator": o.Validator.Hex(),
			"flags": fmt.Sprint(o.Flags), "data": hexutil.Encode(o.Data),
		},
	}
}

// SignTyped signs EIP-712 typed data with a's key, as a wallet does
// (go-ethereum's own TypedDataAndHash: an encoder independent of the
// gateway's), and returns the signature with v = 27 or 28.
func SignTyped(a *Account, td apitypes.TypedData) (LimitSig, error) {
	digest, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return LimitSig{}, err
	}
	sig, err := crypto.Sign(digest, a.Key)
	if err != nil {
		return LimitSig{}, err
	}
	var s LimitSig
	copy(s.R[:], sig[:32])
	copy(s.S[:], sig[32:64])
	s.V = sig[64] + 27
	return s, nil
}

// SignOrder signs o for this chain's limit-orders contract with a's key.
func (p *Protocol) SignOrder(a *Account, o LimitOrder) LimitSig {
	s, err := SignTyped(a, p.LimitTypedData(o))
	if err != nil {
		p.Chain.T.Fatal(err)
	}
	return s
}

// ExerciseOrder is a take-profit: SELL + MARKET_FILL on option id of the
// V2 market, signed by owner, with createdAt the head's time.
func (p *Protocol) ExerciseOrder(owner *Account, id, minProfit *big.Int, deadline uint64) (LimitOrder, LimitSig) {
	o := LimitOrder{CreatedAt: new(big.Int).SetUint64(p.Chain.Now()), Deadline: new(big.Int).SetUint64(deadline),
		Maker: owner.Addr, Flags: SellFlag | MarketFillFlag, Data: ExerciseOrderData(minProfit, id, p.Market)}
	return o, p.SignOrder(owner, o)
}

// SwapLegs is exerciseOption's ExerciseOptionsSwapData tuple.
type SwapLegs struct {
	Swapper  []common.Address
	SwapData [][]byte
}

// FillExercise calls exerciseOption(order, sig, swaps) from filler.
func (p *Protocol) FillExercise(filler *Account, o LimitOrder, s LimitSig, swaps SwapLegs) (*types.Receipt, error) {
	return p.Chain.Send(filler, p.LimitOrders, LimitOrdersC.ABI, "exerciseOption", o, s, swaps)
}

// FillPurchase calls purchaseOption(order, sig, legs) from filler.
func (p *Protocol) FillPurchase(filler *Account, o LimitOrder, s LimitSig, legs []Leg) (*types.Receipt, error) {
	ticks := make([]optionTicks, len(legs))
	for i, l := range legs {
		r := p.norm(l.Range)
		ticks[i] = optionTicks{r.Handler, r.Pool, r.Hook, bi(r.TickLower), bi(r.TickUpper), l.Liquidity}
	}
	return p.Chain.Send(filler, p.LimitOrders, LimitOrdersC.ABI, "purchaseOption", o, s, ticks)
}

// CancelOrder calls cancel(order, sig) from sender.
func (p *Protocol) CancelOrder(sender *Account, o LimitOrder, s LimitSig) (*types.Receipt, error) {
	return p.Chain.Send(sender, p.LimitOrders, LimitOrdersC.ABI, "cancel", o, s)
}

// OrderUsed reads isOrderCancelled(getOrderStructHash(o)): true once the
// order is cancelled or filled.
func (p *Protocol) OrderUsed(o LimitOrder) bool {
	h := p.Chain.Call(p.LimitOrders, LimitOrdersC.ABI, "getOrderStructHash", o)[0].([32]byte)
	return p.Chain.Call(p.LimitOrders, LimitOrdersC.ABI, "isOrderCancelled", h)[0].(bool)
}

// Approve has owner approve spender for amount of token.
func (p *Protocol) Approve(owner *Account, token, spender common.Address, amount *big.Int) (*types.Receipt, error) {
	return p.Chain.Send(owner, token, Token.ABI, "approve", spender, amount)
}
