package swap

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// The entry points decode at AggregationRouterV5's published selectors,
// and their minimum, amount and recipient come out of the right words.
func TestDecodeRouterCall(t *testing.T) {
	for name, sel := range map[string]string{"swap": "0x12aa3caf", "uniswapV3Swap": "0xe449022e", "unoswap": "0x0502b1c5"} {
		if got := hexutil.Encode(aggregationRouterV5.Methods[name].ID); got != sel {
			t.Errorf("%s selector %s, want %s", name, got, sel)
		}
	}
	market := common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744")
	type desc struct {
		SrcToken, DstToken, SrcReceiver, DstReceiver common.Address
		Amount, MinReturnAmount, Flags               *big.Int
	}
	data, err := aggregationRouterV5.Pack("swap", common.Address{1}, desc{common.Address{2}, common.Address{3}, common.Address{1}, market,
		big.NewInt(1000), big.NewInt(987), new(big.Int)}, []byte{}, []byte{9})
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeRouterCall(data)
	if err != nil || c.Method != "swap" || c.Amount.Int64() != 1000 || c.MinReturn.Int64() != 987 || c.Recipient != market {
		t.Fatalf("swap: %v %+v", err, c)
	}
	data, _ = aggregationRouterV5.Pack("unoswapTo", market, common.Address{2}, big.NewInt(5), big.NewInt(4), []*big.Int{big.NewInt(1)})
	if c, err := DecodeRouterCall(data); err != nil || c.Amount.Int64() != 5 || c.MinReturn.Int64() != 4 || c.Recipient != market {
		t.Fatalf("unoswapTo: %v %+v", err, c)
	}
	data, _ = aggregationRouterV5.Pack("uniswapV3Swap", big.NewInt(5), big.NewInt(4), []*big.Int{big.NewInt(1)})
	if c, err := DecodeRouterCall(data); err != nil || c.MinReturn.Int64() != 4 || c.Recipient != (common.Address{}) {
		t.Fatalf("uniswapV3Swap: %v %+v", err, c)
	}
	// clipperSwap's minimum is not a field; unknown selectors and truncated
	// calldata are refused, never read as a zero minimum.
	for _, bad := range [][]byte{common.FromHex("0x84bd6d29"), {1, 2}, data[:40]} {
		if _, err := DecodeRouterCall(bad); err == nil || !strings.Contains(err.Error(), "") {
			t.Errorf("%x decoded", bad)
		}
	}
}
