package swap

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// The entry points decode at AggregationRouterV5's published selectors,
// and their minimum, amount and recipient come out of the right words.
func TestDecodeRouterCall(t *testing.T) {
	t.Parallel()
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
		if _, err := DecodeRouterCall(bad); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}

// A 1inch answer is used only if its calldata swaps the leg's amount and
// pays the market; its minReturn is then the quote's minimum, unchanged by
// Final.
func TestOneInchCalldataChecks(t *testing.T) {
	t.Parallel()
	market := common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744")
	type desc struct {
		SrcToken, DstToken, SrcReceiver, DstReceiver common.Address
		Amount, MinReturnAmount, Flags               *big.Int
	}
	answer := func(amount int64, to common.Address) []byte {
		data, _ := aggregationRouterV5.Pack("swap", common.Address{}, desc{common.Address{2}, common.Address{3}, common.Address{}, to,
			big.NewInt(amount), big.NewInt(900), new(big.Int)}, []byte{}, []byte{})
		return data
	}
	var data []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"toAmount":"1000","tx":{"to":"%s","data":"%s"}}`, AggregationRouterV5.Hex(), hexutil.Encode(data))
	}))
	defer srv.Close()
	slip, _ := clamm.ParseSlippage("1", 50)
	o := &OneInch{BaseURL: srv.URL, ChainID: 42161, Timeout: time.Minute}
	req := Request{AmountIn: big.NewInt(500), Receiver: market, Slippage: slip}
	for _, bad := range [][]byte{answer(499, market), answer(500, common.Address{9})} {
		data = bad
		if _, err := o.Quote(context.Background(), []Request{req}); problem.As(err).Code != problem.QuoteError {
			t.Errorf("%v", err)
		}
	}
	data = answer(500, market)
	q, err := o.Quote(context.Background(), []Request{req})
	if err != nil || q[0].MinOut.Int64() != 900 || q[0].AmountOut.Int64() != 1000 {
		t.Fatalf("%v %+v", err, q)
	}
	sd, minOut, err := o.Final(req, q[0], big.NewInt(950))
	if err != nil || minOut.Int64() != 900 || string(sd) != string(data) {
		t.Fatalf("final %v %s", err, minOut)
	}
}
