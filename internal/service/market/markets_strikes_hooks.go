package market

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// hookAdmission says which of the ranges' hooks admit the market now: a
// hook's onPositionUse refuses a market it has not whitelisted (the 0-day
// and 1-week TTL hooks), and a purchase using such a range reverts, so the
// strikes chain leaves those ranges out rather than list what cannot be
// bought. It asks the same probe as the option-markets read (chain.ProbeHooks:
// the hook's longest ttl, on the market's prime pool), once per distinct
// hook, in one round trip. The zero hook (no hook, every V1 range) admits
// every market; so does every hook of a V1 market, whose legs carry none.
// Without a hook reader nothing is left out.
func (s *Market) hookAdmission(ctx context.Context, up *vocab.Upstreams, view *chain.StrikesView, ranges []subgraph.Strike) (func(common.Address) bool, error) {
	seen := map[common.Address]bool{}
	var hooks []common.Address
	for _, r := range ranges {
		if h := r.Hook.Addr(); h != (common.Address{}) && !seen[h] {
			seen[h] = true
			hooks = append(hooks, h)
		}
	}
	if len(hooks) == 0 || view.Version != chain.MarketV2 {
		return func(common.Address) bool { return true }, nil
	}
	admits, err := s.probeHooks(ctx, up, []*chain.StrikesView{view}, hooks)
	if err != nil {
		return nil, err
	}
	market := view.Info.Market
	return func(h common.Address) bool {
		return h == (common.Address{}) || admits[[2]common.Address{market, h}]
	}, nil
}
