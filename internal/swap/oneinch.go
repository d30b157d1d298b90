package swap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// AggregationRouterV5 is where the OneInchSwapper forwards swapData; an
// answer for any other router would revert on chain, so it is refused.
var AggregationRouterV5 = common.HexToAddress("0x1111111254EEB25477B68fb85Ed929f73A960582")

// maxBody bounds a 1inch answer: a swap answer is a few kilobytes.
const maxBody = 1 << 20

// OneInch quotes through the 1inch v5.2 swap API.
type OneInch struct {
	BaseURL string // e.g. https://api.1inch.dev
	APIKey  string // sent as a bearer token; never logged
	ChainID uint64
	HTTP    *http.Client
	// Timeout is the deadline of one leg's quote; required (NewOneInch).
	Timeout time.Duration
	// Router is the router the OneInchSwapper forwards to; zero means
	// AggregationRouterV5 (tests deploy their own).
	Router common.Address
	Contracts
}

// NewOneInch returns o after checking what configuration must supply: a
// Timeout of zero or below is refused naming it, not replaced by one of the
// quoter's own (the composition root passes CLAMM_UPSTREAM_TIMEOUT).
func NewOneInch(o OneInch) (*OneInch, error) {
	if o.Timeout <= 0 {
		return nil, errors.New("swap: 1inch Timeout must be positive")
	}
	return &o, nil
}

// Explain implements Quoter. OneInchSwapper's bare require(success) drops
// the router's reason, so a revert without one is explained here.
// OnChain is false: 1inch quotes come from its API, keyed and rate
// limited, at its own view of the chain.
func (o *OneInch) OnChain() bool { return false }

func (o *OneInch) Explain(revertReason string) string {
	if revertReason != chain.NoReason {
		return revertReason
	}
	return "the 1inch router call failed (OneInchSwapper gives no reason): its minReturn, quoted for this leg alone, is not met after the earlier legs' swaps, or the route no longer holds"
}

type oneInchSwap struct {
	ToAmount  string `json:"toAmount"`  // v5.2
	DstAmount string `json:"dstAmount"` // v6, accepted too
	Tx        struct {
		To   common.Address `json:"to"`
		Data hexutil.Bytes  `json:"data"`
	} `json:"tx"`
}

type oneInchError struct {
	Error       string `json:"error"`
	Description string `json:"description"`
	StatusCode  int    `json:"statusCode"`
}

// Quote asks the API once per leg, in parallel.
func (o *OneInch) Quote(ctx context.Context, reqs []Request) ([]Quote, error) {
	if o.BaseURL == "" {
		return nil, problem.New(problem.QuoteNotConfigured, "the 1inch swapper has no API base URL configured on this chain")
	}
	quotes := make([]Quote, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			quotes[i], errs[i] = o.one(ctx, reqs[i])
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("1inch quote of leg %d: %w", i, err)
		}
	}
	return quotes, nil
}

func (o *OneInch) one(ctx context.Context, r Request) (Quote, error) {
	if o.Timeout <= 0 { // a literal that skipped NewOneInch
		return Quote{}, errors.New("swap: 1inch Timeout must be positive")
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	q := url.Values{
		"src":             {r.TokenIn.Hex()},
		"dst":             {r.TokenOut.Hex()},
		"amount":          {r.AmountIn.String()},
		"from":            {r.Swapper.Hex()},
		"receiver":        {r.Receiver.Hex()},
		"slippage":        {r.Slippage.String()},
		"disableEstimate": {"true"},
	}
	u := fmt.Sprintf("%s/swap/v5.2/%d/swap?%s", strings.TrimRight(o.BaseURL, "/"), o.ChainID, q.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Quote{}, err
	}
	req.Header.Set("Accept", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	hc := o.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Quote{}, problem.Upstream(problem.Quote, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return Quote{}, problem.Upstream(problem.Quote, err)
	}
	if len(body) > maxBody {
		return Quote{}, problem.New(problem.QuoteError, "the 1inch API answer is larger than %d bytes", maxBody)
	}
	if resp.StatusCode != http.StatusOK {
		return Quote{}, oneInchStatus(resp.StatusCode, body)
	}
	var s oneInchSwap
	if err := json.Unmarshal(body, &s); err != nil {
		return Quote{}, problem.New(problem.QuoteError, "the 1inch API answer does not decode")
	}
	return o.checked(r, s)
}

// checked is the quote of answer s to leg r, once the calldata is shown to
// go to the router the swapper forwards to, swap the leg's amount and pay
// the option market: anything else would revert or pay someone else.
func (o *OneInch) checked(r Request, s oneInchSwap) (Quote, error) {
	amount := s.ToAmount
	if amount == "" {
		amount = s.DstAmount
	}
	out, ok := new(big.Int).SetString(amount, 10)
	if !ok || out.Sign() < 0 || len(s.Tx.Data) < 4 {
		return Quote{}, problem.New(problem.QuoteError, "the 1inch API answer lacks toAmount or tx.data")
	}
	router := o.Router
	if router == (common.Address{}) {
		router = AggregationRouterV5
	}
	if s.Tx.To != router {
		return Quote{}, problem.New(problem.QuoteError,
			"the 1inch API answered for router %s, but the OneInchSwapper forwards to %s", s.Tx.To.Hex(), router.Hex())
	}
	call, err := DecodeRouterCall(s.Tx.Data)
	if err != nil {
		return Quote{}, problem.Wrap(problem.QuoteError, err, "the 1inch API answered router calldata whose minimum cannot be read: %v", err)
	}
	switch {
	case call.Amount.Cmp(r.AmountIn) != 0:
		return Quote{}, problem.New(problem.QuoteError,
			"the 1inch router calldata (%s) swaps %s, but the leg sends %s", call.Method, call.Amount, r.AmountIn)
	case call.Recipient != r.Receiver:
		return Quote{}, problem.New(problem.QuoteError,
			"the 1inch router calldata (%s) pays %s, not the option market %s", call.Method, call.Recipient.Hex(), r.Receiver.Hex())
	}
	return Quote{AmountOut: out, MinOut: call.MinReturn, SwapData: s.Tx.Data, Source: "1inch api"}, nil
}

// Final sends the router calldata unchanged: its minReturn is the minimum
// the swap enforces (the OneInchSwapper checks nothing itself).
func (o *OneInch) Final(_ Request, q Quote, _ *big.Int) ([]byte, *big.Int, error) {
	return q.SwapData, q.MinOut, nil
}

func oneInchStatus(status int, body []byte) error {
	var e oneInchError
	_ = json.Unmarshal(body, &e)
	desc := strings.ToLower(e.Description + " " + e.Error)
	switch {
	case status == http.StatusBadRequest && strings.Contains(desc, "insufficient liquidity"):
		return problem.New(problem.QuoteInsufficientLiquidity, "1inch finds no route with enough liquidity for this swap")
	case status == http.StatusBadRequest && strings.Contains(desc, "cannot estimate"):
		return problem.New(problem.QuoteFailed, "1inch cannot build this swap")
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return problem.New(problem.QuoteUnauthorized, "the 1inch API refused the configured key (HTTP %d)", status)
	case status == http.StatusTooManyRequests:
		return problem.New(problem.QuoteRateLimited, "the 1inch API rate limit was reached; retry later")
	case status >= 500:
		return problem.New(problem.QuoteError, "the 1inch API failed (HTTP %d)", status)
	default:
		return problem.New(problem.QuoteError, "the 1inch API refused the request (HTTP %d)", status)
	}
}
