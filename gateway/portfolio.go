package gateway

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// PathPortfolio is one user's portfolio over several chains.
const PathPortfolio = "/clamm/portfolio"

var portfolioParams = []string{"user", "chains"}

// Portfolio is the answer of /clamm/portfolio: the user's part of every
// listed served chain, each at one block of that chain (named in it).
type Portfolio struct {
	User   string           `json:"user"`
	Chains []PortfolioChain `json:"chains"`
	// UnservedChains are the ids listed that this gateway does not serve,
	// left out of Chains.
	UnservedChains []string `json:"unservedChains"`
}

// PortfolioChain is one chain's part and the block it is true at.
type PortfolioChain struct {
	Block ChainBlock `json:"block"`
	service.ChainPortfolio
}

// portfolioRequest is a parsed portfolio request.
type portfolioRequest struct {
	chainsRequest
	user common.Address
}

func parsePortfolio(s *Server, p *params) (portfolioRequest, error) {
	var req portfolioRequest
	var err error
	if req.user, err = p.address("user"); err != nil {
		return req, err
	}
	req.chainsRequest, err = p.chainsList(s)
	return req, err
}

// portfolio reads every listed chain's part under its own pin.
func portfolio(ctx context.Context, svc *service.Service, r portfolioRequest) (any, uint64, error) {
	parts := make([]service.ChainPortfolio, len(r.chains))
	blocks, err := r.perChain(ctx, block.SubgraphFirst, func(ctx context.Context, chainID uint64) (uint64, error) {
		i := indexOf(r.chains, chainID)
		var err error
		parts[i], err = svc.Portfolio(ctx, service.PortfolioRequest{ChainID: chainID, User: r.user})
		return parts[i].Block(), err
	})
	if err != nil {
		return nil, 0, err
	}
	out := Portfolio{User: r.user.Hex(), Chains: make([]PortfolioChain, len(parts)), UnservedChains: append([]string{}, r.unserved...)}
	for i, p := range parts {
		out.Chains[i] = PortfolioChain{Block: blocks[i], ChainPortfolio: p}
	}
	return out, 0, nil
}

func indexOf(ids []uint64, id uint64) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
