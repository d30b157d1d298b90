package swap

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// batch answers a JSON-RPC batch element by element, as a node does: the
// HTTP round trip succeeds while single elements fail.
type batch struct{ errs []error }

func (b batch) BatchCallContext(_ context.Context, els []rpc.BatchElem) error {
	for i := range els {
		if i < len(b.errs) && b.errs[i] != nil {
			els[i].Error = b.errs[i]
			continue
		}
		out, _ := contracts.QuoterV2.Methods["quoteExactInputSingle"].Outputs.Pack(big.NewInt(1000), new(big.Int), uint32(0), new(big.Int))
		*(els[i].Result.(*hexutil.Bytes)) = out
	}
	return nil
}

type revertErr struct{}

func (revertErr) Error() string          { return "execution reverted" }
func (revertErr) ErrorCode() int         { return 3 }
func (revertErr) ErrorData() interface{} { return "0x" }

// One failed element in a batch fails the quote with a code for its kind,
// never a quote built from a zero value.
func TestBatchWithOneFailedElement(t *testing.T) {
	slip, _ := clamm.ParseSlippage("1", 50)
	reqs := []Request{{AmountIn: big.NewInt(1), Slippage: slip}, {AmountIn: big.NewInt(2), Slippage: slip}}
	q := &UniV3{Quoter: common.HexToAddress("0x61fFE014bA17989E743c5F6cB21bF9697530B21e")}
	for _, c := range []struct {
		err  error
		code *problem.Code
	}{
		{revertErr{}, problem.QuoteFailed},
		{errors.New("header not found"), problem.QuoteError},
	} {
		q.RPC = batch{errs: []error{nil, c.err}}
		if _, err := q.Quote(context.Background(), reqs); problem.As(err).Code != c.code {
			t.Errorf("%v: %v, want %s", c.err, err, c.code)
		}
	}
	q.RPC = batch{}
	quotes, err := q.Quote(context.Background(), reqs)
	if err != nil || len(quotes) != 2 || quotes[1].AmountOut.Int64() != 1000 || quotes[1].MinOut.Int64() != 990 {
		t.Fatalf("%v %+v", err, quotes)
	}
}
