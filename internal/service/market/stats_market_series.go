package market

import (
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// flows are one span's sums, as the subgraph's daily records keep them.
type flows struct {
	purchases, exercises, buyers int
	// [call|put] pairs: volume, premium, protocol fees in the option's
	// collateral; profit in its profit token (calls' in the put asset).
	volume, premium, fees, profit [2]*big.Int
	// call-asset figures valued in the put asset at each event's price
	volumeIn, premiumIn, feesIn, profitIn *big.Int
}

func newFlows() *flows {
	z := func() *big.Int { return new(big.Int) }
	return &flows{volume: [2]*big.Int{z(), z()}, premium: [2]*big.Int{z(), z()}, fees: [2]*big.Int{z(), z()}, profit: [2]*big.Int{z(), z()},
		volumeIn: z(), premiumIn: z(), feesIn: z(), profitIn: z()}
}

// addDay adds a whole day's record.
func (f *flows) addDay(d subgraph.StatsDay) {
	f.purchases += d.Purchases
	f.exercises += d.Exercises
	f.buyers += d.Buyers
	for _, p := range []struct{ dst, src *big.Int }{
		{f.volume[0], d.CallVolume.Int}, {f.volume[1], d.PutVolume.Int}, {f.premium[0], d.CallPremium.Int}, {f.premium[1], d.PutPremium.Int},
		{f.fees[0], d.CallProtocolFees.Int}, {f.fees[1], d.PutProtocolFees.Int}, {f.profit[0], d.CallProfit.Int}, {f.profit[1], d.PutProfit.Int},
		{f.volumeIn, d.CallVolumeInPut.Int}, {f.premiumIn, d.CallPremiumInPut.Int}, {f.feesIn, d.CallProtocolFeesInPut.Int}, {f.profitIn, d.PutProfitInPut.Int},
	} {
		p.dst.Add(p.dst, p.src)
	}
}

// addPurchase adds one purchase of a partial day.
func (f *flows) addPurchase(p subgraph.StatsPurchase, v valuer) {
	f.purchases++
	side := 1
	if p.IsCall {
		side = 0
		f.volumeIn.Add(f.volumeIn, v.inPut(p.TotalAssetWithdrawn.Int, p.SqrtPriceX96.Int))
		f.premiumIn.Add(f.premiumIn, v.inPut(p.Premium.Int, p.SqrtPriceX96.Int))
		f.feesIn.Add(f.feesIn, v.inPut(p.ProtocolFees.Int, p.SqrtPriceX96.Int))
	}
	f.volume[side].Add(f.volume[side], p.TotalAssetWithdrawn.Int)
	f.premium[side].Add(f.premium[side], p.Premium.Int)
	f.fees[side].Add(f.fees[side], p.ProtocolFees.Int)
}

// addExercise adds one exercise of a partial day: a call's profit is in the
// put asset, a put's in the call asset (valued in the put asset too).
func (f *flows) addExercise(x subgraph.StatsExercise, v valuer) {
	f.exercises++
	if x.Option.IsCall {
		f.profit[0].Add(f.profit[0], x.TotalProfit.Int)
		return
	}
	f.profit[1].Add(f.profit[1], x.TotalProfit.Int)
	f.profitIn.Add(f.profitIn, v.inPut(x.TotalProfit.Int, x.SqrtPriceX96.Int))
}

func (f *flows) add(o *flows) {
	f.purchases += o.purchases
	f.exercises += o.exercises
	for i := 0; i < 2; i++ {
		f.volume[i].Add(f.volume[i], o.volume[i])
		f.premium[i].Add(f.premium[i], o.premium[i])
		f.fees[i].Add(f.fees[i], o.fees[i])
		f.profit[i].Add(f.profit[i], o.profit[i])
	}
	f.volumeIn.Add(f.volumeIn, o.volumeIn)
	f.premiumIn.Add(f.premiumIn, o.premiumIn)
	f.feesIn.Add(f.feesIn, o.feesIn)
	f.profitIn.Add(f.profitIn, o.profitIn)
}

// figures are the JSON of f. Volume, premiums and fees are by collateral
// (calls' in the call asset); profit by the token paid (puts' in the call
// asset), so each StatsAmounts pairs a call-asset and a put-asset amount.
func (f *flows) figures(v valuer) StatsFigures {
	return StatsFigures{
		Purchases: f.purchases, Buyers: f.buyers, Exercises: f.exercises,
		Volume:       v.amounts(f.volume[0], f.volume[1], f.volumeIn),
		Premiums:     v.amounts(f.premium[0], f.premium[1], f.premiumIn),
		ProtocolFees: v.amounts(f.fees[0], f.fees[1], f.feesIn),
		Profit:       v.amounts(f.profit[1], f.profit[0], f.profitIn),
	}
}

// series is one entry per UTC day the window [from, to) touches, and the
// totals: whole days from their records, the cut days from their events.
// The totals' buyers are the window's distinct buyers, the union of the
// whole days' MarketDayBuyer records and the cut days' purchases' buyers.
//
// It also returns each day's buyers (by the day's start).
func (r *statsRead) series(req StatsRequest, v valuer) ([]StatsDay, StatsFigures, map[int64]map[common.Address]bool) {
	first, last := req.From/day*day, (req.To-1)/day*day
	byDay := map[int64]*flows{}
	partBuyers := map[int64]map[common.Address]bool{}
	all := map[common.Address]bool{}
	for d := first; d <= last; d += day {
		byDay[d] = newFlows()
	}
	for _, d := range r.days {
		byDay[d.Start].addDay(d)
	}
	for _, b := range r.buyers {
		all[b.Buyer.Addr()] = true
		addBuyer(partBuyers, b.Start, b.Buyer.Addr())
	}
	wholeDay := map[int64]bool{}
	for _, d := range r.days {
		wholeDay[d.Start] = true
	}
	for _, p := range r.purchases {
		d := p.Timestamp.Int64() / day * day
		byDay[d].addPurchase(p, v)
		addBuyer(partBuyers, d, p.Buyer.Addr())
		all[p.Buyer.Addr()] = true
	}
	for _, x := range r.exercises {
		byDay[x.Timestamp.Int64()/day*day].addExercise(x, v)
	}
	total := newFlows()
	out := make([]StatsDay, 0, len(byDay))
	for d := first; d <= last; d += day {
		f := byDay[d]
		if !wholeDay[d] {
			f.buyers += len(partBuyers[d]) // a whole day's record counts its own
		}
		total.add(f)
		out = append(out, StatsDay{start: d, Start: strconv.FormatInt(d, 10), From: strconv.FormatInt(max(d, req.From), 10), To: strconv.FormatInt(min(d+day, req.To), 10), StatsFigures: f.figures(v)})
	}
	total.buyers = len(all)
	return out, total.figures(v), partBuyers
}

// addBuyer adds buyer to day's set.
func addBuyer(days map[int64]map[common.Address]bool, day int64, buyer common.Address) {
	if days[day] == nil {
		days[day] = map[common.Address]bool{}
	}
	days[day][buyer] = true
}
