package gateway

import (
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
)

// The liquidity provider's prepared transactions.
var (
	depositParams  = []string{"chainId", "handler", "pool", "hook", "minStrike", "maxStrike", "tickLower", "tickUpper", "amount", "user"}
	withdrawParams = []string{"chainId", "user", "handler", "pool", "hook", "tickLower", "tickUpper", "shares"}
)

// maxUint128 is 2^128-1 in decimal: liquidity and shares are uint128 in
// the handlers' payloads.
const maxUint128 = "340282366920938463463374607431768211455"

// depositRequest keeps the amount and strikes as given for the key; the
// fill makes the big.Int.
type depositRequest struct {
	liquidity.DepositRequest
	amount, minStrike, maxStrike string
}

func (r depositRequest) request() liquidity.DepositRequest {
	out := r.DepositRequest
	out.Amount, _ = new(big.Int).SetString(r.amount, 10) // validated digits
	return out
}

func (r depositRequest) key(k cacheKey) cacheKey {
	k = k.uint(r.ChainID).addr(r.Handler).addr(r.Pool).addr(r.Hook).addr(r.User).str(r.amount)
	if r.ByTicks {
		return k.str("ticks").int(r.TickLower).int(r.TickUpper)
	}
	return k.str("strikes").str(r.minStrike).str(r.maxStrike)
}

// parseDeposit reads a deposit: the range is either minStrike and
// maxStrike or tickLower and tickUpper (the two optional pairs; exactly
// one must be given).
func parseDeposit(s *Server, p *params) (req depositRequest, err error) {
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.Handler, req.Pool, req.Hook, err = p.handlerPoolHook(); err != nil {
		return req, err
	}
	if err = req.parseRange(p); err != nil {
		return req, err
	}
	if req.amount, err = p.uint256("amount"); err != nil {
		return req, err
	}
	if !isUint128(req.amount) {
		return req, problem.InvalidParam("amount", "amount must be from 1 to 2^128-1 base units of the ranges' token")
	}
	if req.User, err = p.address("user"); err != nil {
		return req, err
	}
	if req.User == ([20]byte{}) {
		return req, problem.InvalidParam("user", "user must be the depositor's address (the transaction is simulated from it)")
	}
	return req, nil
}

func (req *depositRequest) parseRange(p *params) (err error) {
	byTicks := p.has("tickLower") || p.has("tickUpper")
	byStrikes := p.has("minStrike") || p.has("maxStrike")
	if byTicks == byStrikes {
		return problem.InvalidParam("minStrike", "give the range either as minStrike and maxStrike or as tickLower and tickUpper")
	}
	req.ByTicks = byTicks
	if byTicks {
		if req.TickLower, err = p.tick("tickLower"); err != nil {
			return err
		}
		if req.TickUpper, err = p.tick("tickUpper"); err != nil {
			return err
		}
		if req.TickUpper <= req.TickLower {
			return problem.InvalidParam("tickUpper", "tickUpper must be above tickLower")
		}
		return nil
	}
	if req.minStrike, err = p.strike("minStrike"); err != nil {
		return err
	}
	if req.maxStrike, err = p.strike("maxStrike"); err != nil {
		return err
	}
	req.MinStrike, _ = strconv.ParseFloat(req.minStrike, 64) // validated
	req.MaxStrike, _ = strconv.ParseFloat(req.maxStrike, 64)
	if req.MaxStrike < req.MinStrike {
		return problem.InvalidParam("maxStrike", "maxStrike must be at least minStrike")
	}
	return nil
}

// withdrawRequest keeps the shares as given ("max" or digits) for the key.
type withdrawRequest struct {
	liquidity.WithdrawRequest
	shares string
}

func (r withdrawRequest) request() liquidity.WithdrawRequest {
	out := r.WithdrawRequest
	if r.shares != "max" {
		out.Shares, _ = new(big.Int).SetString(r.shares, 10) // validated digits
	}
	return out
}

func (r withdrawRequest) key(k cacheKey) cacheKey {
	return k.uint(r.ChainID).addr(r.User).addr(r.Handler).addr(r.Pool).addr(r.Hook).int(r.TickLower).int(r.TickUpper).str(r.shares)
}

func parseWithdraw(s *Server, p *params) (req withdrawRequest, err error) {
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.User, err = p.address("user"); err != nil {
		return req, err
	}
	if req.User == ([20]byte{}) {
		return req, problem.InvalidParam("user", "user must be the position's holder (the transactions are simulated from it)")
	}
	if req.Handler, req.Pool, req.Hook, err = p.handlerPoolHook(); err != nil {
		return req, err
	}
	if req.TickLower, err = p.tick("tickLower"); err != nil {
		return req, err
	}
	if req.TickUpper, err = p.tick("tickUpper"); err != nil {
		return req, err
	}
	if req.TickUpper <= req.TickLower {
		return req, problem.InvalidParam("tickUpper", "tickUpper must be above tickLower")
	}
	if v, _, _ := p.lookup("shares"); v == "max" {
		req.shares = "max"
		return req, nil
	}
	if req.shares, err = p.uint256("shares"); err != nil {
		return req, problem.InvalidParam("shares", "shares must be max or a decimal number of shares from 1 to 2^128-1")
	}
	if !isUint128(req.shares) {
		return req, problem.InvalidParam("shares", "shares must be max or a decimal number of shares from 1 to 2^128-1")
	}
	return req, nil
}

// handlerPoolHook reads the three addresses that name a handler's ranges.
func (p *params) handlerPoolHook() (handler, pool, hook common.Address, err error) {
	if handler, err = p.address("handler"); err != nil {
		return
	}
	if pool, err = p.address("pool"); err != nil {
		return
	}
	hook, err = p.address("hook")
	return
}

// tick reads a signed integer tick within Uniswap's [-887272, 887272].
func (p *params) tick(name string) (int, error) {
	s, err := p.one(name)
	if err != nil {
		return 0, err
	}
	digits := s
	if len(s) > 1 && s[0] == '-' {
		digits = s[1:]
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' || len(digits) > 7 {
			return 0, problem.InvalidParam(name, "%s must be an integer tick from -887272 to 887272", name)
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < -887272 || v > 887272 {
		return 0, problem.InvalidParam(name, "%s must be an integer tick from -887272 to 887272", name)
	}
	return v, nil
}

// has reports whether an optional parameter was given (its value is read
// and checked by the usual readers).
func (p *params) has(name string) bool {
	_, n, _ := p.lookup(name)
	return n > 0
}

// isUint128 reports whether d, decimal digits without leading zeros (as
// params.uint256 gives them), is from 1 to 2^128-1.
func isUint128(d string) bool {
	return d != "0" && (len(d) < len(maxUint128) || len(d) == len(maxUint128) && d <= maxUint128)
}
