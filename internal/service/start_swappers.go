package service

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// swapperProber is the chain read of the swapper check (package chain's
// Reader has it). It is asked for, not required of every vocab.Chain: a
// test's fake chain without it is simply not checked.
type swapperProber interface {
	ProbeSwappers(ctx context.Context, swappers []common.Address) ([]chain.SwapperAnswer, error)
}

// swapperUse is one configured swapper contract as a kind: the ids (and
// byDex DEX names) that name it, and the router the configuration says it
// swaps through (zero: not said).
type swapperUse struct {
	addr   common.Address
	kind   string
	names  []string
	ids    []string
	router common.Address
}

// configuredSwappers are the chain's configured swapper contracts, each
// address and kind once (Mantle's uni-v3 names its Agni swapper twice:
// as its address and in byDex), ordered by address then kind. They are
// all the check asks about: at most the configuration's own entries.
func configuredSwappers(cfg *config.Chain) []*swapperUse {
	byKey := map[string]*swapperUse{}
	add := func(addr common.Address, sw *config.Swapper, id, name string) {
		key := addr.Hex() + "/" + sw.Kind
		u := byKey[key]
		if u == nil {
			u = &swapperUse{addr: addr, kind: sw.Kind, router: sw.Router}
			byKey[key] = u
		}
		if !slices.Contains(u.names, name) {
			u.names = append(u.names, name)
		}
		if !slices.Contains(u.ids, id) {
			u.ids = append(u.ids, id)
		}
	}
	for id, sw := range cfg.Swappers {
		if sw == nil || (sw.Kind != config.SwapperUniswapV3 && sw.Kind != config.Swapper1inch) {
			continue
		}
		if sw.Address != (common.Address{}) {
			add(sw.Address, sw, id, id)
		}
		for dex, a := range sw.ByDex {
			add(a, sw, id, id+" (byDex "+dex+")")
		}
	}
	out := make([]*swapperUse, 0, len(byKey))
	for _, u := range byKey {
		sort.Strings(u.names)
		sort.Strings(u.ids)
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool {
		if c := out[i].addr.Cmp(out[j].addr); c != 0 {
			return c < 0
		}
		return out[i].kind < out[j].kind
	})
	return out
}

// checkSwappers probes the chain's configured swappers in one read: each
// holds code, answers its kind's probe (uniswap-v3: sr(), a
// SwapRouterSwapper's router; 1inch: oneInchRouter()), the router it names
// holds code and is the configured router where one is configured. It
// returns the mismatches and, by swapperId, why each failing swapper
// failed (a swapper one of whose contracts fails fails whole). A probe the
// node cannot answer now is no finding (as the other checks): answered
// false then.
func checkSwappers(ctx context.Context, up *vocab.Upstreams) ([]ContractCheck, map[string]string, bool) {
	p, ok := up.Chain.(swapperProber)
	uses := configuredSwappers(up.Config)
	if !ok || len(uses) == 0 {
		return nil, nil, true
	}
	addrs := make([]common.Address, len(uses))
	for i, u := range uses {
		addrs[i] = u.addr
	}
	answers, err := p.ProbeSwappers(ctx, addrs)
	if err != nil || len(answers) != len(uses) {
		return nil, nil, false
	}
	var checks []ContractCheck
	failed := map[string]string{}
	for i, u := range uses {
		why := judgeSwapper(u, answers[i])
		if why == "" {
			continue
		}
		checks = append(checks, ContractCheck{Contract: u.addr.Hex(), Kind: u.kind + " swapper " + strings.Join(u.names, ", "), Problem: why})
		for _, id := range u.ids {
			if _, seen := failed[id]; !seen {
				failed[id] = u.addr.Hex() + ": " + why
			}
		}
	}
	return checks, failed, true
}

// judgeSwapper is why u's answer is not its configured kind's, "" when it is.
func judgeSwapper(u *swapperUse, a chain.SwapperAnswer) string {
	if !a.Code {
		return "no code at this address (sr() and oneInchRouter() answer nothing, as an account without code does)"
	}
	probe, router, routerCode := "sr()", a.SwapRouter, a.SwapRouterCode
	if u.kind == config.Swapper1inch {
		probe, router, routerCode = "oneInchRouter()", a.OneInchRouter, a.OneInchRouterCode
	}
	switch {
	case router == nil:
		return fmt.Sprintf("does not answer %s as a %s swapper does; %s", probe, u.kind, foundSwapper(a))
	case !routerCode:
		return fmt.Sprintf("the router its %s names, %s, has no code", probe, router.Hex())
	case u.router != (common.Address{}) && u.router != *router:
		return fmt.Sprintf("its %s names router %s, the configuration says %s", probe, router.Hex(), u.router.Hex())
	}
	return ""
}

// foundSwapper says what a contract that is not its configured kind
// answered instead.
func foundSwapper(a chain.SwapperAnswer) string {
	switch {
	case a.SwapRouter != nil:
		return "it answers sr() = " + a.SwapRouter.Hex() + " (a SwapRouterSwapper: kind uniswap-v3)"
	case a.OneInchRouter != nil:
		return "it answers oneInchRouter() = " + a.OneInchRouter.Hex() + " (a OneInchSwapper: kind 1inch)"
	}
	return "it answers neither sr() nor oneInchRouter(): not a swapper this gateway knows"
}
