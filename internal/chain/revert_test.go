package chain

import (
	"errors"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// Revert data from a simulation is named: market and handler custom
// errors, Error(string), Panic(uint256), else the raw selector.
func TestRevertReason(t *testing.T) {
	if got := RevertReason(contracts.OptionMarketErrors.Errors["DopexV2OptionMarket__NotEnoughAfterSwap"].ID.Bytes()[:4]); got != "DopexV2OptionMarket__NotEnoughAfterSwap" {
		t.Fatalf("custom error: %s", got)
	}
	if got := RevertReason(exerciseErrors.Errors["UniswapV3SingleTickLiquidityHandlerV2__InRangeLP"].ID.Bytes()[:4]); got != "UniswapV3SingleTickLiquidityHandlerV2__InRangeLP" {
		t.Fatalf("handler error: %s", got)
	}
	ty, _ := abi.NewType("string", "", nil)
	enc, _ := abi.Arguments{{Type: ty}}.Pack("Too little received")
	if got := RevertReason(append([]byte{0x08, 0xc3, 0x79, 0xa0}, enc...)); got != "Too little received" {
		t.Fatalf("Error(string): %s", got)
	}
	panic1 := append(append([]byte{}, panicSelector...), make([]byte, 32)...)
	panic1[35] = 0x11
	if got := RevertReason(panic1); !strings.Contains(got, "overflow") {
		t.Fatalf("Panic: %s", got)
	}
	if got := RevertReason([]byte{1, 2, 3, 4}); !strings.Contains(got, "0x01020304") {
		t.Fatalf("unknown: %s", got)
	}
}

// jsonErr is a JSON-RPC error as go-ethereum's client hands it over: every
// one of them has ErrorData, revert or not.
type jsonErr struct {
	code int
	msg  string
	data any
}

func (e jsonErr) Error() string          { return e.msg }
func (e jsonErr) ErrorCode() int         { return e.code }
func (e jsonErr) ErrorData() interface{} { return e.data }

// Only a revert is a revert (issue 16 item 2): code 3, or a message that
// says "execution reverted"; a node's failure with data attached is not.
func TestAsRevert(t *testing.T) {
	sel := hexutil.Encode(contracts.OptionMarketErrors.Errors["DopexV2OptionMarket__NotEnoughAfterSwap"].ID.Bytes()[:4])
	for _, c := range []struct {
		err    error
		revert bool
		reason string
	}{
		{jsonErr{3, "execution reverted", sel}, true, "DopexV2OptionMarket__NotEnoughAfterSwap"},
		{jsonErr{-32000, "execution reverted", nil}, true, "no reason given"},
		{jsonErr{-32000, "header not found", nil}, false, ""},
		{jsonErr{-32005, "rate limit exceeded", "0x"}, false, ""},
		{jsonErr{-32603, "internal error", ""}, false, ""},
		{jsonErr{-32000, "out of gas", nil}, false, ""},
		{errors.New("connection reset"), false, ""},
	} {
		rev, ok := asRevert(c.err)
		if ok != c.revert || (ok && rev.Reason != c.reason) {
			t.Errorf("%v: revert %v %+v", c.err, ok, rev)
		}
		if ok {
			continue
		}
		if k := classify(c.err); k == nil {
			t.Errorf("%v: unclassified", c.err)
		}
	}
}
