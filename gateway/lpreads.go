package gateway

import (
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
)

// The liquidity provider's reads: the user always; pool and handler narrow
// the page when given.
var (
	lpParams   = []string{"chainId", "user", "pool", "handler", "first", "skip"}
	lpOptional = []string{"pool", "handler"}
)

// parseLP reads the parameters of the deposit and withdrawal histories and
// the LP positions.
func parseLP(s *Server, p *params) (liquidity.LPRequest, error) {
	var req liquidity.LPRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.User, err = p.address("user"); err != nil {
		return req, err
	}
	if req.Pool, err = p.optionalAddress("pool"); err != nil {
		return req, err
	}
	if req.Handler, err = p.optionalAddress("handler"); err != nil {
		return req, err
	}
	req.First, req.Skip, err = p.page()
	return req, err
}

// optionalAddress is address for a parameter that may be left out (nil
// then); given, it must be given once and well formed, and given empty
// (pool=) it is a 400 rather than read as left out.
func (p *params) optionalAddress(name string) (*common.Address, error) {
	_, n, err := p.lookup(name)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	a, err := p.address(name)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// lpKey keys an LP page: an absent filter is keyed apart from any address.
func lpKey(k cacheKey, r liquidity.LPRequest) cacheKey {
	k = k.uint(r.ChainID).addr(r.User)
	return k.optAddr(r.Pool).optAddr(r.Handler).int(r.First).int(r.Skip)
}
