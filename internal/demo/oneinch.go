package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

// oneInch replays the 1inch swap API at any slippage. The API's answer to a
// request depends on its slippage only through minReturn, which it sets to
// toAmount less the slippage; the recordings hold each of the demo's swaps
// at one slippage, so another slippage is answered with the recorded route
// and toAmount and the minimum the API would set for it. A recorded answer
// whose minimum does not follow that rule is replayed only as recorded.
type oneInch struct {
	exact http.RoundTripper
	// byRoute: the recorded 200 answers, by the request URL without its
	// slippage, with the slippage they were recorded at.
	byRoute map[string]recordedSwap
}

type recordedSwap struct {
	slippage string
	body     []byte
}

type oneInchAnswer struct {
	ToAmount string `json:"toAmount"`
	Tx       struct {
		Data hexutil.Bytes `json:"data"`
	} `json:"tx"`
}

func newOneInch(raw []byte, exact http.RoundTripper) (*oneInch, error) {
	c, err := replay.LoadHTTPCassette(raw)
	if err != nil {
		return nil, err
	}
	o := &oneInch{exact: exact, byRoute: map[string]recordedSwap{}}
	for _, in := range c.Interactions {
		if route, slip, ok := routeOf(in.Request.URL); ok && in.Response.Status == http.StatusOK {
			o.byRoute[route] = recordedSwap{slip, in.Response.Body}
		}
	}
	return o, nil
}

// routeOf splits a swap request URL into the URL without its slippage and
// the slippage.
func routeOf(raw string) (route, slippage string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false
	}
	q := u.Query()
	slippage = q.Get("slippage")
	q.Del("slippage")
	u.RawQuery = q.Encode()
	return u.String(), slippage, slippage != ""
}

// RoundTrip implements http.RoundTripper.
func (o *oneInch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.exact.RoundTrip(req)
	if !errors.Is(err, problem.ErrNotRecorded) {
		return resp, err
	}
	route, asked, ok := routeOf(req.URL.String())
	rec, found := o.byRoute[route]
	if !ok || !found {
		return nil, err
	}
	body, rerr := atSlippage(rec, asked)
	if rerr != nil {
		return nil, fmt.Errorf("demo 1inch: %v: %w", rerr, problem.ErrNotRecorded)
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}, nil
}

// atSlippage is the recorded answer with the minimum the API sets for
// slippage asked, after checking the recorded minimum follows the same rule.
func atSlippage(rec recordedSwap, asked string) ([]byte, error) {
	was, err1 := clamm.ParseSlippage(rec.slippage, 50)
	now, err2 := clamm.ParseSlippage(asked, 50)
	var a oneInchAnswer
	to, ok := new(big.Int), false
	if err := json.Unmarshal(rec.body, &a); err == nil {
		to, ok = to.SetString(a.ToAmount, 10)
	}
	call, err3 := swap.DecodeRouterCall(a.Tx.Data)
	switch {
	case err1 != nil || err2 != nil || !ok || err3 != nil:
		return nil, errors.New("recorded answer or slippage does not decode")
	case call.MinReturn.Cmp(was.MinOut(to)) != 0:
		return nil, errors.New("recorded minimum is not the slippage rule's")
	}
	data := bytes.Clone(a.Tx.Data)
	now.MinOut(to).FillBytes(data[call.MinReturnAt : call.MinReturnAt+32])
	old := hexutil.Encode(a.Tx.Data)
	return []byte(strings.Replace(string(rec.body), old[2:], hexutil.Encode(data)[2:], 1)), nil
}
