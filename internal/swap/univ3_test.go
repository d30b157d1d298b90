package swap

import (
	"context"
	"errors"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
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

// nodeErr is a node's JSON-RPC failure as go-ethereum hands it over: with
// ErrorData, like every JSON-RPC error, though it is no revert.
type nodeErr struct {
	code int
	msg  string
}

func (e nodeErr) Error() string          { return e.msg }
func (e nodeErr) ErrorCode() int         { return e.code }
func (e nodeErr) ErrorData() interface{} { return nil }

// One failed element in a batch fails the quote with a code for its kind,
// never a quote built from a zero value.
func TestBatchWithOneFailedElement(t *testing.T) {
	t.Parallel()
	slip, _ := clamm.ParseSlippage("1", 50)
	reqs := []Request{{AmountIn: big.NewInt(1), Slippage: slip}, {AmountIn: big.NewInt(2), Slippage: slip}}
	q := &UniV3{Quoter: common.HexToAddress("0x61fFE014bA17989E743c5F6cB21bF9697530B21e"), Timeout: time.Minute}
	for _, c := range []struct {
		err  error
		code *problem.Code
	}{
		{revertErr{}, problem.QuoteFailed},
		{errors.New("header not found"), problem.QuoteError},
		{nodeErr{-32000, "header not found"}, problem.QuoteError},
		{nodeErr{-32005, "rate limit exceeded"}, problem.QuoteUnavailable}, // a refusal: 503, as an HTTP 429 is
		{nodeErr{-32603, "internal error"}, problem.QuoteError},
	} {
		q.RPC = batch{errs: []error{nil, c.err}}
		if _, err := q.Quote(context.Background(), reqs); problem.As(err).Code != c.code {
			t.Errorf("%v: %v, want %s", c.err, err, c.code)
		}
	}
	q.RPC = batch{}
	quotes, err := q.Quote(context.Background(), reqs)
	if err != nil || len(quotes) != 2 || quotes[1].AmountOut.Int64() != 1000 || quotes[1].MinOut != nil {
		t.Fatalf("%v %+v", err, quotes)
	}
	// The simulation's swapData has no minimum; Final applies the slippage
	// to the output the leg has in the exercise's sequence.
	if sim, _ := clamm.UniV3SwapData(0, new(big.Int)); string(quotes[1].SwapData) != string(sim) {
		t.Fatalf("simulation swapData %x", quotes[1].SwapData)
	}
	sd, minOut, err := q.Final(reqs[1], quotes[1], big.NewInt(800))
	want, _ := clamm.UniV3SwapData(0, big.NewInt(792))
	if err != nil || minOut.Int64() != 792 || string(sd) != string(want) {
		t.Fatalf("final: %v %s %x", err, minOut, sd)
	}
}

// Through go-ethereum's client, as in production: every JSON-RPC error of a
// batch element carries ErrorData(), and only a revert is QUOTE_FAILED; a
// node failure is the upstream error it is.
func TestBatchNodeFailuresAreNotReverts(t *testing.T) {
	t.Parallel()
	node := chaintest.NewNode(t)
	srv := httptest.NewServer(node)
	defer srv.Close()
	c, err := rpc.DialHTTP(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	slip, _ := clamm.ParseSlippage("1", 50)
	reqs := []Request{{AmountIn: big.NewInt(1), Slippage: slip}}
	q := &UniV3{RPC: c, Quoter: common.HexToAddress("0x61fFE014bA17989E743c5F6cB21bF9697530B21e"), Timeout: time.Minute}
	for _, tc := range []struct {
		fault chaintest.RPCError
		code  *problem.Code
	}{
		{chaintest.RPCError{Code: 3, Message: "execution reverted", Data: "0x"}, problem.QuoteFailed},
		{chaintest.RPCError{Code: -32000, Message: "header not found"}, problem.QuoteError},
		{chaintest.RPCError{Code: -32005, Message: "rate limit exceeded"}, problem.QuoteUnavailable},
		{chaintest.RPCError{Code: -32603, Message: "internal error"}, problem.QuoteError},
	} {
		fault := tc.fault
		node.CallFault = func(string) *chaintest.RPCError { return &fault }
		if _, err := q.Quote(context.Background(), reqs); problem.As(err).Code != tc.code {
			t.Errorf("%+v: %v, want %s", tc.fault, err, tc.code)
		}
	}
}
