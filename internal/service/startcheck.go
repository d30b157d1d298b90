package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

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
		c, ok := s.chains[id].Chain.(ChainChecker)
		if !ok {
			continue
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

// SeedHeads reads every chain's subgraph `_meta`, in parallel, and
// remembers each one read as the chain's head, so the first strikes-chain
// miss of a new gateway pins its chain read without asking (pin.go). The
// command runs it in the background at start, beside binding its
// listener: a subgraph slow to answer delays no start, and a request that
// comes before it ends asks `_meta` itself. A read that fails only leaves
// its chain unseeded. It returns when every read has ended.
func (s *Service) SeedHeads(ctx context.Context) {
	var wg sync.WaitGroup
	for id, up := range s.chains {
		if up.Meta == nil {
			continue
		}
		wg.Add(1)
		go func(id uint64, m MetaReader) {
			defer wg.Done()
			at := time.Now()
			if meta, err := m.Meta(ctx); err == nil {
				s.heads.sawMeta(id, meta, at)
			}
		}(id, up.Meta)
	}
	wg.Wait()
}
