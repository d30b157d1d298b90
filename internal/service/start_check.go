package service

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// CheckChainIDs asks every configured chain's node which chain it serves,
// at start. A node that serves another chain is a configuration error
// (returned, naming CLAMM_CHAIN_<id>_RPC_URL): served on, every answer
// would be another network's. A node that cannot be asked now is not: it
// is reported in unreachable (for a warning) and readiness keeps checking.
func (s *Service) CheckChainIDs(ctx context.Context) (unreachable map[uint64]error, err error) {
	ids := make([]uint64, 0, len(s.chains))
	for id := range s.chains {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	unreachable = map[uint64]error{}
	for _, id := range ids {
		c := s.chains[id].Chain
		if c == nil {
			continue // configured without upstreams
		}
		if cerr := c.CheckChainID(ctx, id); cerr != nil {
			var p *problem.Error
			if errors.As(cerr, &p) && p.Code == problem.RPCWrongChain {
				return nil, fmt.Errorf("CLAMM_CHAIN_%d_RPC_URL: %s", id, p.Message)
			}
			unreachable[id] = cerr
		}
	}
	return unreachable, nil
}
