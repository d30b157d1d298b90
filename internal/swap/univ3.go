package swap

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// BatchCaller is the part of *rpc.Client the uni-v3 quoter uses.
type BatchCaller interface {
	BatchCallContext(ctx context.Context, b []rpc.BatchElem) error
}

// UniV3 quotes through a Uniswap V3 QuoterV2 (or a fork's: the ABI is
// the same) the swaps of a SwapRouterSwapper.
type UniV3 struct {
	RPC BatchCaller
	// Quoter quotes the legs whose DEX QuoterByDex does not name (the
	// swapper's own configured quoter); zero for none.
	Quoter common.Address
	// QuoterByDex is the chain's quoter registry (config.Chain.Quoters) by
	// DEX label. A leg with neither is not quoted: its output is what the
	// exercise's simulation from the owner at the head gives.
	QuoterByDex map[string]common.Address
	// Timeout is the deadline of one batch of quotes; required (NewUniV3).
	Timeout time.Duration
	Contracts
}

// NewUniV3 returns u after checking what configuration must supply: a
// Timeout of zero or below is refused naming it, not replaced by one of the
// quoter's own (the composition root passes CLAMM_UPSTREAM_TIMEOUT).
func NewUniV3(u UniV3) (*UniV3, error) {
	if u.Timeout <= 0 {
		return nil, errors.New("swap: uni-v3 Timeout must be positive")
	}
	return &u, nil
}

// Explain implements Quoter: SwapRouter's reverts carry their reason.
func (u *UniV3) Explain(revertReason string) string { return revertReason }

// OnChain is true when a QuoterV2 is configured, its own or one of the
// chain's DEXes': it is read by eth_call at the answer's block. Without
// any there is no quote source at all, so the expiry reads must not pick
// it to value options (contract-behaviour M29): they fall back to
// valueIfExercised.
func (u *UniV3) OnChain() bool { return u.Quoter != (common.Address{}) || len(u.QuoterByDex) > 0 }

// quoterFor is the quote contract of a leg on dex: the registry's for the
// DEX, else the swapper's own; zero when neither exists.
func (u *UniV3) quoterFor(dex string) common.Address {
	if q, ok := u.QuoterByDex[dex]; ok && q != (common.Address{}) {
		return q
	}
	return u.Quoter
}

type quoteParams struct {
	TokenIn           common.Address
	TokenOut          common.Address
	AmountIn          *big.Int
	Fee               *big.Int
	SqrtPriceLimitX96 *big.Int
}

// Quote sends the quoteExactInputSingle of every leg whose DEX has a
// quote contract in one JSON-RPC batch and checks each element's error: a
// batch succeeds as a whole at the HTTP level even when some of its calls
// failed. A leg without one is answered unquoted (Source "simulation"):
// swapData with no minimum, which the exercise's simulation runs.
func (u *UniV3) Quote(ctx context.Context, reqs []Request) ([]Quote, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	if u.Timeout <= 0 { // a literal that skipped NewUniV3
		return nil, errors.New("swap: uni-v3 Timeout must be positive")
	}
	quotes := make([]Quote, len(reqs))
	var batch []rpc.BatchElem
	var quoted []int // request index of each batch element
	for i, r := range reqs {
		sd, err := clamm.UniV3SwapData(r.Fee, new(big.Int))
		if err != nil {
			return nil, err
		}
		quotes[i] = Quote{SwapData: sd, Source: "simulation"}
		q := u.quoterFor(r.Dex)
		if q == (common.Address{}) {
			continue
		}
		el, err := quoteCall(ctx, q, r)
		if err != nil {
			return nil, err
		}
		batch, quoted = append(batch, el), append(quoted, i)
		quotes[i].Source = "quoterV2 " + q.Hex()
	}
	if len(batch) == 0 {
		return quotes, nil
	}
	ctx, cancel := context.WithTimeout(ctx, u.Timeout)
	defer cancel()
	if err := u.RPC.BatchCallContext(ctx, batch); err != nil {
		return nil, quoteTransport(err)
	}
	for k, el := range batch {
		i := quoted[k]
		out, err := quoteResult(el, i, reqs[i].Fee)
		if err != nil {
			return nil, err
		}
		if out == nil { // no contract at the quoter: as if none were registered
			quotes[i].Source = "simulation (no code at " + quotes[i].Source[len("quoterV2 "):] + ")"
			continue
		}
		quotes[i].AmountOut = out
	}
	return quotes, nil
}

// quoteCall is the eth_call of quoter's quoteExactInputSingle for r at
// the answer's block (learnt by the position read before the quotes).
func quoteCall(ctx context.Context, quoter common.Address, r Request) (rpc.BatchElem, error) {
	data, err := contracts.QuoterV2.Pack("quoteExactInputSingle", quoteParams{
		TokenIn: r.TokenIn, TokenOut: r.TokenOut, AmountIn: r.AmountIn,
		Fee: new(big.Int).SetUint64(uint64(r.Fee)), SqrtPriceLimitX96: new(big.Int),
	})
	if err != nil {
		return rpc.BatchElem{}, fmt.Errorf("pack quoteExactInputSingle: %w", err)
	}
	return rpc.BatchElem{
		Method: "eth_call",
		Args:   []any{map[string]any{"to": quoter, "data": hexutil.Bytes(data)}, block.Known(ctx, "latest")},
		Result: new(hexutil.Bytes),
	}, nil
}

// quoteResult is leg i's amount out from its batch element.
func quoteResult(el rpc.BatchElem, i int, fee uint32) (*big.Int, error) {
	if el.Error != nil {
		// Only a revert means QuoterV2 cannot quote (no pool, not
		// enough liquidity); every JSON-RPC error carries ErrorData, so
		// that alone proves nothing: a node failure is the upstream
		// error it is (chain.CallError: 502, 503 rate limited, 504).
		err := chain.CallError(problem.Quote, el.Error)
		if errors.As(err, new(*chain.RevertError)) {
			return nil, problem.Wrap(problem.QuoteFailed, err, "QuoterV2 cannot quote leg %d (no pool or not enough liquidity at fee %d)", i, fee)
		}
		return nil, fmt.Errorf("quote of leg %d: %w", i, err)
	}
	raw := *el.Result.(*hexutil.Bytes)
	if len(raw) == 0 {
		// An eth_call to an address without code succeeds with nothing: a
		// registry's quoter not deployed on this chain (a fork, a local
		// chain). The leg is then valued by the exercise's simulation.
		return nil, nil
	}
	vals, err := contracts.QuoterV2.Unpack("quoteExactInputSingle", raw)
	if err != nil || len(vals) != 4 {
		return nil, problem.Wrap(problem.QuoteError, err, "QuoterV2 returned data that does not decode")
	}
	return vals[0].(*big.Int), nil
}

// Final sets SwapRouter's amountOutMinimum to the slippage applied to the
// output the leg's swap has in the exercise's sequence.
func (u *UniV3) Final(req Request, _ Quote, out *big.Int) ([]byte, *big.Int, error) {
	minOut := req.Slippage.MinOut(out)
	sd, err := clamm.UniV3SwapData(req.Fee, minOut)
	return sd, minOut, err
}

func quoteTransport(err error) error {
	var httpErr rpc.HTTPError
	if errors.As(err, &httpErr) {
		code := problem.QuoteError
		if httpErr.StatusCode == 429 || httpErr.StatusCode == 503 {
			code = problem.QuoteUnavailable
		}
		return problem.Wrap(code, err, "the rpc node answered HTTP %d to the quote", httpErr.StatusCode)
	}
	return problem.Upstream(problem.Quote, err)
}
