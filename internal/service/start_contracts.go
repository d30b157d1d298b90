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
// kind at the latest check: what it was taken for and what it answered.
// The gateway guesses nothing from it (the reads that need the contract
// say so in their own answers); /readyz shows it, and it is logged once,
// when first found.
type ContractCheck struct {
	Contract string `json:"contract"`
	Kind     string `json:"kind"`
	Problem  string `json:"problem"`
}

// contractChecks are the checks' current findings per chain: the
// contracts' (start-up only), the swappers' (re-checked: KeepChecking),
// and the configured swappers failing theirs (by chain, then swapperId),
// which the exercise prepare's auto never picks (trade.SwapperChecks).
// unknown are the chains whose swapper probe has not been answered yet.
type contractChecks struct {
	mu            sync.Mutex
	got           map[uint64][]ContractCheck
	swapperChecks map[uint64][]ContractCheck
	swappers      map[uint64]map[string]string
	unknown       map[uint64]bool
}

// SwapperProblem is why the configured swapper id of chainID fails the
// swapper check now; false when it passed, or before the check has answered.
func (c *contractChecks) SwapperProblem(chainID uint64, id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	why, ok := c.swappers[chainID][id]
	return why, ok
}

// swappersUnsettled: a configured swapper fails its check, or a chain's
// swapper probe was not answered; KeepChecking then asks again sooner.
func (c *contractChecks) swappersUnsettled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, failed := range c.swappers {
		if len(failed) > 0 {
			return true
		}
	}
	return len(c.unknown) > 0
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
// parallel. A mismatch is logged when first found, and kept for /readyz;
// it leaves the chain ready (the reads that need such a contract say
// so), and a failing swapper is left out of the exercise prepare's auto
// and direct until a later check passes it (KeepChecking).
func (s *Service) CheckContracts(ctx context.Context, log *slog.Logger) map[uint64][]ContractCheck {
	verdicts := s.runChecks(ctx, true)
	out := map[uint64][]ContractCheck{}
	for id, v := range verdicts {
		if found := append(slices.Clone(v.contracts), v.swappers...); len(found) > 0 {
			out[id] = found
		}
	}
	s.keep(verdicts, true, log)
	return out
}

// recheckSwappers runs the swapper check alone (KeepChecking's shorter
// cadence).
func (s *Service) recheckSwappers(ctx context.Context, log *slog.Logger) {
	s.keep(s.runChecks(ctx, false), false, log)
}

// chainVerdict is one chain's findings: the contracts' (nil when not
// run), the swappers' and, by swapperId, why each failing one fails;
// answered is false when the swapper probe could not be asked now.
type chainVerdict struct {
	contracts []ContractCheck
	swappers  []ContractCheck
	failed    map[string]string
	answered  bool
}

// runChecks runs each served chain's checks in parallel: all of them,
// or the swapper check alone.
func (s *Service) runChecks(ctx context.Context, all bool) map[uint64]chainVerdict {
	out := map[uint64]chainVerdict{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, up := range s.chains {
		if up.Chain == nil || up.Config == nil || up.Mode == config.ModeDemo {
			continue // a demo's recorded answers are not the contracts'
		}
		wg.Go(func() {
			v := checkChain(ctx, up, all)
			mu.Lock()
			defer mu.Unlock()
			out[id] = v
		})
	}
	wg.Wait()
	return out
}

// keep stores the verdicts (the contracts' too when all), logging each
// finding not held before and each swapper finding that cleared. A swapper
// probe not answered keeps the chain's last verdict: an unreachable node
// neither fails nor clears a swapper.
func (s *Service) keep(verdicts map[uint64]chainVerdict, all bool, log *slog.Logger) {
	s.checks.mu.Lock()
	defer s.checks.mu.Unlock()
	c := &s.checks
	if c.got == nil {
		c.got, c.swapperChecks, c.swappers, c.unknown = map[uint64][]ContractCheck{}, map[uint64][]ContractCheck{}, map[uint64]map[string]string{}, map[uint64]bool{}
	}
	for _, id := range slices.Sorted(maps.Keys(verdicts)) {
		v := verdicts[id]
		var found []ContractCheck
		if all {
			found = append(found, newChecks(c.got[id], v.contracts)...)
			c.got[id] = v.contracts
		}
		if !v.answered {
			c.unknown[id] = true
		} else {
			delete(c.unknown, id)
			found = append(found, newChecks(c.swapperChecks[id], v.swappers)...)
			for _, cleared := range newChecks(v.swappers, c.swapperChecks[id]) {
				log.Info("a configured swapper passes its check now; auto and direct may choose it", "chainId", id, "contract", cleared.Contract, "kind", cleared.Kind)
			}
			c.swapperChecks[id], c.swappers[id] = v.swappers, v.failed
		}
		for _, f := range found {
			log.Warn("a configured contract does not answer as its kind; the reads that need it leave their fields unknown", "chainId", id, "contract", f.Contract, "kind", f.Kind, "problem", f.Problem)
		}
	}
}

// newChecks are the checks of now not in before.
func newChecks(before, now []ContractCheck) []ContractCheck {
	var out []ContractCheck
	for _, c := range now {
		if !slices.Contains(before, c) {
			out = append(out, c)
		}
	}
	return out
}

// checkChain runs one chain's swapper check and (all) its contract
// checks at once.
func checkChain(ctx context.Context, up *vocab.Upstreams, all bool) chainVerdict {
	var v chainVerdict
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.swappers, v.failed, v.answered = checkSwappers(ctx, up)
	}()
	if all {
		v.contracts = checkChainContracts(ctx, up)
	}
	<-done
	return v
}

// checkedContracts is what the checks found on chain id: the contracts'
// at start, then the swappers' now.
func (s *Service) checkedContracts(id uint64) []ContractCheck {
	s.checks.mu.Lock()
	defer s.checks.mu.Unlock()
	return append(slices.Clone(s.checks.got[id]), s.checks.swapperChecks[id]...)
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
