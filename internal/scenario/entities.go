package scenario

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// genesis is the block the scenario's entities are written at: a scenario
// states the state at its head, not its history, so every block up to the
// head reads it.
const genesis = 0

// entities collects a scenario's entities before they are written.
type entities struct {
	st  *graphnode.Store
	err error
}

func (w *entities) set(typ, id string, e graphnode.Entity) {
	if w.err != nil {
		return
	}
	e["id"] = graphnode.String(id)
	w.err = w.st.Set(typ, id, e, genesis)
}

func addr(a common.Address) graphnode.Value { return graphnode.Bytes(a.Bytes()) }
func big0() graphnode.Value                 { return graphnode.BigIntOf(0) }
func dec(s string) graphnode.Value          { return graphnode.BigIntString(s) }

// index writes the entities the subgraph's mappings would hold for the
// scenario into st, with the head at the scenario's block: pools,
// strikes with their daily records, options with their legs, purchases,
// exercises, the market with its sums per day and all time.
func (s *Scenario) index(st *graphnode.Store) error {
	w := &entities{st: st}
	for _, p := range s.Pools {
		sqrt, _ := p.SqrtPriceX96()
		w.set("Pool", lower(p.Address), graphnode.Entity{"sqrtPriceX96": graphnode.BigInt(sqrt), "tick": graphnode.Int(int64(p.Tick)), "lastSwapBlock": big0()})
	}
	for _, strike := range s.Strikes {
		s.indexStrike(w, strike)
	}
	purchases := s.indexOptions(w)
	s.indexExercises(w)
	s.indexMarket(w, purchases)
	if w.err != nil {
		return w.err
	}
	if head := st.Head(); s.Block.Number >= head.Number {
		st.SetHead(graphnode.Block{Number: s.Block.Number, Timestamp: uint64(s.Block.Timestamp)})
	}
	return nil
}

// strikeTokenID is the handler's ERC6909 id of a range:
// keccak256(abi.encode(handler, pool, hook, tickLower, tickUpper)).
func strikeTokenID(st Strike) *big.Int {
	word := func(n int) []byte { return math.U256Bytes(big.NewInt(int64(n))) }
	enc := append(append(append(common.LeftPadBytes(st.Handler.Bytes(), 32), common.LeftPadBytes(st.Pool.Bytes(), 32)...),
		common.LeftPadBytes(st.Hook.Bytes(), 32)...), append(word(st.TickLower), word(st.TickUpper)...)...)
	return new(big.Int).SetBytes(crypto.Keccak256(enc))
}

func (s *Scenario) indexStrike(w *entities, st Strike) {
	id := st.ID()
	w.set("Strike", id, graphnode.Entity{
		"tokenId": graphnode.BigInt(strikeTokenID(st)), "handler": addr(st.Handler), "pool": addr(st.Pool), "hook": addr(st.Hook),
		"tickLower": graphnode.Int(int64(st.TickLower)), "tickUpper": graphnode.Int(int64(st.TickUpper)),
		"totalLiquidity": dec(st.TotalLiquidity), "usedLiquidity": dec(st.UsedLiquidity), "reservedLiquidity": big0(),
	})
	for _, d := range st.DailyDonations {
		w.set("DailyDonation", fmt.Sprintf("%s-%d", id, d.Start), graphnode.Entity{"strike": graphnode.String(id),
			"donation": dec(d.Liquidity), "sqrtPriceX96": dec(sqrtAt(d.Tick)), "start": graphnode.Int(d.Start)})
	}
	for _, d := range st.DailyFeeCompounds {
		w.set("DailyFeeCompound", fmt.Sprintf("%s-%d", id, d.Start), graphnode.Entity{"strike": graphnode.String(id),
			"compound": dec(d.Liquidity), "sqrtPriceX96": dec(sqrtAt(d.Tick)), "start": graphnode.Int(d.Start)})
	}
}

// purchase is what the market's sums add up from one LogMintOption.
type purchase struct {
	isCall                     bool
	timestamp                  int64
	size, premium, protocolFee *big.Int
	buyer                      string
	sqrtPriceX96               *big.Int
}

// indexOptions writes each option with its legs and its Purchase. An
// option with an exercise is in state Exercised (the subgraph cannot tell a
// partial exercise from a full one; the chain's liquidity left can).
func (s *Scenario) indexOptions(w *entities) []purchase {
	exercises := map[uint64]int64{}
	for _, e := range s.Exercises {
		exercises[e.TokenID]++
	}
	market := lower(s.Market.Address)
	// A scenario states no price at mint: its prime pool's price stands for it.
	sqrtP := new(big.Int)
	if pool, ok := s.primePool(); ok {
		if p, err := pool.SqrtPriceX96(); err == nil {
			sqrtP = p
		}
	}
	var out []purchase
	for _, o := range s.Options {
		size, err := s.Size(o)
		if err != nil || len(o.Legs) == 0 {
			continue
		}
		fees := o.ProtocolFees
		if fees == "" {
			fees = "0"
		}
		lo, hi := o.Range()
		id := fmt.Sprintf("%s-%d", market, o.TokenID)
		state := "Open"
		if exercises[o.TokenID] > 0 {
			state = "Exercised"
		}
		w.set("Option", id, graphnode.Entity{
			"market": addr(s.Market.Address), "tokenId": graphnode.BigIntOf(int64(o.TokenID)),
			"minter": graphnode.HexBytes(o.MintBuyer()), "owner": addr(o.Owner), "state": graphnode.String(state), "isCall": graphnode.Bool(o.IsCall),
			"tickLower": graphnode.Int(int64(lo)), "tickUpper": graphnode.Int(int64(hi)), "expiry": graphnode.BigIntOf(o.Expiry),
			"premium": dec(o.Premium), "protocolFees": dec(fees), "totalAssetWithdrawn": graphnode.BigInt(size),
			"mintTimestamp": graphnode.BigIntOf(o.MintTimestamp), "mintTxHash": graphnode.Bytes(o.MintTxHash.Bytes()),
			"exerciseCount": graphnode.Int(exercises[o.TokenID]),
		})
		for i, l := range o.Legs {
			strike := Strike{Handler: l.Handler, Pool: l.Pool, Hook: l.Hook, TickLower: l.TickLower, TickUpper: l.TickUpper}
			w.set("OptionLeg", fmt.Sprintf("%s-%d", id, i), graphnode.Entity{"option": graphnode.String(id), "index": graphnode.Int(int64(i)),
				"handler": addr(l.Handler), "strike": graphnode.String(strike.ID()), "pool": addr(l.Pool), "hook": addr(l.Hook),
				"tickLower": graphnode.Int(int64(l.TickLower)), "tickUpper": graphnode.Int(int64(l.TickUpper)), "liquidity": dec(l.Liquidity)})
		}
		tx := strings.ToLower(o.MintTxHash.Hex())
		// The scenarios' buyers call the market themselves: caller is the buyer.
		w.set("Purchase", fmt.Sprintf("%s-%d", tx, purchaseLogIndex), graphnode.Entity{
			"option": graphnode.String(id), "market": addr(s.Market.Address), "buyer": graphnode.HexBytes(o.MintBuyer()), "caller": graphnode.HexBytes(o.MintBuyer()), "isCall": graphnode.Bool(o.IsCall),
			"premium": dec(o.Premium), "protocolFees": dec(fees), "totalAssetWithdrawn": graphnode.BigInt(size), "sqrtPriceX96": graphnode.BigInt(sqrtP),
			// A scenario states no mint block: its head stands for it.
			"blockNumber": graphnode.BigIntOf(int64(s.Block.Number)), "timestamp": graphnode.BigIntOf(o.MintTimestamp), "txHash": graphnode.Bytes(o.MintTxHash.Bytes()),
		})
		premium, _ := new(big.Int).SetString(o.Premium, 10)
		fee, _ := new(big.Int).SetString(fees, 10)
		out = append(out, purchase{isCall: o.IsCall, timestamp: o.MintTimestamp, size: size, premium: premium, protocolFee: fee, buyer: o.MintBuyer(), sqrtPriceX96: sqrtP})
	}
	return out
}

// indexExercises writes each exercise, sent by the option's owner.
func (s *Scenario) indexExercises(w *entities) {
	for _, ex := range s.Exercises {
		o, _ := s.option(ex.TokenID)
		amt, _ := s.exerciseAmounts(ex)
		w.set("Exercise", strings.ToLower(fmt.Sprintf("%s-%d", ex.TxHash.Hex(), ex.LogIndex)), graphnode.Entity{
			"option": graphnode.String(fmt.Sprintf("%s-%d", lower(s.Market.Address), o.TokenID)), "market": addr(s.Market.Address),
			"user": addr(o.Owner), "exerciser": addr(o.Owner), "delegated": graphnode.Bool(false),
			"totalProfit": graphnode.BigInt(amt.profit), "profitToOwner": graphnode.BigInt(amt.profit),
			"totalAssetRelocked": graphnode.BigInt(amt.size), "sqrtPriceX96": graphnode.BigInt(amt.sqrtPriceX96),
			"blockNumber": graphnode.BigIntOf(int64(ex.BlockNumber)), "timestamp": graphnode.BigIntOf(ex.Timestamp), "txHash": graphnode.Bytes(ex.TxHash.Bytes()),
		})
	}
}

// sums are the figures Market and MarketDayData share, and those only
// a day keeps (profits, call figures valued in the put asset, buyers).
type sums struct {
	purchases, exercises                           int64
	callVolume, putVolume, callPremium, putPremium *big.Int
	callFees, putFees                              *big.Int
	callProfit, putProfit                          *big.Int
	callVolumeInPut, callPremiumInPut              *big.Int
	callFeesInPut, putProfitInPut                  *big.Int
	buyers                                         map[string]bool
}

func newSums() *sums {
	z := func() *big.Int { return new(big.Int) }
	return &sums{callVolume: z(), putVolume: z(), callPremium: z(), putPremium: z(), callFees: z(), putFees: z(),
		callProfit: z(), putProfit: z(), callVolumeInPut: z(), callPremiumInPut: z(), callFeesInPut: z(), putProfitInPut: z(), buyers: map[string]bool{}}
}

// add counts a purchase; callIs0 says whether the call asset is the prime
// pool's token0 (how a call amount is valued in the put asset).
func (m *sums) add(p purchase, callIs0 bool) {
	m.purchases++
	m.buyers[p.buyer] = true
	if p.isCall {
		m.callVolume.Add(m.callVolume, p.size)
		m.callPremium.Add(m.callPremium, p.premium)
		m.callFees.Add(m.callFees, p.protocolFee)
		m.callVolumeInPut.Add(m.callVolumeInPut, inPut(p.size, p.sqrtPriceX96, callIs0))
		m.callPremiumInPut.Add(m.callPremiumInPut, inPut(p.premium, p.sqrtPriceX96, callIs0))
		m.callFeesInPut.Add(m.callFeesInPut, inPut(p.protocolFee, p.sqrtPriceX96, callIs0))
		return
	}
	m.putVolume.Add(m.putVolume, p.size)
	m.putPremium.Add(m.putPremium, p.premium)
	m.putFees.Add(m.putFees, p.protocolFee)
}

// inPut values a call-asset amount in the put asset at sqrtP, as the
// mappings do (0 at a zero price).
func inPut(amount, sqrtP *big.Int, callIs0 bool) *big.Int {
	if sqrtP.Sign() == 0 {
		return new(big.Int)
	}
	return clamm.SwapAtPrice(amount, sqrtP, callIs0)
}

func (m *sums) entity() graphnode.Entity {
	return graphnode.Entity{"purchases": graphnode.Int(m.purchases), "exercises": graphnode.Int(m.exercises),
		"callVolume": graphnode.BigInt(m.callVolume), "putVolume": graphnode.BigInt(m.putVolume),
		"callPremium": graphnode.BigInt(m.callPremium), "putPremium": graphnode.BigInt(m.putPremium),
		"callProtocolFees": graphnode.BigInt(m.callFees), "putProtocolFees": graphnode.BigInt(m.putFees)}
}

// dayEntity is a MarketDayData's fields.
func (m *sums) dayEntity() graphnode.Entity {
	e := m.entity()
	e["callProfit"], e["putProfit"] = graphnode.BigInt(m.callProfit), graphnode.BigInt(m.putProfit)
	e["callVolumeInPut"], e["callPremiumInPut"] = graphnode.BigInt(m.callVolumeInPut), graphnode.BigInt(m.callPremiumInPut)
	e["callProtocolFeesInPut"], e["putProfitInPut"] = graphnode.BigInt(m.callFeesInPut), graphnode.BigInt(m.putProfitInPut)
	e["buyers"] = graphnode.Int(int64(len(m.buyers)))
	return e
}

// indexMarket writes the market with its sums, derived from the purchases
// and the exercises the way the mappings add them up, per UTC day and all
// time.
func (s *Scenario) indexMarket(w *entities, purchases []purchase) {
	version := s.Market.Version
	if version == 0 {
		version = 2
	}
	all, days := newSums(), map[int64]*sums{}
	dayOf := func(ts int64) *sums {
		start := ts / 86400 * 86400
		if days[start] == nil {
			days[start] = newSums()
		}
		return days[start]
	}
	callIs0 := false
	if pool, ok := s.primePool(); ok {
		callIs0 = s.Market.CallAsset == pool.Token0
	}
	for _, p := range purchases {
		all.add(p, callIs0)
		dayOf(p.timestamp).add(p, callIs0)
	}
	for _, e := range s.Exercises {
		all.exercises++
		d := dayOf(e.Timestamp)
		d.exercises++
		o, _ := s.option(e.TokenID)
		amt, err := s.exerciseAmounts(e)
		if err != nil {
			continue
		}
		if o.IsCall {
			d.callProfit.Add(d.callProfit, amt.profit)
		} else {
			d.putProfit.Add(d.putProfit, amt.profit)
			d.putProfitInPut.Add(d.putProfitInPut, inPut(amt.profit, amt.sqrtPriceX96, callIs0))
		}
	}
	market := lower(s.Market.Address)
	m := all.entity()
	m["version"], m["primePool"] = graphnode.Int(int64(version)), graphnode.String(lower(s.Market.PrimePool))
	m["callAsset"], m["putAsset"], m["createdAtBlock"] = addr(s.Market.CallAsset), addr(s.Market.PutAsset), big0()
	w.set("Market", market, m)
	for start, d := range days {
		e := d.dayEntity()
		e["market"], e["start"] = graphnode.String(market), graphnode.Int(start)
		w.set("MarketDayData", fmt.Sprintf("%s-%d", market, start), e)
		for b := range d.buyers {
			w.set("MarketDayBuyer", fmt.Sprintf("%s-%d-%s", market, start, b), graphnode.Entity{"market": graphnode.String(market), "start": graphnode.Int(start), "buyer": graphnode.HexBytes(b)})
		}
	}
}
