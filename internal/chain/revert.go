package chain

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// RevertError is a simulated call that reverted, with its revert data and
// the name of the reason (RevertReason of the data).
type RevertError struct {
	Data   []byte
	Reason string
	Err    error
}

func (e *RevertError) Error() string { return "execution reverted: " + e.Reason }
func (e *RevertError) Unwrap() error { return e.Err }

// asRevert tells a revert from a node failure. Every go-ethereum JSON-RPC
// error implements rpc.DataError, so having "data" proves nothing: a revert
// is error code 3 (geth, anvil, erigon, nethermind with data) or a message
// that starts with "execution reverted" (nodes that answer -32000 without
// data). "header not found", rate limits, -32603 and "out of gas" are node
// failures and stay upstream errors.
func asRevert(err error) (*RevertError, bool) {
	var re rpc.Error
	if !errors.As(err, &re) {
		return nil, false
	}
	if re.ErrorCode() != 3 && !strings.HasPrefix(strings.ToLower(re.Error()), "execution reverted") {
		return nil, false
	}
	rev := &RevertError{Err: err}
	var de rpc.DataError
	if errors.As(err, &de) {
		if s, ok := de.ErrorData().(string); ok {
			if b, err := hexutil.Decode(s); err == nil {
				rev.Data = b
			}
		}
	}
	rev.Reason = RevertReason(rev.Data)
	return rev, true
}

// IsRevert reports whether a JSON-RPC error is an execution revert (see
// asRevert), for callers outside this package that classify eth_call
// failures (the uni-v3 quoter).
func IsRevert(err error) bool {
	_, ok := asRevert(err)
	return ok
}

// NoReason is RevertReason of a revert without data (require(cond) with no
// message, or a call into an account without code).
const NoReason = "no reason given"

var panicSelector = []byte{0x4e, 0x48, 0x7b, 0x71}

// RevertReason names revert data: a market custom error, Error(string),
// Panic(uint256), or the raw selector.
func RevertReason(data []byte) string {
	if len(data) < 4 {
		return NoReason
	}
	for _, a := range []abi.ABI{contracts.OptionMarketErrors, exerciseErrors, contracts.LPErrors, contracts.V3Errors} {
		for name, e := range a.Errors {
			if bytes.Equal(e.ID[:4], data[:4]) {
				return name
			}
		}
	}
	if reason, err := abi.UnpackRevert(data); err == nil {
		return reason
	}
	if len(data) == 36 && bytes.Equal(data[:4], panicSelector) {
		return fmt.Sprintf("Panic(0x%x)", new(big.Int).SetBytes(data[4:]))
	}
	return "unknown error " + hexutil.Encode(data[:4])
}

// marketLevel reports whether revert data is one of the market's checks
// that do not depend on a leg (owner, array lengths, expiry): excluding a
// leg cannot cure them.
func marketLevel(data []byte) bool {
	for _, name := range []string{"DopexV2OptionMarket__NotOwnerOrDelegator", "DopexV2OptionMarket__ArrayLenMismatch", "DopexV2OptionMarket__OptionExpired"} {
		if e, ok := contracts.OptionMarketErrors.Errors[name]; ok && len(data) >= 4 && bytes.Equal(e.ID[:4], data[:4]) {
			return true
		}
	}
	return false
}

// exerciseErrors are what the position manager and the single-tick
// handler V2 revert with while the market re-adds a leg's liquidity
// (unusePosition), so a left-out leg's reason names them.
var exerciseErrors = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
 {"type":"error","name":"DopexV2PositionManager__NotWhitelistedApp","inputs":[]},
 {"type":"error","name":"DopexV2PositionManager__NotWhitelistedHandler","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__NotWhitelisted","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__InRangeLP","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__InsufficientLiquidity","inputs":[]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()
