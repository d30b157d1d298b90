package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"slices"
	"sort"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// ContractCheck is one configured contract that did not answer as its
// kind when the gateway started: what it was taken for and what it
// answered. The gateway guesses nothing from it (the reads that need the
// contract say so in their own answers); /readyz shows it and the start
// logs it, once.
type ContractCheck struct {
	Contract string `json:"contract"`
	Kind     string `json:"kind"`
	Problem  string `json:"problem"`
}

// contractChecks are the start-up checks' mismatches per chain, and the
// configured swappers that failed theirs (by chain, then swapperId), which
// the exercise prepare's auto never picks (trade.SwapperChecks).
type contractChecks struct {
	mu       sync.Mutex
	got      map[uint64][]ContractCheck
	swappers map[uint64]map[string]string
}

// SwapperProblem is why the configured swapper id of chainID failed the
// start-up check; false when it passed, or before the check has answered.
func (c *contractChecks) SwapperProblem(chainID uint64, id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	why, ok := c.swappers[chainID][id]
	return why, ok
}

// CheckContracts asks each served chain's configured contracts one read
// each, as the kind the configuration takes them for (the audit's open
// questions that one call settles): the auto-exerciser answers
// AutoExerciseTimeBased's getters; each pool whose DEX the configuration
// names answers slot0 in that DEX's layout; each configured market's
// pricing contract answers a ttl table and a volatility function the
// gateway reads (else its iv is null). A read the node cannot answer now
// (an upstream failure, not a mismatch) is not a finding. Each configured
// swapper holds code and answers its kind's probe (checkSwappers), all of
// a chain's in one read beside the others; chains are checked in
// parallel. Mismatches are logged once, here, and kept for /readyz; they
// leave the chain ready (the reads that need such a contract say so), and
// a failing swapper is left out of the exercise prepare's auto and direct.
func (s *Service) CheckContracts(ctx context.Context, log *slog.Logger) map[uint64][]ContractCheck {
	out := map[uint64][]ContractCheck{}
	bad := map[uint64]map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, up := range s.chains {
		if up.Chain == nil || up.Config == nil || up.Mode == config.ModeDemo {
			continue // a demo's recorded answers are not the contracts'
		}
		wg.Go(func() {
			found, failed := checkChain(ctx, up)
			mu.Lock()
			defer mu.Unlock()
			if len(found) > 0 {
				out[id] = found
			}
			if len(failed) > 0 {
				bad[id] = failed
			}
		})
	}
	wg.Wait()
	for _, id := range slices.Sorted(maps.Keys(out)) {
		for _, c := range out[id] {
			log.Warn("a configured contract does not answer as its kind; the reads that need it leave their fields unknown", "chainId", id, "contract", c.Contract, "kind", c.Kind, "problem", c.Problem)
		}
	}
	s.checks.mu.Lock()
	s.checks.got, s.checks.swappers = out, bad
	s.checks.mu.Unlock()
	return out
}

// checkChain runs one chain's contract checks and its swapper check at
// once: the swappers' findings come last.
func checkChain(ctx context.Context, up *vocab.Upstreams) ([]ContractCheck, map[string]string) {
	var swappers []ContractCheck
	var failed map[string]string
	done := make(chan struct{})
	go func() {
		defer close(done)
		swappers, failed = checkSwappers(ctx, up)
	}()
	found := checkChainContracts(ctx, up)
	<-done
	return append(found, swappers...), failed
}

// checkedContracts is what the start-up checks found on chain id.
func (s *Service) checkedContracts(id uint64) []ContractCheck {
	s.checks.mu.Lock()
	defer s.checks.mu.Unlock()
	return s.checks.got[id]
}

// checkChainContracts runs one chain's checks, in a stable order.
func checkChainContracts(ctx context.Context, up *vocab.Upstreams) []ContractCheck {
	var out []ContractCheck
	cfg := up.Config
	if ae := cfg.AutoExerciser; ae != (common.Address{}) {
		if _, _, err := up.Chain.DelegateView(ctx, common.Address{}, ae, nil); mismatch(err) {
			out = append(out, ContractCheck{Contract: ae.Hex(), Kind: "AutoExerciseTimeBased", Problem: problem.As(err).Message})
		}
	}
	pools := make([]common.Address, 0, len(cfg.PoolDex))
	for p := range cfg.PoolDex {
		pools = append(pools, p)
	}
	sort.Slice(pools, func(i, j int) bool { return pools[i].Cmp(pools[j]) < 0 })
	for _, p := range pools {
		if _, err := up.Chain.PoolStates(ctx, []common.Address{p}); mismatch(err) {
			kind := fmt.Sprintf("%s pool (slot0 layout %q)", cfg.PoolDex[p], cfg.PoolSlot0(p))
			out = append(out, ContractCheck{Contract: p.Hex(), Kind: kind, Problem: problem.As(err).Message})
		}
	}
	markets := make([]common.Address, 0, len(cfg.MarketPools))
	for m := range cfg.MarketPools {
		markets = append(markets, m)
	}
	sort.Slice(markets, func(i, j int) bool { return markets[i].Cmp(markets[j]) < 0 })
	for _, m := range markets {
		if c, ok := checkPricing(ctx, up, m); ok {
			out = append(out, c)
		}
	}
	return out
}

// checkPricing reads market's pricing as a quote does (one PricingRead of
// a one-hour call at tick 0, no amount): a pricing with a ttl table but no
// volatility function the gateway reads is named (its iv is null).
func checkPricing(ctx context.Context, up *vocab.Upstreams, market common.Address) (ContractCheck, bool) {
	ask := contracts.PricingAsk{StrikeTick: new(big.Int), Ttl: big.NewInt(3600), Total: new(big.Int)}
	head, answers, err := up.Chain.ReadPricing(ctx, market, common.Address{}, []contracts.PricingAsk{ask})
	if err != nil || head.Pricing == (common.Address{}) || len(answers) != 1 {
		return ContractCheck{}, false // the market's own reads say why (a V1 market has no pricing)
	}
	if a := answers[0]; a.VolOk && a.VolFrom == contracts.VolNone {
		return ContractCheck{Contract: head.Pricing.Hex(), Kind: "option pricing of market " + market.Hex(),
			Problem: "answers ttlToVol but none of getVolatility(4 arguments), getVolatility(3 arguments), OptionPricingV2's volatilityCap(): the IV it prices at is not known, iv is null"}, true
	}
	return ContractCheck{}, false
}

// mismatch: err says the contract answered, but not as its kind (not a
// node that could not be asked now).
func mismatch(err error) bool {
	var transport rpc.HTTPError
	if err == nil || errors.As(err, &transport) {
		return false
	}
	if problem.As(err).Code == problem.NotRecorded {
		return false
	}
	k := problem.As(err).Kind()
	return !slices.Contains([]problem.Kind{problem.KindUpstreamUnavailable, problem.KindUpstreamTimeout}, k)
}
