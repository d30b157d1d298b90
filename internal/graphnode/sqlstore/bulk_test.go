package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"sort"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// bulk writes the synthetic protocol's versions straight into the store's
// tables (its encodings and layout, without mappings or the writer's
// checks), as the store holds them after indexing with the default
// retention: every current version, and the versions closed within the
// last benchKeep blocks. Each table's rows go in by their lower block, as
// the writer writes them.
type bulk struct {
	st       *Store
	tx       *sql.Tx
	stmts    map[string]*sql.Stmt
	rows     int
	versions int
	// live are the long-lived mutable entities (markets, strikes,
	// positions, days), by type and id; closed their versions closed
	// within the retention, by type.
	live   map[string]map[string]*liveVersion
	closed map[string][]liveVersion
	// day is the UTC day being written; buyers the buyers seen in it.
	day    uint64
	buyers map[string]bool
}

type liveVersion struct {
	id           string
	e            graphnode.Entity
	lower, upper uint64
}

func newBulk(st *Store) *bulk {
	return &bulk{st: st, live: map[string]map[string]*liveVersion{}, closed: map[string][]liveVersion{}, buyers: map[string]bool{}}
}

// insert writes one version (upper 0: open).
func (g *bulk) insert(typ, id string, e graphnode.Entity, lower, upper uint64) error {
	if g.tx == nil {
		tx, err := g.st.db.Begin()
		if err != nil {
			return err
		}
		g.tx, g.stmts = tx, map[string]*sql.Stmt{}
	}
	tb := g.st.tables[typ]
	stmt := g.stmts[typ]
	if stmt == nil {
		var err error
		if stmt, err = g.tx.Prepare(tb.insertSQL()); err != nil {
			return err
		}
		g.stmts[typ] = stmt
	}
	args, err := tb.insertArgs(id, lower, upper, e)
	if err != nil {
		return err
	}
	if _, err := stmt.Exec(args...); err != nil {
		return fmt.Errorf("%s[%s]: %w", typ, id, err)
	}
	g.versions++
	if g.rows++; g.rows%100_000 == 0 {
		return g.commit()
	}
	return nil
}

func (g *bulk) commit() error {
	if g.tx == nil {
		return nil
	}
	tx := g.tx
	g.tx = nil
	return tx.Commit()
}

// update writes a long-lived entity's new state at block: its version
// before is closed there (kept if within the retention).
func (g *bulk) update(typ, id string, e graphnode.Entity, block uint64) {
	m := g.live[typ]
	if m == nil {
		m = map[string]*liveVersion{}
		g.live[typ] = m
	}
	if old := m[id]; old != nil {
		if old.lower == block {
			old.e = e
			return
		}
		if block > benchHead-benchKeep {
			g.closed[typ] = append(g.closed[typ], liveVersion{id: id, e: old.e, lower: old.lower, upper: block})
		}
	}
	m[id] = &liveVersion{id: id, e: e, lower: block}
}

// get is a long-lived entity's current state (a copy to change).
func (g *bulk) get(typ, id string) graphnode.Entity {
	out := graphnode.Entity{}
	if v := g.live[typ][id]; v != nil {
		for k, x := range v.e {
			out[k] = x
		}
	}
	return out
}

// flushLive writes the long-lived entities of the types listed (their
// closed versions and current ones), by lower block, and forgets them.
func (g *bulk) flushLive(types ...string) error {
	for _, typ := range types {
		vs := g.closed[typ]
		for _, v := range g.live[typ] {
			vs = append(vs, *v)
		}
		sort.Slice(vs, func(i, j int) bool {
			if vs[i].lower != vs[j].lower {
				return vs[i].lower < vs[j].lower
			}
			return vs[i].id < vs[j].id
		})
		for _, v := range vs {
			if err := g.insert(typ, v.id, v.e, v.lower, v.upper); err != nil {
				return err
			}
		}
		delete(g.live, typ)
		delete(g.closed, typ)
	}
	return nil
}

// Values of the synthetic entities.
func bs(s string) graphnode.Value { return graphnode.HexBytes(s) }
func bi(n int64) graphnode.Value  { return graphnode.BigIntOf(n) }
func bu(n uint64) graphnode.Value { return graphnode.BigInt(new(big.Int).SetUint64(n)) }
func str(s string) graphnode.Value {
	return graphnode.String(s)
}

var sqrtPrice = graphnode.BigIntString("3543191142285914205922034323214")

func txHash(i int) string  { return fmt.Sprintf("0x%064x", uint64(i)*0x9e3779b97f4a7c15) }
func eventID(i int) string { return fmt.Sprintf("%s-%d", txHash(i), i%7) }

// history writes size protocol events ending at the head, then the
// long-lived entities, the head block and the retention's
// mark.
func (g *bulk) history(size int) error {
	first := uint64(benchHead - size*benchStep)
	if err := g.setup(first); err != nil {
		return err
	}
	for i := 0; i < size; i++ {
		if err := g.event(i, first+uint64(i+1)*benchStep); err != nil {
			return err
		}
	}
	if err := g.flushLive("Market", "MarketPool", "Pool", "Strike", "LpPosition", "ExerciseDelegate", "MarketDayData", "DailyDonation"); err != nil {
		return err
	}
	if err := g.commit(); err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := g.st.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('earliest', ?)`, fmt.Sprint(benchHead-benchKeep)); err != nil {
		return err
	}
	head := graphnode.Block{Number: benchHead, Hash: txHash(-1), ParentHash: txHash(-2), Timestamp: benchTime(benchHead)}
	if err := g.st.Advance(ctx, head); err != nil {
		return err
	}
	_, err := g.st.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// The synthetic protocol's actors: user 0 is a twentieth of everything
// (the busiest user, whose pages the benchmark reads); the rest spread
// over benchUsers buyers and 2,000 liquidity providers.
func buyerOf(group int) int {
	if group%20 == 0 {
		return 0
	}
	return 1 + int(uint64(group)*2654435761%uint64(benchUsers-1))
}

func lpOf(group int) int {
	if group%20 == 0 {
		return 0
	}
	return 1 + int(uint64(group)*40503%1999)
}

func marketOf(group int) int { return map[bool]int{true: 1, false: 0}[group%4 == 3] }

func strikeID(market, k int) string { return fmt.Sprintf("0x%062x%02x", k, market) }

func optionID(group, k int) string {
	return fmt.Sprintf("%s-%d", benchMarkets[marketOf(group)], group*4+k)
}

func (g *bulk) setup(first uint64) error {
	for m := range benchMarkets {
		g.update("Market", benchMarkets[m], graphnode.Entity{"id": str(benchMarkets[m]), "version": graphnode.Int(2),
			"primePool": str(benchPools[m]), "callAsset": bs(hexAddr(0xe0, m)), "putAsset": bs(hexAddr(0xe1, m)),
			"createdAtBlock": bu(first), "purchases": graphnode.Int(0), "exercises": graphnode.Int(0),
			"callVolume": bi(0), "putVolume": bi(0), "callPremium": bi(0), "putPremium": bi(0), "callProtocolFees": bi(0), "putProtocolFees": bi(0)}, first)
		g.update("Pool", benchPools[m], graphnode.Entity{"id": str(benchPools[m]), "token0": bs(hexAddr(0xe0, m)), "token1": bs(hexAddr(0xe1, m))}, first)
		mp := benchMarkets[m] + "-" + benchPools[m]
		g.update("MarketPool", mp, graphnode.Entity{"id": str(mp), "market": str(benchMarkets[m]), "pool": str(benchPools[m]),
			"approved": graphnode.Bool(true), "prime": graphnode.Bool(true), "checkedAtBlock": bu(first)}, first)
		for k := 0; k < benchStrikes; k++ {
			tl := int64(-200_250 + 10*k)
			g.update("Strike", strikeID(m, k), graphnode.Entity{"id": str(strikeID(m, k)), "tokenId": bi(int64(k)), "handler": bs(hexAddr(0xd0, 0)),
				"pool": bs(benchPools[m]), "hook": bs(hexAddr(0xd1, 0)), "tickLower": graphnode.Int(tl), "tickUpper": graphnode.Int(tl + 10),
				"totalLiquidity": bi(1_000_000_000), "usedLiquidity": bi(0), "reservedLiquidity": bi(0)}, first)
		}
	}
	for u := 0; u < 2000; u++ {
		id := fmt.Sprintf("%s-%s-%s", benchMarkets[0], hexAddr(0xc0, u), hexAddr(0xc1, u))
		g.update("ExerciseDelegate", id, graphnode.Entity{"id": str(id), "market": bs(benchMarkets[0]), "owner": bs(hexAddr(0xc0, u)),
			"delegate": bs(hexAddr(0xc1, u)), "status": graphnode.Bool(true), "updatedAt": bu(first)}, first)
	}
	return nil
}

// event writes protocol event i at block: in each group of ten, four
// purchases (their options), two exercises (of the first two), two
// deposits, a withdrawal and a settlement (of the third option).
func (g *bulk) event(i int, block uint64) error {
	group, kind := i/10, i%10
	if d := benchTime(block) / 86400; d != g.day {
		g.day, g.buyers = d, map[string]bool{}
	}
	switch {
	case kind < 4:
		return g.purchase(i, group, kind, block)
	case kind < 6:
		return g.exercise(i, group, kind-4, block)
	case kind < 9:
		return g.liquidity(i, group, kind, block)
	}
	return g.settle(i, group, block)
}

// blockOfEvent is where event i of a history starting after first lands.
func (g *bulk) blockOfEvent(block uint64, i, j int) uint64 {
	return block + uint64(j-i)*benchStep
}

func (g *bulk) option(group, k int, block uint64) graphnode.Entity {
	buyer := hexAddr(0xc0, buyerOf(group))
	ts := benchTime(block)
	live := k == 3 && benchTime(benchHead)-ts < 2*86400
	return graphnode.Entity{"id": str(optionID(group, k)), "market": bs(benchMarkets[marketOf(group)]), "tokenId": bi(int64(group*4 + k)),
		"minter": bs(buyer), "owner": bs(buyer), "state": str("Open"), "isCall": graphnode.Bool(k%2 == 0),
		"tickLower": graphnode.Int(-200_250 + int64(10*(group%benchStrikes))), "tickUpper": graphnode.Int(-200_240 + int64(10*(group%benchStrikes))),
		"expiry": bu(ts + 86400), "premium": bi(int64(1_000_000 + group)), "protocolFees": bi(3_000), "totalAssetWithdrawn": bi(2_000_000_000),
		"mintTimestamp": bu(ts), "mintLogOrder": bu(block * 1000), "mintTxHash": bs(txHash(group*10 + k)), "exerciseCount": graphnode.Int(0),
		"hasLiquidity": graphnode.Bool(live)}
}

func (g *bulk) purchase(i, group, k int, block uint64) error {
	m := marketOf(group)
	buyer := hexAddr(0xc0, buyerOf(group))
	o := g.option(group, k, block)
	ts := benchTime(block)
	if err := g.insert("Purchase", eventID(i), graphnode.Entity{"id": str(eventID(i)), "option": str(optionID(group, k)),
		"market": bs(benchMarkets[m]), "buyer": bs(buyer), "caller": bs(buyer), "isCall": o["isCall"], "premium": o["premium"],
		"protocolFees": o["protocolFees"], "totalAssetWithdrawn": o["totalAssetWithdrawn"], "sqrtPriceX96": sqrtPrice,
		"blockNumber": bu(block), "timestamp": bu(ts), "logOrder": bu(block * 1000), "txHash": bs(txHash(i))}, block, 0); err != nil {
		return err
	}
	// the option's first version lasts until its exercise or settlement
	// (events 4, 5 and 9 of the group), kept if that is within retention
	ends := map[int]int{0: 4, 1: 5, 2: 9}
	var upper uint64
	if j, ok := ends[k]; ok {
		upper = g.blockOfEvent(block, i, group*10+j)
	}
	if upper == 0 || upper > benchHead-benchKeep {
		if err := g.insert("Option", optionID(group, k), o, block, upper); err != nil {
			return err
		}
	}
	sk := group % benchStrikes
	leg := optionID(group, k) + "-0"
	left := map[bool]int64{true: 5_000, false: 0}[o["hasLiquidity"].Bool]
	if err := g.insert("OptionLeg", leg, graphnode.Entity{"id": str(leg), "option": str(optionID(group, k)), "index": graphnode.Int(0),
		"handler": bs(hexAddr(0xd0, 0)), "strike": str(strikeID(m, sk)), "pool": bs(benchPools[m]), "hook": bs(hexAddr(0xd1, 0)),
		"tickLower": o["tickLower"], "tickUpper": o["tickUpper"], "liquidity": bi(5_000), "liquidityLeft": bi(left)}, block, 0); err != nil {
		return err
	}
	g.bumpMarket(m, block, "purchases", o["premium"].Big.Int64())
	return g.bumpDay(m, sk, buyer, block, o["premium"].Big.Int64())
}

// bumpMarket and bumpDay update the running sums a purchase or an
// exercise changes: the market's, its day's, the strike's day's.
func (g *bulk) bumpMarket(m int, block uint64, count string, premium int64) {
	e := g.get("Market", benchMarkets[m])
	e[count] = graphnode.Int(e[count].Int + 1)
	e["callPremium"] = bi(e["callPremium"].Big.Int64() + premium)
	g.update("Market", benchMarkets[m], e, block)
}

func (g *bulk) bumpDay(m, sk int, buyer string, block uint64, premium int64) error {
	start := g.day * 86400
	id := fmt.Sprintf("%s-%d", benchMarkets[m], g.day)
	e := g.get("MarketDayData", id)
	if len(e) == 0 {
		e = graphnode.Entity{"id": str(id), "market": str(benchMarkets[m]), "start": graphnode.Int(int64(start)), "purchases": graphnode.Int(0),
			"exercises": graphnode.Int(0), "buyers": graphnode.Int(0)}
		for _, f := range []string{"callVolume", "putVolume", "callPremium", "putPremium", "callProtocolFees", "putProtocolFees", "callProfit",
			"putProfit", "callVolumeInPut", "callPremiumInPut", "callProtocolFeesInPut", "putProfitInPut"} {
			e[f] = bi(0)
		}
	}
	e["purchases"] = graphnode.Int(e["purchases"].Int + 1)
	e["callPremium"] = bi(e["callPremium"].Big.Int64() + premium)
	if bid := id + "-" + buyer; buyer != "" && !g.buyers[bid] {
		g.buyers[bid] = true
		e["buyers"] = graphnode.Int(e["buyers"].Int + 1)
		if err := g.insert("MarketDayBuyer", bid, graphnode.Entity{"id": str(bid), "market": str(benchMarkets[m]),
			"start": graphnode.Int(int64(start)), "buyer": bs(buyer)}, block, 0); err != nil {
			return err
		}
	}
	g.update("MarketDayData", id, e, block)
	did := fmt.Sprintf("%s-%d", strikeID(m, sk), g.day)
	d := g.get("DailyDonation", did)
	if len(d) == 0 {
		d = graphnode.Entity{"id": str(did), "strike": str(strikeID(m, sk)), "donation": bi(0), "sqrtPriceX96": sqrtPrice, "start": graphnode.Int(int64(start))}
	}
	d["donation"] = bi(d["donation"].Big.Int64() + premium/10)
	g.update("DailyDonation", did, d, block)
	return nil
}

// exercise writes the exercise of the group's option k and the option's
// last version.
func (g *bulk) exercise(i, group, k int, block uint64) error {
	m := marketOf(group)
	owner := hexAddr(0xc0, buyerOf(group))
	ts := benchTime(block)
	if err := g.insert("Exercise", eventID(i), graphnode.Entity{"id": str(eventID(i)), "option": str(optionID(group, k)),
		"market": bs(benchMarkets[m]), "user": bs(owner), "exerciser": bs(owner), "delegated": graphnode.Bool(false),
		"totalProfit": bi(int64(2_000 + group%1000)), "profitToOwner": bi(int64(2_000 + group%1000)), "totalAssetRelocked": bi(0),
		"sqrtPriceX96": sqrtPrice, "blockNumber": bu(block), "timestamp": bu(ts), "logOrder": bu(block * 1000), "txHash": bs(txHash(i))}, block, 0); err != nil {
		return err
	}
	o := g.option(group, k, g.blockOfEvent(block, i, group*10+k))
	o["state"], o["exerciseCount"], o["lastExercise"] = str("Exercised"), graphnode.Int(1), str(eventID(i))
	if err := g.insert("Option", optionID(group, k), o, block, 0); err != nil {
		return err
	}
	g.bumpMarket(m, block, "exercises", 0)
	return nil
}

// settle writes the settlement of the group's third option.
func (g *bulk) settle(i, group int, block uint64) error {
	m := marketOf(group)
	owner := hexAddr(0xc0, buyerOf(group))
	ts := benchTime(block)
	if err := g.insert("Settlement", eventID(i), graphnode.Entity{"id": str(eventID(i)), "option": str(optionID(group, 2)),
		"market": bs(benchMarkets[m]), "user": bs(owner), "settler": bs(hexAddr(0xf0, 0)), "sender": bs(hexAddr(0xf0, 0)),
		"settlerProfit": bi(10), "settlerCollateral": bi(20), "settlerPaid": bi(30), "sqrtPriceX96": sqrtPrice,
		"blockNumber": bu(block), "timestamp": bu(ts), "logOrder": bu(block * 1000), "txHash": bs(txHash(i))}, block, 0); err != nil {
		return err
	}
	leg := eventID(i) + "-0"
	if err := g.insert("SettlementLeg", leg, graphnode.Entity{"id": str(leg), "settlement": str(eventID(i)), "index": graphnode.Int(0),
		"leg": str(optionID(group, 2) + "-0"), "liquidity": bi(5_000)}, block, 0); err != nil {
		return err
	}
	o := g.option(group, 2, g.blockOfEvent(block, i, group*10+2))
	o["state"], o["lastSettlement"], o["settledAt"] = str("Settled"), str(eventID(i)), bu(ts)
	return g.insert("Option", optionID(group, 2), o, block, 0)
}

// liquidity writes a deposit (kinds 6 and 7) or a withdrawal (8) of the
// group's liquidity provider in one of its five ranges, and its position.
func (g *bulk) liquidity(i, group, kind int, block uint64) error {
	m, lp := marketOf(group), lpOf(group)
	sk := (lp + (group/20)%5) % benchStrikes
	user := hexAddr(0xc0, lp)
	s := g.get("Strike", strikeID(m, sk))
	ts := benchTime(block)
	e := graphnode.Entity{"id": str(eventID(i)), "user": bs(user), "handler": s["handler"], "tokenId": s["tokenId"],
		"strike": str(strikeID(m, sk)), "pool": s["pool"], "hook": s["hook"], "tickLower": s["tickLower"], "tickUpper": s["tickUpper"],
		"liquidity": bi(1_000_000), "shares": bi(999_000), "sqrtPriceX96": sqrtPrice, "blockNumber": bu(block), "timestamp": bu(ts),
		"logOrder": bu(block * 1000), "txHash": bs(txHash(i))}
	typ := "LpDeposit"
	if kind == 8 {
		typ = "LpWithdrawal"
		e["kind"] = str("Burn")
	} else {
		e["caller"] = bs(user)
	}
	if err := g.insert(typ, eventID(i), e, block, 0); err != nil {
		return err
	}
	pid := strikeID(m, sk) + "-" + user
	p := g.get("LpPosition", pid)
	if len(p) == 0 {
		p = graphnode.Entity{"id": str(pid), "user": bs(user), "handler": s["handler"], "tokenId": s["tokenId"], "strike": str(strikeID(m, sk)),
			"pool": s["pool"], "hook": s["hook"], "tickLower": s["tickLower"], "tickUpper": s["tickUpper"], "shares": bi(0), "principal": bi(0),
			"reservedLiquidity": bi(0), "open": graphnode.Bool(true), "openedAt": bu(block), "openedLogOrder": bu(block * 1000)}
	}
	p["updatedAt"] = bu(block)
	p["open"] = graphnode.Bool(kind != 8 || group%3 != 0)
	p["shares"] = bi(p["shares"].Big.Int64() + 999_000)
	g.update("LpPosition", pid, p, block)
	s["totalLiquidity"] = bi(s["totalLiquidity"].Big.Int64() + 1_000_000)
	g.update("Strike", strikeID(m, sk), s, block)
	return nil
}
