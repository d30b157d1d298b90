package scenario

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
)

// The transactions of a history (history.go), each with the logs its
// contract calls emit, in the contracts' order.

// mintTx is an LP's deposit through the position manager: with compound
// set, the fees compounded first (LogFeeCompound), then the shares minted
// (ERC6909 Transfer from zero) and LogMintedPosition. Shares are the
// handler's: the liquidity itself for the first deposit, else
// liquidity * totalSupply / (totalLiquidity + 1) rounded down (no donation
// is locked: the scenario's deposits come long after its donations).
func (h *history) mintTx(p *position, lp common.Address, ts int64, liq, compound *big.Int) *tx {
	pm := h.s.Market.pm()
	return &tx{ts: ts, from: lp, to: pm, build: func(uint64) ([]types.Log, error) {
		var out []types.Log
		if compound != nil {
			p.total.Add(p.total, compound)
			out = append(out, ev.log(p.key.handler, ev.feeCompound, p.key.handler, p.key.pool, p.id, i24(p.key.lo), i24(p.key.hi), compound))
		}
		shares := new(big.Int).Set(liq)
		if p.supply.Sign() > 0 {
			shares.Mul(liq, p.supply).Quo(shares, new(big.Int).Add(p.total, big.NewInt(1)))
		}
		p.total.Add(p.total, liq)
		p.supply.Add(p.supply, shares)
		p.holds(lp, shares)
		out = append(out, ev.share(p, pm, common.Address{}, lp, shares))
		if p.v1 {
			out = append(out, ev.log(p.key.handler, ev.mintedV1, p.id, liq, p.key.pool, lp, i24(p.key.lo), i24(p.key.hi)))
		} else {
			out = append(out, ev.log(p.key.handler, ev.minted, p.id, liq, p.key.pool, p.key.hook, lp, i24(p.key.lo), i24(p.key.hi)))
		}
		return logs(out...)
	}}
}

// burnAllTx withdraws all of lp's shares but one: the handler burns
// shares * (totalLiquidity + 1) / totalSupply rounded up, so all shares
// would burn one unit more than the range holds and revert; one share less
// burns all of it when shares and liquidity are one to one.
func (h *history) burnAllTx(p *position, lp common.Address, ts int64) *tx {
	pm := h.s.Market.pm()
	return &tx{ts: ts, from: lp, to: pm, build: func(uint64) ([]types.Log, error) {
		shares := new(big.Int).Sub(p.supply, big.NewInt(1))
		liq := new(big.Int).Mul(shares, new(big.Int).Add(p.total, big.NewInt(1)))
		liq.Add(liq, new(big.Int).Sub(p.supply, big.NewInt(1))).Quo(liq, p.supply)
		if p.used.Sign() != 0 || liq.Cmp(p.total) != 0 {
			return nil, fmt.Errorf("range %s: emptying it burns %s of %s (%s used)", rangeID(p.key), liq, p.total, p.used)
		}
		p.total.Sub(p.total, liq)
		p.supply.Sub(p.supply, shares)
		p.holds(lp, new(big.Int).Neg(shares))
		out := []types.Log{ev.share(p, pm, lp, common.Address{}, shares)}
		if p.v1 {
			out = append(out, ev.log(p.key.handler, ev.burnedV1, p.id, liq, p.key.pool, lp, i24(p.key.lo), i24(p.key.hi)))
		} else {
			out = append(out, ev.log(p.key.handler, ev.burned, p.id, liq, p.key.pool, p.key.hook, lp, i24(p.key.lo), i24(p.key.hi)))
		}
		return logs(out...)
	}}
}

// priceTx is a trade that leaves pool at tick's price.
func (h *history) priceTx(pool common.Address, tick int, ts int64) *tx {
	return &tx{ts: ts, from: trader, to: pool, build: func(uint64) ([]types.Log, error) {
		sqrt, err := clamm.SqrtRatioAtTick(tick)
		if err != nil {
			return nil, err
		}
		return logs(ev.log(pool, ev.swap, trader, trader, new(big.Int), new(big.Int), sqrt, new(big.Int), i24(tick)))
	}}
}

// headPriceTx is a trade that leaves the pool at its stated head price.
func (h *history) headPriceTx(p Pool, ts int64) *tx {
	return &tx{ts: ts, from: trader, to: p.Address, build: func(uint64) ([]types.Log, error) {
		sqrt, err := p.SqrtPriceX96()
		if err != nil {
			return nil, err
		}
		return logs(ev.log(p.Address, ev.swap, trader, trader, new(big.Int), new(big.Int), sqrt, new(big.Int), i24(p.Tick)))
	}}
}

// headSwap leaves the pool at its stated head price, in the head block.
func (h *history) headSwap(p Pool) {
	t := h.headPriceTx(p, h.s.Block.Timestamp)
	t.block = h.s.Block.Number
	h.add(t)
}

// donationTx is OtherApp's donation to a range (the premium of one of its
// purchases).
func (h *history) donationTx(p *position, liq *big.Int, ts int64) *tx {
	return &tx{ts: ts, from: OtherApp, to: OtherApp, build: func(block uint64) ([]types.Log, error) {
		p.total.Add(p.total, liq)
		p.donated = new(big.Int).Add(p.locked(block), liq)
		p.lastDonation = block
		return logs(ev.log(p.key.handler, ev.donation, p.id, liq))
	}}
}

// holds adds delta to lp's shares of the range.
func (p *position) holds(lp common.Address, delta *big.Int) {
	if p.shares[lp] == nil {
		p.shares[lp] = new(big.Int)
	}
	p.shares[lp].Add(p.shares[lp], delta)
}

// lockedBlocks is the handlers' lockedBlockDuration as deployed
// (stryke-xyz/clamm handlers: 100 blocks): a donation unlocks linearly over
// it.
const lockedBlocks = 100

// locked is the handler's _donationLocked at block.
func (p *position) locked(block uint64) *big.Int {
	if p.donated == nil || block >= p.lastDonation+lockedBlocks {
		return new(big.Int)
	}
	gone := new(big.Int).Mul(p.donated, new(big.Int).SetUint64(block-p.lastDonation))
	return gone.Sub(p.donated, gone.Quo(gone, big.NewInt(lockedBlocks)))
}

// use records L of a range used, refusing more than it holds free.
func (p *position) use(l *big.Int, who string) error {
	if new(big.Int).Add(p.used, l).Cmp(p.total) > 0 {
		return fmt.Errorf("%s uses %s of range %s, which holds %s with %s used", who, l, rangeID(p.key), p.total, p.used)
	}
	p.used.Add(p.used, l)
	return nil
}

// otherUse is OtherApp's use of each listed range beyond the scenario's
// open options, in the ten minutes before the head (a second apart, more
// to a second past 600 ranges).
func (h *history) otherUse() {
	for i, k := range h.order {
		p := h.ranges[k]
		if !p.listed || h.gap(p).Sign() == 0 {
			continue
		}
		gap := h.gap(p)
		h.add(&tx{ts: h.s.Block.Timestamp - 600 + int64(i%600), from: OtherApp, to: OtherApp, build: func(uint64) ([]types.Log, error) {
			if err := p.use(gap, "OtherApp"); err != nil {
				return nil, err
			}
			return logs(ev.log(k.handler, ev.use, p.id, gap))
		}})
	}
}

// purchase is mintOption by the option's buyer, and the option's move to
// its owner when they differ.
func (h *history) purchase(o Option) {
	s, m := h.s, h.s.Market.Address
	buyer := common.HexToAddress(o.MintBuyer())
	id := new(big.Int).SetUint64(o.TokenID)
	if pool, ok := s.primePool(); ok {
		h.add(h.headPriceTx(pool, o.MintTimestamp))
	}
	h.add(&tx{ts: o.MintTimestamp, hash: o.MintTxHash, from: buyer, to: m, build: func(uint64) ([]types.Log, error) {
		var out []types.Log
		for _, l := range o.Legs {
			p := h.ranges[rangeKey{l.Handler, l.Pool, l.Hook, l.TickLower, l.TickUpper}]
			liq, _ := new(big.Int).SetString(l.Liquidity, 10)
			if err := p.use(liq, fmt.Sprintf("option %d", o.TokenID)); err != nil {
				return nil, err
			}
			out = append(out, ev.log(l.Handler, ev.use, p.id, liq))
		}
		size, err := s.Size(o)
		if err != nil {
			return nil, err
		}
		premium, _ := new(big.Int).SetString(o.Premium, 10)
		fees, ok := new(big.Int).SetString(o.ProtocolFees, 10)
		if !ok {
			fees = new(big.Int)
		}
		out = append(out, ev.log(m, ev.nft, common.Address{}, buyer, id))
		if s.Market.Version == 1 {
			out = append(out, ev.log(m, ev.mintV1, buyer, id, o.IsCall, premium, size))
		} else {
			out = append(out, ev.log(m, ev.mint, buyer, id, o.IsCall, premium, size, fees))
		}
		return logs(out...)
	}})
	if o.Owner != buyer {
		at := min(o.MintTimestamp+3600, (o.MintTimestamp+s.Block.Timestamp)/2)
		h.add(&tx{ts: at, from: buyer, to: m, build: func(uint64) ([]types.Log, error) {
			return logs(ev.log(m, ev.nft, buyer, o.Owner, id))
		}})
	}
}

// exercise is exerciseOption by the option's owner, every leg in full, at
// the prime pool's price SqrtRatioAtTick(e.Tick).
func (h *history) exercise(e Exercise) error {
	s := h.s
	o, ok := s.option(e.TokenID)
	if !ok {
		return fmt.Errorf("exercise of unknown option %d", e.TokenID)
	}
	a, err := s.assetsOf(o)
	if err != nil {
		return err
	}
	m := s.Market.Address
	h.add(&tx{ts: e.Timestamp, block: e.BlockNumber, hash: e.TxHash, from: o.Owner, to: m, build: func(uint64) ([]types.Log, error) {
		sqrt, err := clamm.SqrtRatioAtTick(e.Tick)
		if err != nil {
			return nil, err
		}
		var out []types.Log
		profit, size := new(big.Int), new(big.Int)
		for _, l := range o.Legs {
			p := h.ranges[rangeKey{l.Handler, l.Pool, l.Hook, l.TickLower, l.TickUpper}]
			liq, _ := new(big.Int).SetString(l.Liquidity, 10)
			leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, liq, a.is0)
			if err != nil {
				return nil, err
			}
			got := clamm.SwapAtPrice(leg.AmountToSwap, sqrt, a.is0)
			out = append(append(out, h.swapLogs(a, leg.AmountToSwap, got, e.Tick)...), ev.log(l.Handler, ev.unuse, p.id, liq))
			p.used.Sub(p.used, liq)
			size.Add(size, leg.AmountToSwap)
			profit.Add(profit, got.Sub(got, leg.AmountReq))
		}
		out = append(out, ev.erc20(a.get, m, o.Owner, profit), ev.log(m, ev.exercise, o.Owner, new(big.Int).SetUint64(o.TokenID), profit, size))
		return logs(out...)
	}})
	return nil
}

func i24(v int) *big.Int { return big.NewInt(int64(v)) }

// optionAssets are an option's collateral (use) and profit token (get),
// whether the collateral is the prime pool's token0, and that pool.
type optionAssets struct {
	use, get common.Address
	is0      bool
	pool     Pool
}

func (s *Scenario) assetsOf(o Option) (optionAssets, error) {
	pool, ok := s.primePool()
	if !ok {
		return optionAssets{}, fmt.Errorf("no prime pool")
	}
	a := optionAssets{use: s.Market.PutAsset, get: s.Market.CallAsset, pool: pool}
	if o.IsCall {
		a.use, a.get = a.get, a.use
	}
	a.is0 = a.use == pool.Token0
	return a, nil
}

// swapLogs are the market's swap of amountIn of the collateral through
// the scenario's swapper in the prime pool at tick's price (no fee, no
// price impact), delivering got back to the market: the transfer to the
// swapper, the pool's Swap, the proceeds' transfer.
func (h *history) swapLogs(a optionAssets, amountIn, got *big.Int, tick int) []types.Log {
	m := h.s.Market.Address
	sqrt, _ := clamm.SqrtRatioAtTick(tick) // the callers computed it from the same tick
	in, outAmt := new(big.Int).Set(amountIn), new(big.Int).Neg(got)
	a0, a1 := in, outAmt
	if !a.is0 {
		a0, a1 = outAmt, in
	}
	return []types.Log{ev.erc20(a.use, m, h.swapper, amountIn),
		ev.log(a.pool.Address, ev.swap, h.swapper, h.swapper, a0, a1, sqrt, new(big.Int), i24(tick)),
		ev.erc20(a.get, h.swapper, m, got)}
}
