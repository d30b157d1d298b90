package clamm

import "math/big"

// ShareRange is what a single-tick handler's share conversions read of one
// range (tokenIds(id) and the handler's lockedBlockDuration): its
// liquidity and share supply, and the premium donation still locked.
// Blocks are the EVM's block.number, which the handler stamps
// lastDonation with (on Arbitrum an estimate of Ethereum's block number,
// not the chain's own).
type ShareRange struct {
	TotalLiquidity, TotalSupply *big.Int
	DonatedLiquidity            *big.Int
	LastDonation                uint64
	LockedBlockDuration         uint64
}

// DonationLocked is the handler's _donationLocked at block: the part of
// the last donations not yet released, decaying linearly to 0 over
// lockedBlockDuration blocks from lastDonation (rounded so that the
// locked part is the larger: donated - floor(donated * elapsed /
// duration)). A block before lastDonation, which no read of the chain
// gives, counts the whole donation locked.
func (r ShareRange) DonationLocked(block uint64) *big.Int {
	d := r.DonatedLiquidity
	if d == nil || r.LockedBlockDuration == 0 || block >= r.LastDonation+r.LockedBlockDuration {
		return new(big.Int)
	}
	if block < r.LastDonation {
		return new(big.Int).Set(d)
	}
	released := new(big.Int).Mul(d, new(big.Int).SetUint64(block-r.LastDonation))
	released.Quo(released, new(big.Int).SetUint64(r.LockedBlockDuration))
	return released.Sub(d, released)
}

// worth is totalLiquidity + 1 - donationLocked: the liquidity the supply
// stands for at block (the +1 keeps a share's worth defined, and is what
// makes a burn of the whole supply ask one unit more than the range has).
func (r ShareRange) worth(block uint64) *big.Int {
	w := new(big.Int).Add(r.TotalLiquidity, big.NewInt(1))
	return w.Sub(w, r.DonationLocked(block))
}

// ConvertToAssets is the handler's convertToAssets(shares) at block:
// ceil(shares * (totalLiquidity + 1 - donationLocked) / totalSupply), the
// liquidity a burn or a reservation of the shares takes. 0 for a range
// with no supply (where the handler's division reverts).
func (r ShareRange) ConvertToAssets(shares *big.Int, block uint64) *big.Int {
	if r.TotalSupply.Sign() == 0 || shares.Sign() == 0 {
		return new(big.Int)
	}
	a := new(big.Int).Mul(shares, r.worth(block))
	q, m := a.QuoRem(a, r.TotalSupply, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// ConvertToShares is the handler's convertToShares(assets) at block:
// floor(assets * totalSupply / (totalLiquidity + 1 - donationLocked)), the
// shares a deposit of that liquidity mints into a range with a supply.
func (r ShareRange) ConvertToShares(assets *big.Int, block uint64) *big.Int {
	s := new(big.Int).Mul(assets, r.TotalSupply)
	return s.Quo(s, r.worth(block))
}

// SharesWithin is the most shares whose liquidity is at most liquidity
// whatever donation is still locked, now or at any later block:
// floor(liquidity * totalSupply / (totalLiquidity + 1)). A lock only
// lowers a share's worth and only releases as blocks pass, so
// ConvertToAssets(s) <= liquidity holds at every block when it holds with
// no lock: ceil(s * (T + 1) / S) <= liquidity exactly when s * (T + 1) <=
// liquidity * S.
func (r ShareRange) SharesWithin(liquidity *big.Int) *big.Int {
	if r.TotalSupply.Sign() == 0 || liquidity.Sign() <= 0 {
		return new(big.Int)
	}
	s := new(big.Int).Mul(liquidity, r.TotalSupply)
	return s.Quo(s, new(big.Int).Add(r.TotalLiquidity, big.NewInt(1)))
}
