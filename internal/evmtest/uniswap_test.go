package evmtest

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

const fee = 500

// The gateway's uni-v3 quote equals QuoterV2's answer, and its swapData
// drives a real exactInputSingle through SwapRouter that delivers at least
// amountOutMinimum (here exactly the quote, in the same block state); a
// minimum above the quote makes the real router revert.
func TestUniV3QuoteAndSwapDataAgainstRealContracts(t *testing.T) {
	// Two 18-decimal assets at price 1 (tick 0) in the fee-500 pool: a
	// quote below its input is the fee's doing.
	p := pt.Deploy(t, pt.Config{CallDecimals: 18, PutDecimals: 18, Price: 1, Fee: fee})
	tokenA, tokenB, user := p.Token0, p.Token1, p.Users[0]
	router, err := pt.Uniswap("router")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	slip, err := clamm.ParseSlippage("1", 50)
	if err != nil {
		t.Fatal(err)
	}
	amounts := []*big.Int{
		new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil),               // 1 token
		new(big.Int).Mul(big.NewInt(37), big.NewInt(1_000_000_000_000_000)), // 0.037
	}
	reqs := []swap.Request{
		{TokenIn: tokenA, TokenOut: tokenB, AmountIn: amounts[0], Fee: fee, Slippage: slip},
		{TokenIn: tokenB, TokenOut: tokenA, AmountIn: amounts[1], Fee: fee, Slippage: slip},
	}
	q := &swap.UniV3{RPC: p.Chain.RPC(), Quoter: p.Quoter, Timeout: time.Minute}
	quotes, err := q.Quote(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		direct, _ := p.Quote(r.TokenIn, r.AmountIn, fee)
		if quotes[i].AmountOut.Cmp(direct) != 0 {
			t.Fatalf("leg %d: gateway quote %s, QuoterV2 %s", i, quotes[i].AmountOut, direct)
		}
		// Below the input (fee and a price of 1): a sanity bound on the quote.
		if direct.Sign() <= 0 || direct.Cmp(r.AmountIn) >= 0 {
			t.Fatalf("leg %d: quote %s for %s", i, direct, r.AmountIn)
		}
		// The minimum comes from the output the leg has in the exercise's
		// sequence (here: the quote itself); Final applies the slippage.
		if _, minOut, err := q.Final(r, quotes[i], direct); err != nil || minOut.Cmp(slip.MinOut(direct)) != 0 {
			t.Fatalf("leg %d: minOut %s (%v), want %s", i, minOut, err, slip.MinOut(direct))
		}
	}

	// Act as the SwapRouterSwapper: decode swapData, swap through the real
	// router. Each swap moves the price, so each leg is quoted afresh in the
	// state it swaps in.
	for i, r := range reqs {
		fresh, err := q.Quote(ctx, []swap.Request{r})
		if err != nil {
			t.Fatal(err)
		}
		quotes[i] = fresh[0]
		sd, _, err := q.Final(r, quotes[i], quotes[i].AmountOut)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := contracts.UniV3SwapData.Unpack(sd)
		if err != nil {
			t.Fatal(err)
		}
		swapFee, minOut := vals[0].(*big.Int), vals[1].(*big.Int)
		before := p.Balance(r.TokenOut, user.Addr)
		p.Chain.MustSend(user, p.Router, router.ABI, "exactInputSingle", exactInputSingle(r, swapFee, minOut, user))
		got := new(big.Int).Sub(p.Balance(r.TokenOut, user.Addr), before)
		if got.Cmp(minOut) < 0 || got.Cmp(quotes[i].AmountOut) != 0 {
			t.Fatalf("leg %d: swap delivered %s; quote %s, minimum %s", i, got, quotes[i].AmountOut, minOut)
		}
	}

	// A fresh quote, then a minimum one unit above it: the router refuses.
	fresh, err := q.Quote(ctx, reqs[:1])
	if err != nil {
		t.Fatal(err)
	}
	tooHigh := new(big.Int).Add(fresh[0].AmountOut, big.NewInt(1))
	_, err = p.Chain.TryCall(user.Addr, p.Router, router.ABI, "exactInputSingle", exactInputSingle(reqs[0], big.NewInt(fee), tooHigh, user))
	if !pt.IsRevert(err, "Too little received") {
		t.Fatalf("minimum above the quote: %v", err)
	}
}

func exactInputSingle(r swap.Request, fee, minOut *big.Int, recipient *pt.Account) pt.ExactInputSingleParams {
	return pt.ExactInputSingleParams{TokenIn: r.TokenIn, TokenOut: r.TokenOut, Fee: fee, Recipient: recipient.Addr,
		Deadline: big.NewInt(1 << 40), AmountIn: r.AmountIn, AmountOutMinimum: minOut, SqrtPriceLimitX96: new(big.Int)}
}
