package scenario

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
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
		// The fake node's hash of the same block: both halves of an
		// answer name one block.
		hash := strings.ToLower(chaintest.BlockHash(s.Block.Number, 0).Hex())
		st.SetHead(graphnode.Block{Number: s.Block.Number, Hash: hash, Timestamp: uint64(s.Block.Timestamp)})
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
			"premium": dec(o.Premium), "protocolFees": dec(fees), "totalAssetWithdrawn": graphnode.BigInt(size),
			// A scenario states no mint block: its head stands for it.
			"blockNumber": graphnode.BigIntOf(int64(s.Block.Number)), "timestamp": graphnode.BigIntOf(o.MintTimestamp), "txHash": graphnode.Bytes(o.MintTxHash.Bytes()),
		})
		premium, _ := new(big.Int).SetString(o.Premium, 10)
		fee, _ := new(big.Int).SetString(fees, 10)
		out = append(out, purchase{isCall: o.IsCall, timestamp: o.MintTimestamp, size: size, premium: premium, protocolFee: fee})
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

// sums are the figures Market and MarketDayData share.
type sums struct {
	purchases, exercises                           int64
	callVolume, putVolume, callPremium, putPremium *big.Int
	callFees, putFees                              *big.Int
}

func newSums() *sums {
	return &sums{callVolume: new(big.Int), putVolume: new(big.Int), callPremium: new(big.Int), putPremium: new(big.Int), callFees: new(big.Int), putFees: new(big.Int)}
}

func (m *sums) add(p purchase) {
	m.purchases++
	if p.isCall {
		m.callVolume.Add(m.callVolume, p.size)
		m.callPremium.Add(m.callPremium, p.premium)
		m.callFees.Add(m.callFees, p.protocolFee)
		return
	}
	m.putVolume.Add(m.putVolume, p.size)
	m.putPremium.Add(m.putPremium, p.premium)
	m.putFees.Add(m.putFees, p.protocolFee)
}

func (m *sums) entity() graphnode.Entity {
	return graphnode.Entity{"purchases": graphnode.Int(m.purchases), "exercises": graphnode.Int(m.exercises),
		"callVolume": graphnode.BigInt(m.callVolume), "putVolume": graphnode.BigInt(m.putVolume),
		"callPremium": graphnode.BigInt(m.callPremium), "putPremium": graphnode.BigInt(m.putPremium),
		"callProtocolFees": graphnode.BigInt(m.callFees), "putProtocolFees": graphnode.BigInt(m.putFees)}
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
	for _, p := range purchases {
		all.add(p)
		dayOf(p.timestamp).add(p)
	}
	for _, e := range s.Exercises {
		all.exercises++
		dayOf(e.Timestamp).exercises++
	}
	market := lower(s.Market.Address)
	m := all.entity()
	m["version"], m["primePool"] = graphnode.Int(int64(version)), graphnode.String(lower(s.Market.PrimePool))
	m["callAsset"], m["putAsset"], m["createdAtBlock"] = addr(s.Market.CallAsset), addr(s.Market.PutAsset), big0()
	w.set("Market", market, m)
	for start, d := range days {
		e := d.entity()
		e["market"], e["start"] = graphnode.String(market), graphnode.Int(start)
		w.set("MarketDayData", fmt.Sprintf("%s-%d", market, start), e)
	}
}
