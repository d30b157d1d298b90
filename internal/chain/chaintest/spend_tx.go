package chaintest

import (
	"bytes"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// mintParams is mintOption's OptionParams as go-ethereum unpacks it.
type mintParams struct {
	OptionTicks      []optionTick
	TickLower        *big.Int
	TickUpper        *big.Int
	Ttl              *big.Int
	IsCall           bool
	MaxCostAllowance *big.Int
}

type optionTick struct {
	Handler        common.Address
	Pool           common.Address
	Hook           common.Address
	TickLower      *big.Int
	TickUpper      *big.Int
	LiquidityToUse *big.Int
}

// mintOption runs the market's mintOption from the signer: each leg used
// (its range's free liquidity, the hook's consent, the collateral it
// withdraws), then the cost charged.
func (s *spendRun) mintOption(addr common.Address, m *Market, data []byte) ([]byte, bool) {
	v, err := contracts.MintOption.Methods["mintOption"].Inputs.Unpack(data[4:])
	if err != nil || len(v) != 1 {
		return []byte{}, false
	}
	p := *abi.ConvertType(v[0], new(mintParams)).(*mintParams)
	if len(p.OptionTicks) > 20 {
		return customError("DopexV2OptionMarket__MaxOptionBuyReached"), false
	}
	asset := m.PutAsset
	if p.IsCall {
		asset = m.CallAsset
	}
	total := new(big.Int)
	for _, t := range p.OptionTicks {
		amount, rev := s.useLeg(addr, m, p, t, asset)
		if rev != nil {
			return rev, false
		}
		total.Add(total, amount)
	}
	return s.charge(addr, m, p, total, asset)
}

// useLeg is one leg's checks and usePosition: the collateral it withdraws,
// or the revert data.
func (s *spendRun) useLeg(addr common.Address, m *Market, p mintParams, t optionTick, asset common.Address) (*big.Int, []byte) {
	strike := p.TickLower.Cmp(t.TickLower) == 0
	if p.IsCall {
		strike = p.TickUpper.Cmp(t.TickUpper) == 0
	}
	if !strike {
		return nil, customError("DopexV2OptionMarket__NotValidStrikeTick")
	}
	if !(t.Pool == m.PrimePool && m.ApprovedPools == nil || slices.Contains(m.ApprovedPools, t.Pool)) {
		return nil, customError("DopexV2OptionMarket__PoolNotApproved")
	}
	pm, h, pool := s.n.PositionManagers[m.PositionManager], s.n.Handlers[t.Handler], s.n.Pools[t.Pool]
	if pm == nil || !pm.Whitelist[contracts.WhitelistKey(t.Handler, addr)] {
		return nil, errorOf("DopexV2PositionManager__NotWhitelistedApp()")
	}
	if h == nil || pool == nil || !t.TickLower.IsInt64() || !t.TickUpper.IsInt64() {
		return nil, []byte{}
	}
	if h.Paused {
		return nil, ErrorString("Pausable: paused")
	}
	if !s.hookAllows(addr, p, t) {
		return nil, []byte{}
	}
	lo, hi := int(t.TickLower.Int64()), int(t.TickUpper.Int64())
	sa, errLo := clamm.SqrtRatioAtTick(lo)
	sb, errHi := clamm.SqrtRatioAtTick(hi)
	if errLo != nil || errHi != nil {
		return nil, []byte{}
	}
	r := s.rng(h, contracts.Position{V1: h.Version == 1, Handler: t.Handler, Pool: t.Pool, Hook: t.Hook, TickLower: lo, TickUpper: hi}.TokenID())
	if free := new(big.Int).Sub(r.TotalLiquidity, r.LiquidityUsed); free.Cmp(t.LiquidityToUse) < 0 {
		return nil, errorOf("UniswapV3SingleTickLiquidityHandlerV2__InsufficientLiquidity()")
	}
	r.LiquidityUsed.Add(r.LiquidityUsed, t.LiquidityToUse)
	a0, a1 := clamm.AmountsForLiquidity(pool.SqrtPriceX96, sa, sb, t.LiquidityToUse)
	used, other := a1, a0
	if pool.Token0 == asset {
		used, other = a0, a1
	}
	if used.Sign() == 0 || other.Sign() != 0 {
		return nil, []byte{} // the market's require: collateral in the option's asset only
	}
	return used, nil
}

// hookAllows asks a leg's hook (none: yes) its onPositionUse with the
// data the market sends through the handler.
func (s *spendRun) hookAllows(addr common.Address, p mintParams, t optionTick) bool {
	if t.Hook == (common.Address{}) {
		return true
	}
	hook := s.n.Hooks[t.Hook]
	if hook == nil {
		return false
	}
	hd, err := hookDataArgs.Pack(addr, p.Ttl, p.IsCall, t.Pool, t.TickLower, t.TickUpper)
	if err != nil {
		return false
	}
	call, err := contracts.Hook.Pack("onPositionUse", hd)
	if err != nil {
		return false
	}
	_, ok := s.n.hookCall(hook, call)
	return ok
}

// charge is the market's charge of the premium and fee its pricing asks
// for total (pricingAnswer, as the quote reads them): the fee taken
// first, the cost then checked against maxCostAllowance, the premium
// taken last.
func (s *spendRun) charge(addr common.Address, m *Market, p mintParams, total *big.Int, asset common.Address) ([]byte, bool) {
	pool := s.n.Pools[m.PrimePool]
	if pool == nil || m.Pricing == nil || s.n.Tokens[m.CallAsset] == nil || s.n.Tokens[m.PutAsset] == nil {
		return []byte{}, false
	}
	strike := p.TickLower
	if p.IsCall {
		strike = p.TickUpper
	}
	h := contracts.PricingHead{LastPrice: s.n.pricePerCallAsset(m, pool, pool.SqrtPriceX96)}
	a := s.n.pricingAnswer(m, h, contracts.PricingAsk{IsPut: !p.IsCall, StrikeTick: strike, Ttl: p.Ttl, Total: total})
	if !a.PremiumOk || a.Premium.Sign() == 0 {
		return customError("DopexV2OptionMarket__IVNotSet"), false
	}
	if !a.NoFee {
		if rev := s.transferFrom(asset, addr, a.Fee); rev != nil {
			return rev, false
		}
	}
	if new(big.Int).Add(a.Premium, a.Fee).Cmp(p.MaxCostAllowance) > 0 {
		return errorOf("DopexV2OptionMarket__MaxCostAllowanceExceeded()"), false
	}
	if rev := s.transferFrom(asset, addr, a.Premium); rev != nil {
		return rev, false
	}
	return []byte{}, true
}

// multicall runs the position manager's multicall from the signer: each
// call in order, the first revert passed on whole (OpenZeppelin's
// Multicall), the calls' answers otherwise.
func (s *spendRun) multicall(addr common.Address, pm *PositionManager, data []byte) ([]byte, bool) {
	m := contracts.PositionManagerLP.Methods["multicall"]
	v, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return []byte{}, false
	}
	calls := v[0].([][]byte)
	results := make([][]byte, len(calls))
	for i, c := range calls {
		ret, ok := s.mintPosition(addr, pm, c)
		if !ok {
			return ret, false
		}
		results[i] = ret
	}
	out, err := m.Outputs.Pack(results)
	return out, err == nil
}

// mintPosition is the position manager's: what the handler's
// tokensToPullForMint asks pulled from the signer, then the handler's
// mint. Any other call reverts.
func (s *spendRun) mintPosition(addr common.Address, pm *PositionManager, data []byte) ([]byte, bool) {
	mint := contracts.PositionManagerLP.Methods["mintPosition"]
	if len(data) < 4 || !bytes.Equal(data[:4], mint.ID) {
		return []byte{}, false
	}
	v, err := mint.Inputs.Unpack(data[4:])
	if err != nil {
		return []byte{}, false
	}
	handler := v[0].(common.Address)
	h := s.n.Handlers[handler]
	if h == nil || !pm.Handlers[handler] {
		return errorOf("DopexV2PositionManager__NotWhitelistedHandler()"), false
	}
	pos, _, ok := s.n.rangeOf(h, v[1].([]byte))
	pull, ok2 := s.n.tokensToPull(h, v[1].([]byte))
	if !ok || !ok2 {
		return []byte{}, false
	}
	pos.Handler = handler
	tokens, amounts := pull[0].([]common.Address), pull[1].([]*big.Int)
	for k, token := range tokens {
		if amounts[k].Sign() > 0 {
			if rev := s.transferFrom(token, addr, amounts[k]); rev != nil {
				return rev, false
			}
		}
	}
	return s.mintShares(h, pos, amounts)
}

// mintShares is the single-tick handler's mintPositionHandler for what
// was pulled: one-sided amounts only, the liquidity they buy (Uniswap's
// getLiquidityForAmounts, rounded down), shares 1:1 in a range without a
// supply and by convertToShares (rounded down) in one with.
func (s *spendRun) mintShares(h *Handler, pos contracts.Position, pulled []*big.Int) ([]byte, bool) {
	if h.Paused {
		return ErrorString("Pausable: paused"), false
	}
	if pulled[0].Sign() > 0 && pulled[1].Sign() > 0 {
		if h.Version == 1 {
			return errorOf("UniswapV3SingleTickLiquidityHandler__InRangeLP()"), false
		}
		return errorOf("UniswapV3SingleTickLiquidityHandlerV2__InRangeLP()"), false
	}
	heldIs0 := pulled[0].Sign() > 0
	held := pulled[1]
	if heldIs0 {
		held = pulled[0]
	}
	minted, err := clamm.LiquidityForAmount(pos.TickLower, pos.TickUpper, held, heldIs0)
	if err != nil || minted.Sign() == 0 {
		return []byte{}, false // the pool's mint of no liquidity reverts
	}
	r := s.rng(h, pos.TokenID())
	shares := new(big.Int).Set(minted)
	if r.TotalSupply.Sign() > 0 {
		shares = shareRange(h, r).ConvertToShares(minted, s.block)
	}
	r.TotalLiquidity.Add(r.TotalLiquidity, minted)
	r.TotalSupply.Add(r.TotalSupply, shares)
	r.Shares[s.signer] = new(big.Int).Add(orZero(r.Shares[s.signer]), shares)
	return common.LeftPadBytes(shares.Bytes(), 32), true
}
