package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
)

// The order book's paths (docs/orders.md). The hosted API's create and
// delete shapes are kept beside the book's own POST.
const (
	PathOrders              = "/clamm/orders"
	PathOrdersCreate        = "/clamm/orders/create"
	PathOrdersDelete        = "/clamm/orders/delete"
	PathOrdersPrepare       = "/clamm/orders/prepare"
	PathOrdersFillable      = "/clamm/orders/fillable"
	PathOrdersCancelPrepare = "/clamm/orders/cancel/prepare"
)

// maxOrderBody bounds an order's body: a signed order is under 1 KiB; 16
// KiB leaves room for whitespace and refuses anything else before it is
// parsed (problem.BodyTooLarge names the bound).
const maxOrderBody = 16 << 10

// OrderBook is the order use cases the routes call (orders.Orders).
type OrderBook interface {
	Prepare(ctx context.Context, req orders.PrepareRequest) (orders.Prepared, error)
	Submit(ctx context.Context, so orders.SignedOrder) (orders.View, bool, error)
	List(ctx context.Context, req orders.ListRequest) ([]orders.View, error)
	Fillable(ctx context.Context, req orders.FillableRequest) ([]orders.Fill, error)
	CancelPrepare(ctx context.Context, chainID uint64, hash common.Hash) (orders.PreparedCancel, error)
	Delete(ctx context.Context, req orders.DeleteRequest) ([]orders.View, error)
}

// orderEndpoints are the book's operations as entries of the endpoint
// table. None is cached: an order's status is judged at the chain's head
// on every read (a fill, a cancel, a transfer or a revoked delegate moves
// it within a block) and a POST changes the list at once, so a cached
// list would show a maker the book as it was before their own order;
// every answer says Cache-Control: no-store. The reads take GET and HEAD,
// the writes POST only; the rate limit and CORS are the middleware's, as
// for every route. A gateway without a book (no chain served from the
// network) answers them 404.
var orderEndpoints = [...]endpoint{
	orderOp{PathOrders, "listOrders", "", listOrderParams, listOrderParams[1:]}.endpoint((*Server).listOrders),
	orderOp{PathOrders, "submitOrder", http.MethodPost, nil, nil}.endpoint((*Server).submitOrder),
	orderOp{PathOrdersCreate, "createOrder", http.MethodPost, nil, nil}.endpoint((*Server).submitOrder),
	orderOp{PathOrdersDelete, "deleteOrders", http.MethodPost, nil, nil}.endpoint((*Server).deleteOrders),
	orderOp{PathOrdersPrepare, "prepareOrder", "", prepareOrderParams, prepareOrderParams[4:]}.endpoint((*Server).prepareOrder),
	orderOp{PathOrdersFillable, "fillableOrders", "", fillableParams, fillableParams[2:]}.endpoint((*Server).fillableOrders),
	orderOp{PathOrdersCancelPrepare, "prepareCancel", "", cancelParams, nil}.endpoint((*Server).prepareCancel),
}

// orderOp is one order operation: its path, operationId, method ("" is
// GET and HEAD), query parameters and which of them may be left out.
type orderOp struct {
	path, operation, method string
	params, optional        []string
}

var (
	listOrderParams = []string{"chainId", "user", "optionMarket", "tokenId", "status"}
	fillableParams  = []string{"chainId", "swapperId", "filler"}
	cancelParams    = []string{"chainId", "hash"}
)

// endpoint is the operation's table entry, answered by h.
func (o orderOp) endpoint(h func(*Server, http.ResponseWriter, *http.Request) (any, int, error)) endpoint {
	e := endpoint{path: o.path, operation: o.operation, params: o.params, optional: o.optional, pin: block.ChainHead, stream: notStreamed, uncached: true}
	if o.method != "" {
		e.methods = []string{o.method}
	}
	e.handler = func(s *Server) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.opts.Orders == nil {
				w.Header().Set("Cache-Control", "no-store")
				s.writeError(w, problem.New(problem.RouteNotFound, "this gateway keeps no order book: it serves no chain from the network (the demo's recorded chains cannot check an order against the chain; docs/orders.md)"))
				return
			}
			s.serveOrder(w, r, func(w http.ResponseWriter, r *http.Request) (any, int, error) { return h(s, w, r) })
		}
	}
	return e
}

// serveOrder runs one order operation within the request timeout and
// writes its answer, never cached.
func (s *Server) serveOrder(w http.ResponseWriter, r *http.Request, h func(http.ResponseWriter, *http.Request) (any, int, error)) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	v, status, err := h(w, r.WithContext(ctx))
	switch {
	case err != nil && r.Context().Err() != nil:
		s.clientClosed(w, err)
	case err != nil:
		s.writeError(w, err)
	default:
		s.writeJSON(w, status, v)
	}
}

// readBody reads a POST's JSON body within maxOrderBody into v, refusing
// fields v does not name, a second JSON value, and an empty body.
func readBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxOrderBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, problem.New(problem.BodyTooLarge, "the body is over %d bytes (16 KiB): a signed order is under 1 KiB", maxOrderBody)
	case err != nil:
		return nil, problem.Wrap(problem.MalformedRequest, err, "the body could not be read whole (it ended before its length)")
	case len(bytes.TrimSpace(body)) == 0:
		return nil, problem.InvalidParam("body", "the body is empty: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return nil, problem.InvalidParam(ute.Field, "%s: %v", ute.Field, err)
		}
		return nil, problem.InvalidParam("body", "the body is not the JSON object this route takes: %v", err)
	}
	if dec.More() {
		return nil, problem.InvalidParam("body", "the body holds more than one JSON value")
	}
	return body, nil
}

// submitOrder answers POST /clamm/orders (and the hosted /create): 201
// with the stored order, 200 with the one already stored for a duplicate.
func (s *Server) submitOrder(w http.ResponseWriter, r *http.Request) (any, int, error) {
	var strict orders.SignedOrder
	body, err := readBody(w, r, &strict)
	if err != nil {
		return nil, 0, err
	}
	so, err := orders.ParseSignedOrder(body)
	if err != nil {
		return nil, 0, err
	}
	if !s.chains[so.ChainID] {
		return nil, 0, problem.InvalidParam("chainId", "chainId %d is not served here", so.ChainID)
	}
	v, stored, err := s.opts.Orders.Submit(r.Context(), so)
	if err != nil {
		return nil, 0, err
	}
	if stored {
		return v, http.StatusCreated, nil
	}
	return v, http.StatusOK, nil
}

// deleteOrders answers the hosted API's delete: accepted once the chain
// closed the option's orders (orders.Delete).
func (s *Server) deleteOrders(w http.ResponseWriter, r *http.Request) (any, int, error) {
	var req orders.DeleteRequest
	if _, err := readBody(w, r, &req); err != nil {
		return nil, 0, err
	}
	if !s.chains[req.ChainID] {
		return nil, 0, problem.InvalidParam("chainId", "chainId %d is not served here", req.ChainID)
	}
	views, err := s.opts.Orders.Delete(r.Context(), req)
	return views, http.StatusOK, err
}

// listOrders answers GET /clamm/orders: a maker's (user) or a market's
// orders (optionMarket, optionally one tokenId), of one status if asked.
func (s *Server) listOrders(_ http.ResponseWriter, r *http.Request) (any, int, error) {
	var p params
	if err := p.readOnly(r, listOrderParams); err != nil {
		return nil, 0, err
	}
	req, err := s.parseList(&p)
	if err != nil {
		return nil, 0, err
	}
	views, err := s.opts.Orders.List(r.Context(), req)
	return views, http.StatusOK, err
}

func (s *Server) parseList(p *params) (req orders.ListRequest, err error) {
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.User, err = optionalAddress(p, "user"); err != nil {
		return req, err
	}
	if req.Market, err = optionalAddress(p, "optionMarket"); err != nil {
		return req, err
	}
	if (req.User == nil) == (req.Market == nil) {
		return req, problem.InvalidParam("user", "give one of user (a maker's orders) or optionMarket (a market's)")
	}
	if _, n, _ := p.lookup("tokenId"); n > 0 {
		if req.Market == nil {
			return req, problem.InvalidParam("tokenId", "tokenId selects within an optionMarket: give optionMarket")
		}
		if req.TokenID, err = p.uint256("tokenId"); err != nil {
			return req, err
		}
	}
	if _, n, _ := p.lookup("status"); n > 0 {
		if req.Status, err = p.one("status"); err != nil {
			return req, err
		}
		if !containsAny(orders.Statuses, req.Status) {
			return req, problem.InvalidParam("status", "status %q is not one of %v", req.Status, orders.Statuses)
		}
	}
	return req, nil
}

func containsAny(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// optionalAddress is name's address, or nil when it is not given.
func optionalAddress(p *params, name string) (*common.Address, error) {
	if _, n, err := p.lookup(name); err != nil || n == 0 {
		return nil, err
	}
	a, err := p.address(name)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// optionalUint is name's integer, or nil when it is not given.
func optionalUint(p *params, name string) (*big.Int, error) {
	if _, n, err := p.lookup(name); err != nil || n == 0 {
		return nil, err
	}
	s, err := p.uint256(name)
	if err != nil {
		return nil, err
	}
	v, _ := new(big.Int).SetString(s, 10) // validated digits
	return v, nil
}

// requiredUint is name's integer.
func requiredUint(p *params, name string) (*big.Int, error) {
	s, err := p.uint256(name)
	if err != nil {
		return nil, err
	}
	v, _ := new(big.Int).SetString(s, 10) // validated digits
	return v, nil
}

// fillableOrders answers GET /clamm/orders/fillable: the open orders a
// keeper could fill now through swapperId, each simulated from filler
// (optional).
func (s *Server) fillableOrders(_ http.ResponseWriter, r *http.Request) (any, int, error) {
	var p params
	if err := p.readOnly(r, fillableParams); err != nil {
		return nil, 0, err
	}
	var req orders.FillableRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return nil, 0, err
	}
	if req.SwapperID, err = p.one("swapperId"); err != nil {
		return nil, 0, err
	}
	if ids := s.swappers[req.ChainID]; !contains(ids, req.SwapperID) {
		return nil, 0, problem.InvalidParam("swapperId", "swapperId %q is not available on chain %d", req.SwapperID, req.ChainID)
	}
	filler, err := optionalAddress(&p, "filler")
	if err != nil {
		return nil, 0, err
	}
	if filler != nil {
		req.Filler = *filler
	}
	fills, err := s.opts.Orders.Fillable(r.Context(), req)
	return fills, http.StatusOK, err
}

// prepareCancel answers GET /clamm/orders/cancel/prepare?chainId=&hash=.
func (s *Server) prepareCancel(_ http.ResponseWriter, r *http.Request) (any, int, error) {
	var p params
	if err := p.readOnly(r, cancelParams); err != nil {
		return nil, 0, err
	}
	chainID, err := p.chainID(s.chains, s.opts.ServeHint)
	if err != nil {
		return nil, 0, err
	}
	h, err := p.one("hash")
	if err != nil {
		return nil, 0, err
	}
	if len(h) != 66 || (h[:2] != "0x" && h[:2] != "0X") || !isHex(h[2:]) {
		return nil, 0, problem.InvalidParam("hash", "hash must be the order's 0x + 64 hex digits")
	}
	c, err := s.opts.Orders.CancelPrepare(r.Context(), chainID, common.HexToHash(h))
	return c, http.StatusOK, err
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if hexDigit[s[i]] > 0xf {
			return false
		}
	}
	return true
}

// prepareOrder answers GET /clamm/orders/prepare: kind=exercise (a
// take-profit: optionMarket, optionId, minProfit, deadline?) or
// kind=purchase (optionMarket, isCall, tickLower, tickUpper, ttl,
// liquidity, maxCost, commission, ttlThreshold, deadline?).
func (s *Server) prepareOrder(_ http.ResponseWriter, r *http.Request) (any, int, error) {
	var p params
	if err := p.readOnly(r, prepareOrderParams); err != nil {
		return nil, 0, err
	}
	req, err := s.parsePrepareOrder(&p)
	if err != nil {
		return nil, 0, err
	}
	prep, err := s.opts.Orders.Prepare(r.Context(), req)
	return prep, http.StatusOK, err
}

var prepareOrderParams = []string{"chainId", "kind", "user", "optionMarket", "optionId", "minProfit", "deadline",
	"isCall", "tickLower", "tickUpper", "ttl", "liquidity", "maxCost", "commission", "ttlThreshold"}

func (s *Server) parsePrepareOrder(p *params) (req orders.PrepareRequest, err error) {
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	kind, err := p.one("kind")
	if err != nil {
		return req, err
	}
	if req.User, err = p.address("user"); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	if req.Deadline, err = optionalUint(p, "deadline"); err != nil {
		return req, err
	}
	switch orders.Kind(kind) {
	case orders.KindExercise:
		req.Kind = orders.KindExercise
		if req.TokenID, err = requiredUint(p, "optionId"); err != nil {
			return req, err
		}
		req.MinProfit, err = requiredUint(p, "minProfit")
		return req, err
	case orders.KindPurchase:
		req.Kind = orders.KindPurchase
		req.Purchase, err = parsePurchaseTerms(p, req.Market)
		return req, err
	}
	return req, problem.InvalidParam("kind", "kind %q is not %q (a take-profit) or %q (a limit purchase)", kind, orders.KindExercise, orders.KindPurchase)
}

// parsePurchaseTerms reads a limit purchase's terms.
func parsePurchaseTerms(p *params, market common.Address) (d contracts.PurchaseOrderData, err error) {
	d.Market = market
	for name, dst := range map[string]**big.Int{"ttl": &d.TTL, "liquidity": &d.Liquidity, "maxCost": &d.MaxCostAllowance,
		"commission": &d.Commission, "ttlThreshold": &d.TTLThreshold} {
		if *dst, err = requiredUint(p, name); err != nil {
			return d, err
		}
	}
	isCall, err := p.one("isCall")
	if err != nil {
		return d, err
	}
	if d.IsCall, err = strconv.ParseBool(isCall); err != nil || (isCall != "true" && isCall != "false") {
		return d, problem.InvalidParam("isCall", "isCall must be true or false")
	}
	for name, dst := range map[string]*int32{"tickLower": &d.TickLower, "tickUpper": &d.TickUpper} {
		v, err := p.one(name)
		if err != nil {
			return d, err
		}
		t, err := strconv.ParseInt(v, 10, 32)
		if err != nil || t < -887272 || t > 887272 {
			return d, problem.InvalidParam(name, "%s must be a tick from -887272 to 887272", name)
		}
		*dst = int32(t)
	}
	return d, nil
}
