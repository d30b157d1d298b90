package contracts

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// orderTuple is LimitOrders' Order struct as an ABI tuple.
const orderTuple = `{"name":"order","type":"tuple","components":[
   {"name":"createdAt","type":"uint256"},{"name":"deadline","type":"uint256"},{"name":"maker","type":"address"},
   {"name":"validator","type":"address"},{"name":"flags","type":"uint32"},{"name":"data","type":"bytes"}]}`

const sigTuple = `{"name":"sig","type":"tuple","components":[{"name":"r","type":"bytes32"},{"name":"s","type":"bytes32"},{"name":"v","type":"uint8"}]}`

// LimitOrders is stryke-xyz/clamm's LimitOrders
// (src/periphery/limit-orders/LimitOrders.sol): the fills and cancel the
// gateway prepares, the state it reads and the events that tell a fill
// from a cancel (isOrderCancelled is set by both).
var LimitOrders = mustABI(`[
 {"type":"function","name":"isOrderCancelled","stateMutability":"view","inputs":[{"name":"","type":"bytes32"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"exerciseOption","stateMutability":"nonpayable","inputs":[` + orderTuple + `,` + sigTuple + `,
   {"name":"swaps","type":"tuple","components":[{"name":"swapper","type":"address[]"},{"name":"swapData","type":"bytes[]"}]}],
  "outputs":[{"name":"comission","type":"uint256"}]},
 {"type":"function","name":"purchaseOption","stateMutability":"nonpayable","inputs":[` + orderTuple + `,` + sigTuple + `,
   {"name":"opTicks","type":"tuple[]","components":[{"name":"_handler","type":"address"},{"name":"pool","type":"address"},{"name":"hook","type":"address"},
   {"name":"tickLower","type":"int24"},{"name":"tickUpper","type":"int24"},{"name":"liquidityToUse","type":"uint256"}]}],
  "outputs":[{"name":"comission","type":"uint256"}]},
 {"type":"function","name":"cancel","stateMutability":"nonpayable","inputs":[` + orderTuple + `,` + sigTuple + `],"outputs":[]},
 {"type":"event","name":"LogExerciseOrderFilled","anonymous":false,"inputs":[` + orderTuple + `,{"name":"comission","type":"uint256","indexed":false},{"name":"executor","type":"address","indexed":false}]},
 {"type":"event","name":"LogPurchasedOrderFilled","anonymous":false,"inputs":[` + orderTuple + `,{"name":"comission","type":"uint256","indexed":false},{"name":"executor","type":"address","indexed":false}]},
 {"type":"event","name":"LogOrderCancelled","anonymous":false,"inputs":[` + orderTuple + `]}
]`)

// LimitOrder is the contract's Order; LimitSig its Signature (r, s, v).
type LimitOrder struct {
	CreatedAt *big.Int
	Deadline  *big.Int
	Maker     common.Address
	Validator common.Address
	Flags     uint32
	Data      []byte
}

// LimitSig is the contract's Signature tuple.
type LimitSig struct {
	R [32]byte
	S [32]byte
	V uint8
}

// Bytes is r ‖ s ‖ v, the 65-byte form wallets return.
func (s LimitSig) Bytes() []byte {
	return append(append(append([]byte{}, s.R[:]...), s.S[:]...), s.V)
}

// ExerciseSwaps is exerciseOption's ExerciseOptionsSwapData: a swapper and
// its data per leg index.
type ExerciseSwaps struct {
	Swapper  []common.Address
	SwapData [][]byte
}

// LimitLeg is one OptionTicks entry of purchaseOption.
type LimitLeg struct {
	Handler        common.Address `abi:"_handler"`
	Pool           common.Address
	Hook           common.Address
	TickLower      *big.Int
	TickUpper      *big.Int
	LiquidityToUse *big.Int
}

// ExerciseOrderCall is exerciseOption(order, sig, swaps).
func ExerciseOrderCall(o LimitOrder, s LimitSig, swaps ExerciseSwaps) ([]byte, error) {
	return LimitOrders.Pack("exerciseOption", o, s, swaps)
}

// PurchaseOrderCall is purchaseOption(order, sig, legs).
func PurchaseOrderCall(o LimitOrder, s LimitSig, legs []LimitLeg) ([]byte, error) {
	return LimitOrders.Pack("purchaseOption", o, s, legs)
}

// CancelOrderCall is cancel(order, sig).
func CancelOrderCall(o LimitOrder, s LimitSig) ([]byte, error) {
	return LimitOrders.Pack("cancel", o, s)
}

// UnpackLimitUint is a uint256 return (exerciseOption's and
// purchaseOption's commission).
func UnpackLimitUint(method string, raw []byte) (*big.Int, error) {
	vals, err := LimitOrders.Unpack(method, raw)
	if err != nil || len(vals) != 1 {
		return nil, fmt.Errorf("%s: %v", method, err)
	}
	v, ok := vals[0].(*big.Int)
	if !ok {
		return nil, fmt.Errorf("%s: %T", method, vals[0])
	}
	return v, nil
}

// UnpackLimitOrderLog decodes the order a LimitOrders event carries (the
// first field of each; nothing is indexed).
func UnpackLimitOrderLog(event string, data []byte) (LimitOrder, error) {
	vals, err := LimitOrders.Events[event].Inputs.Unpack(data)
	if err != nil || len(vals) == 0 {
		return LimitOrder{}, fmt.Errorf("%s: %v", event, err)
	}
	raw, ok := vals[0].(struct {
		CreatedAt *big.Int       `json:"createdAt"`
		Deadline  *big.Int       `json:"deadline"`
		Maker     common.Address `json:"maker"`
		Validator common.Address `json:"validator"`
		Flags     uint32         `json:"flags"`
		Data      []byte         `json:"data"`
	})
	if !ok {
		return LimitOrder{}, fmt.Errorf("%s: order is %T", event, vals[0])
	}
	return LimitOrder(raw), nil
}

// PurchaseOrderData is a limit purchase's data (the contract's
// PurchaseOrder), nine words.
type PurchaseOrderData struct {
	MaxCostAllowance *big.Int
	TTL              *big.Int
	Market           common.Address
	Liquidity        *big.Int
	Commission       *big.Int
	TTLThreshold     *big.Int
	TickLower        int32
	TickUpper        int32
	IsCall           bool
}

// errDirty: a word the contract's abi.decode would refuse (an address
// or int24 with stray high bits, a bool other than 0 or 1).
var errDirty = errors.New("a word is not the canonical ABI encoding of its type (the contract's abi.decode reverts on it)")

var (
	exerciseDataArgs = mustArgs("uint256", "uint256", "address")
	purchaseDataArgs = mustArgs("uint256", "uint256", "address", "uint256", "uint256", "uint256", "int24", "int24", "bool")
)

// EncodeExerciseData is abi.encode(minProfit, tokenId, optionMarket).
func EncodeExerciseData(minProfit, tokenID *big.Int, market common.Address) ([]byte, error) {
	return exerciseDataArgs.Pack(minProfit, tokenID, market)
}

// DecodeExerciseData reads the three leading words as the contract's
// abi.decode does (trailing words are accepted, as there).
func DecodeExerciseData(data []byte) (minProfit, tokenID *big.Int, market common.Address, err error) {
	if len(data) < 96 {
		return nil, nil, common.Address{}, fmt.Errorf("%d bytes, want at least 96", len(data))
	}
	vals, err := exerciseDataArgs.Unpack(data[:96])
	if err != nil {
		return nil, nil, common.Address{}, err
	}
	minProfit, tokenID, market = vals[0].(*big.Int), vals[1].(*big.Int), vals[2].(common.Address)
	if again, _ := EncodeExerciseData(minProfit, tokenID, market); !bytes.Equal(again, data[:96]) {
		return nil, nil, common.Address{}, errDirty
	}
	return minProfit, tokenID, market, nil
}

// EncodePurchaseData is abi.encode of the nine fields in the contract's order.
func EncodePurchaseData(p PurchaseOrderData) ([]byte, error) {
	return purchaseDataArgs.Pack(p.MaxCostAllowance, p.TTL, p.Market, p.Liquidity, p.Commission, p.TTLThreshold,
		big.NewInt(int64(p.TickLower)), big.NewInt(int64(p.TickUpper)), p.IsCall)
}

// DecodePurchaseData reads the nine leading words.
func DecodePurchaseData(data []byte) (PurchaseOrderData, error) {
	if len(data) < 9*32 {
		return PurchaseOrderData{}, fmt.Errorf("%d bytes, want at least 288", len(data))
	}
	v, err := purchaseDataArgs.Unpack(data[:9*32])
	if err != nil {
		return PurchaseOrderData{}, err
	}
	p := PurchaseOrderData{MaxCostAllowance: v[0].(*big.Int), TTL: v[1].(*big.Int), Market: v[2].(common.Address),
		Liquidity: v[3].(*big.Int), Commission: v[4].(*big.Int), TTLThreshold: v[5].(*big.Int),
		TickLower: int32(v[6].(*big.Int).Int64()), TickUpper: int32(v[7].(*big.Int).Int64()), IsCall: v[8].(bool)}
	if again, err := EncodePurchaseData(p); err != nil || !bytes.Equal(again, data[:9*32]) {
		return PurchaseOrderData{}, errDirty
	}
	return p, nil
}

// ApproveCall is ERC20 approve(spender, amount): a limit purchase's
// maker lets LimitOrders pull the premium and the commission.
func ApproveCall(spender common.Address, amount *big.Int) []byte {
	data, err := ERC20Approve.Pack("approve", spender, amount)
	if err != nil {
		panic("contracts: pack approve: " + err.Error()) // static types: a bug, not input
	}
	return data
}
