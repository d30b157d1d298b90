// Package swaptest is a fake 1inch v5.2 swap API for tests and fixture
// generation, and the matching fake OneInchSwapper for the fake chain. It
// answers /swap/v5.2/{chainId}/swap with toAmount and router calldata
// (AggregationRouterV5 swap(executor, desc, permit, data) paying the
// request's receiver, minReturnAmount = the slippage applied to toAmount, as
// the real API builds it) priced by a callback, and can be told to answer any status and
// body, as the real API does for insufficient liquidity, rate limits and
// outages.
package swaptest

import (
	"encoding/json"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

// routerABI is the AggregationRouterV5 function the fake emits.
var routerABI, _ = abi.JSON(strings.NewReader(`[{"type":"function","name":"swap","stateMutability":"payable","inputs":[
   {"name":"executor","type":"address"},
   {"name":"desc","type":"tuple","components":[
     {"name":"srcToken","type":"address"},{"name":"dstToken","type":"address"},
     {"name":"srcReceiver","type":"address"},{"name":"dstReceiver","type":"address"},
     {"name":"amount","type":"uint256"},{"name":"minReturnAmount","type":"uint256"},{"name":"flags","type":"uint256"}]},
   {"name":"permit","type":"bytes"},{"name":"data","type":"bytes"}],
  "outputs":[{"name":"returnAmount","type":"uint256"},{"name":"spentAmount","type":"uint256"}]}]`))

type swapDescription struct {
	SrcToken        common.Address
	DstToken        common.Address
	SrcReceiver     common.Address
	DstReceiver     common.Address
	Amount          *big.Int
	MinReturnAmount *big.Int
	Flags           *big.Int
}

// PriceFunc quotes amountIn of tokenIn in tokenOut.
type PriceFunc func(tokenIn, tokenOut common.Address, amountIn *big.Int) (*big.Int, bool)

// OneInch is the fake API.
type OneInch struct {
	Price PriceFunc
	// Fail, when set, may answer instead: a status and a JSON body.
	Fail func(r *http.Request) (status int, body string)

	mu       sync.Mutex
	lastAuth string
	requests atomic.Int64
}

// Requests counts requests received.
func (o *OneInch) Requests() int64 { return o.requests.Load() }

// LastAuthorization is the Authorization header of the last request.
func (o *OneInch) LastAuthorization() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastAuth
}

var swapPath = regexp.MustCompile(`^/swap/v5\.2/(\d+)/swap$`)

// ServeHTTP answers the swap endpoint.
func (o *OneInch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.requests.Add(1)
	o.mu.Lock()
	o.lastAuth = r.Header.Get("Authorization")
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if o.Fail != nil {
		if status, body := o.Fail(r); status != 0 {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return
		}
	}
	q := r.URL.Query()
	bad := func(desc string) {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"statusCode": 400, "error": "Bad Request", "description": desc})
	}
	if !swapPath.MatchString(r.URL.Path) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"statusCode":404,"message":"Cannot GET ` + r.URL.Path + `","error":"Not Found"}`))
		return
	}
	amount, ok := new(big.Int).SetString(q.Get("amount"), 10)
	if !ok || !common.IsHexAddress(q.Get("src")) || !common.IsHexAddress(q.Get("dst")) || !common.IsHexAddress(q.Get("from")) {
		bad("amount, src, dst and from are required")
		return
	}
	slip, err := clamm.ParseSlippage(q.Get("slippage"), 50)
	if err != nil {
		bad("slippage: " + err.Error())
		return
	}
	out, ok := o.Price(common.HexToAddress(q.Get("src")), common.HexToAddress(q.Get("dst")), amount)
	if !ok || out.Sign() == 0 {
		bad("insufficient liquidity")
		return
	}
	src, dst := common.HexToAddress(q.Get("src")), common.HexToAddress(q.Get("dst"))
	receiver := common.HexToAddress(q.Get("from"))
	if common.IsHexAddress(q.Get("receiver")) {
		receiver = common.HexToAddress(q.Get("receiver"))
	}
	executor := common.HexToAddress("0x00000000000000000000000000000000000e8ec0")
	data, err := routerABI.Pack("swap", executor, swapDescription{
		SrcToken: src, DstToken: dst, SrcReceiver: executor, DstReceiver: receiver,
		Amount: amount, MinReturnAmount: slip.MinOut(out), Flags: new(big.Int),
	}, []byte{}, []byte{})
	if err != nil {
		panic(err)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"toAmount": out.String(),
		"tx": map[string]any{
			"from": q.Get("from"), "to": swap.AggregationRouterV5.Hex(), "data": hexutil.Encode(data),
			"value": "0", "gas": 0, "gasPrice": "0",
		},
	})
}

// Swapper is the fake OneInchSwapper: it executes router calldata the fake
// API produced, delivering Price's output unless below minReturn.
type Swapper struct{ Price PriceFunc }

// Swap implements chaintest.Swapper.
func (s Swapper) Swap(tokenIn, tokenOut common.Address, amountIn *big.Int, swapData []byte) (*big.Int, []byte) {
	call, err := swap.DecodeRouterCall(swapData)
	if err != nil || call.Amount.Cmp(amountIn) != 0 {
		return nil, nil
	}
	out, ok := s.Price(tokenIn, tokenOut, amountIn)
	if !ok {
		return nil, nil
	}
	if out.Cmp(call.MinReturn) < 0 {
		return nil, chaintest.ErrorString("Return amount is not enough")
	}
	return out, nil
}

// NewOneInch is a fake 1inch API pricing with price, for the test t (see
// chaintest.NewNode).
func NewOneInch(t testing.TB, price PriceFunc) *OneInch {
	t.Helper()
	return &OneInch{Price: price}
}

// NewOneInchForGenerator is NewOneInch for the demo generator.
func NewOneInchForGenerator(price PriceFunc) *OneInch { return &OneInch{Price: price} }

// NodePrice prices with the fake chain's pools at the pair's fee tier.
func NodePrice(n *chaintest.Node) PriceFunc {
	return func(in, out common.Address, amount *big.Int) (*big.Int, bool) {
		fee, ok := n.PoolFee(in, out)
		if !ok {
			return nil, false
		}
		return n.IdealSwap(in, out, amount, fee)
	}
}
