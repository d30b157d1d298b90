package swap

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// aggregationRouterV5 holds the AggregationRouterV5 entry points whose
// minimum and recipient can be read from the calldata. Others (clipperSwap,
// fillOrder*, the RFQ paths) are refused: their minimum is not a field.
var aggregationRouterV5 = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
 {"type":"function","name":"swap","stateMutability":"payable","inputs":[
   {"name":"executor","type":"address"},
   {"name":"desc","type":"tuple","components":[
     {"name":"srcToken","type":"address"},{"name":"dstToken","type":"address"},
     {"name":"srcReceiver","type":"address"},{"name":"dstReceiver","type":"address"},
     {"name":"amount","type":"uint256"},{"name":"minReturnAmount","type":"uint256"},{"name":"flags","type":"uint256"}]},
   {"name":"permit","type":"bytes"},{"name":"data","type":"bytes"}],
  "outputs":[{"name":"returnAmount","type":"uint256"},{"name":"spentAmount","type":"uint256"}]},
 {"type":"function","name":"uniswapV3Swap","stateMutability":"payable","inputs":[
   {"name":"amount","type":"uint256"},{"name":"minReturn","type":"uint256"},{"name":"pools","type":"uint256[]"}],
  "outputs":[{"name":"returnAmount","type":"uint256"}]},
 {"type":"function","name":"uniswapV3SwapTo","stateMutability":"payable","inputs":[
   {"name":"recipient","type":"address"},{"name":"amount","type":"uint256"},{"name":"minReturn","type":"uint256"},{"name":"pools","type":"uint256[]"}],
  "outputs":[{"name":"returnAmount","type":"uint256"}]},
 {"type":"function","name":"uniswapV3SwapToWithPermit","stateMutability":"nonpayable","inputs":[
   {"name":"recipient","type":"address"},{"name":"srcToken","type":"address"},{"name":"amount","type":"uint256"},
   {"name":"minReturn","type":"uint256"},{"name":"pools","type":"uint256[]"},{"name":"permit","type":"bytes"}],
  "outputs":[{"name":"returnAmount","type":"uint256"}]},
 {"type":"function","name":"unoswap","stateMutability":"payable","inputs":[
   {"name":"srcToken","type":"address"},{"name":"amount","type":"uint256"},{"name":"minReturn","type":"uint256"},{"name":"pools","type":"uint256[]"}],
  "outputs":[{"name":"returnAmount","type":"uint256"}]},
 {"type":"function","name":"unoswapTo","stateMutability":"payable","inputs":[
   {"name":"recipient","type":"address"},{"name":"srcToken","type":"address"},{"name":"amount","type":"uint256"},
   {"name":"minReturn","type":"uint256"},{"name":"pools","type":"uint256[]"}],
  "outputs":[{"name":"returnAmount","type":"uint256"}]},
 {"type":"function","name":"unoswapToWithPermit","stateMutability":"nonpayable","inputs":[
   {"name":"recipient","type":"address"},{"name":"srcToken","type":"address"},{"name":"amount","type":"uint256"},
   {"name":"minReturn","type":"uint256"},{"name":"pools","type":"uint256[]"},{"name":"permit","type":"bytes"}],
  "outputs":[{"name":"returnAmount","type":"uint256"}]}
]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// RouterCall is what AggregationRouterV5 calldata commits to.
type RouterCall struct {
	Method    string
	Amount    *big.Int // of the source token, taken from the caller
	MinReturn *big.Int // the router reverts below it
	// Recipient gets the output; zero for entry points that pay the caller
	// (uniswapV3Swap, unoswap): under the OneInchSwapper that is the
	// swapper, not the market.
	Recipient common.Address
	// MinReturnAt is the byte offset of MinReturn's 32-byte word in the
	// calldata (every entry point holds it in its static head), so a
	// replay can set another minimum without re-encoding the call.
	MinReturnAt int
}

// minReturnWord is the head word holding the minimum, per entry point:
// swap(executor, desc, ...) inlines its static desc tuple, whose sixth
// field is minReturnAmount; the others take it as a plain argument.
var minReturnWord = map[string]int{
	"swap": 6, "uniswapV3Swap": 1, "unoswap": 2, "uniswapV3SwapTo": 2,
	"uniswapV3SwapToWithPermit": 3, "unoswapTo": 3, "unoswapToWithPermit": 3,
}

// DecodeRouterCall reads the amount, minimum and recipient out of
// AggregationRouterV5 calldata. Calldata of another function, or that does
// not decode, is an error: a minimum the gateway cannot read is not one it
// may report.
func DecodeRouterCall(data []byte) (RouterCall, error) {
	if len(data) < 4 {
		return RouterCall{}, fmt.Errorf("router calldata of %d bytes", len(data))
	}
	m, err := aggregationRouterV5.MethodById(data[:4])
	if err != nil {
		return RouterCall{}, fmt.Errorf("router calldata selector %x is not an AggregationRouterV5 entry point whose minimum the gateway can read", data[:4])
	}
	vals, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return RouterCall{}, fmt.Errorf("router calldata for %s does not decode: %w", m.Name, err)
	}
	c := RouterCall{Method: m.Name}
	switch m.Name {
	case "swap":
		d := vals[1].(struct {
			SrcToken        common.Address `json:"srcToken"`
			DstToken        common.Address `json:"dstToken"`
			SrcReceiver     common.Address `json:"srcReceiver"`
			DstReceiver     common.Address `json:"dstReceiver"`
			Amount          *big.Int       `json:"amount"`
			MinReturnAmount *big.Int       `json:"minReturnAmount"`
			Flags           *big.Int       `json:"flags"`
		})
		c.Amount, c.MinReturn, c.Recipient = d.Amount, d.MinReturnAmount, d.DstReceiver
	case "uniswapV3Swap":
		c.Amount, c.MinReturn = vals[0].(*big.Int), vals[1].(*big.Int)
	case "unoswap":
		c.Amount, c.MinReturn = vals[1].(*big.Int), vals[2].(*big.Int)
	case "uniswapV3SwapTo":
		c.Recipient, c.Amount, c.MinReturn = vals[0].(common.Address), vals[1].(*big.Int), vals[2].(*big.Int)
	default: // uniswapV3SwapToWithPermit, unoswapTo, unoswapToWithPermit
		c.Recipient, c.Amount, c.MinReturn = vals[0].(common.Address), vals[2].(*big.Int), vals[3].(*big.Int)
	}
	c.MinReturnAt = 4 + 32*minReturnWord[m.Name]
	if w := data[c.MinReturnAt : c.MinReturnAt+32]; new(big.Int).SetBytes(w).Cmp(c.MinReturn) != 0 {
		return RouterCall{}, fmt.Errorf("router calldata for %s: minimum not at its head word", m.Name)
	}
	return c, nil
}
