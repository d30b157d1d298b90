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
//
// Alongside, each chain's subgraph `_meta` is read and remembered as its
// head, so the first strikes-chain miss of a new gateway pins its chain
// read without asking (pin.go). Those reads run in parallel with the
// checks; one that fails only leaves its chain unseeded.
func (s *Service) CheckChainIDs(ctx context.Context) (unreachable map[uint64]error, err error) {
	ids := make([]uint64, 0, len(s.chains))
	for id := range s.chains {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	seeding, stopSeeding := context.WithCancel(ctx)
	seeded := s.seedHeads(seeding, ids)
	defer func() {
		if err != nil {
			stopSeeding() // the start stops: its heads are not needed
		}
		<-seeded
		stopSeeding()
	}()
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

// seedHeads reads the `_meta` of every chain in ids that has a reader, in
// parallel, and remembers each one read; the channel closes when all are
// done.
func (s *Service) seedHeads(ctx context.Context, ids []uint64) <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, id := range ids {
		up := s.chains[id]
		if up.Meta == nil {
			continue
		}
		wg.Add(1)
		go func(id uint64, m MetaReader) {
			defer wg.Done()
			if meta, err := m.Meta(ctx); err == nil {
				s.heads.sawMeta(id, meta, time.Now())
			}
		}(id, up.Meta)
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}
