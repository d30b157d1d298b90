package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

func addr(i int) graphnode.Value {
	b := make([]byte, 20)
	b[0], b[19] = 0xab, byte(i)
	return graphnode.Bytes(b)
}

func bigv(s string) graphnode.Value { return graphnode.BigIntString(s) }

// optionHistory is blocks 1 to 30 of options, their legs, exercises and
// purchases, written and rewritten with ties, nulls, negative and huge
// BigInts, removals and references, deterministically.
func optionHistory() map[uint64][]op {
	r := rand.New(rand.NewSource(45))
	h := map[uint64][]op{}
	states := []string{"Open", "Exercised", "Settled"}
	bigs := []string{"0", "1", "-1", "-300", "255", "256", "65536", "1000000000000000000000", "-1000000000000000000000",
		new(big.Int).Lsh(big.NewInt(1), 200).String()}
	for n := uint64(1); n <= 30; n++ {
		for k := 0; k < 3; k++ {
			i := r.Intn(14)
			id := fmt.Sprintf("o%d", i)
			e := graphnode.Entity{
				"id": graphnode.String(id), "market": addr(i % 2), "tokenId": graphnode.BigIntOf(int64(i)),
				"minter": addr(3), "owner": addr(4 + r.Intn(3)), "state": graphnode.String(states[r.Intn(3)]),
				"isCall": graphnode.Bool(r.Intn(2) == 0), "tickLower": graphnode.Int(int64(r.Intn(5) - 2)),
				"tickUpper": graphnode.Int(10), "expiry": bigv(bigs[r.Intn(len(bigs))]), "premium": bigv(bigs[r.Intn(len(bigs))]),
				"protocolFees": graphnode.BigIntOf(1), "totalAssetWithdrawn": graphnode.BigIntOf(2),
				"mintTimestamp": graphnode.BigIntOf(int64(1000 + n)), "mintLogOrder": graphnode.BigIntOf(int64(n*10) + int64(k)),
				"mintTxHash": graphnode.Bytes([]byte{byte(n), 0xab, byte(k)}), "exerciseCount": graphnode.Int(int64(r.Intn(3))),
				"hasLiquidity": graphnode.Bool(r.Intn(3) > 0),
			}
			if r.Intn(2) == 0 {
				e["splitTimestamp"] = graphnode.BigIntOf(int64(r.Intn(3)))
			}
			if n > 3 && r.Intn(2) == 0 {
				e["lastExercise"] = graphnode.String(fmt.Sprintf("x%d-%d", n-1, r.Intn(2)))
			}
			h[n] = append(h[n], op{"Option", id, e})
			leg := fmt.Sprintf("%s-%d", id, r.Intn(3))
			h[n] = append(h[n], op{"OptionLeg", leg, graphnode.Entity{
				"id": graphnode.String(leg), "option": graphnode.String(id), "index": graphnode.Int(int64(r.Intn(3))),
				"handler": addr(7), "pool": addr(8 + r.Intn(2)), "hook": addr(9), "tickLower": graphnode.Int(1), "tickUpper": graphnode.Int(2),
				"liquidity": graphnode.BigIntOf(5), "liquidityLeft": graphnode.BigIntOf(int64(r.Intn(3))),
			}})
			if k < 2 {
				x := fmt.Sprintf("x%d-%d", n, k)
				ex := graphnode.Entity{
					"id": graphnode.String(x), "option": graphnode.String(id), "market": addr(i % 2), "user": addr(4 + r.Intn(3)),
					"exerciser": addr(5), "delegated": graphnode.Bool(r.Intn(2) == 0), "totalProfit": bigv(bigs[r.Intn(len(bigs))]),
					"totalAssetRelocked": graphnode.BigIntOf(0), "sqrtPriceX96": graphnode.BigIntOf(7),
					"blockNumber": graphnode.BigIntOf(int64(n)), "timestamp": graphnode.BigIntOf(int64(1000 + n/3)),
					"logOrder": graphnode.BigIntOf(int64(n*10) + int64(k)), "txHash": graphnode.Bytes([]byte{byte(n), byte(k)}),
				}
				if r.Intn(3) > 0 {
					ex["profitToOwner"] = bigv(bigs[r.Intn(len(bigs))])
				}
				h[n] = append(h[n], op{"Exercise", x, ex})
			}
		}
		if n%7 == 0 {
			h[n] = append(h[n], op{typ: "Option", id: fmt.Sprintf("o%d", r.Intn(14))})
		}
	}
	return h
}

// selectQueries exercise what the store pushes into SQL (equality, _in,
// _not_in, ranges over negative and huge BigInts, Bytes, enums, booleans,
// id_gt, or/and, nested and derived filters, orders with ties and nulls
// both ways, first and skip, derived fields) and what it leaves to the
// executor (substring tests, a child's field as the order).
var selectQueries = []string{
	`{ options(first: 1000) { id } }`,
	`{ options(first: 1000, orderDirection: desc) { id } }`,
	`{ options(where: {market: "0xab00000000000000000000000000000000000000"}, orderBy: tickLower) { id tickLower } }`,
	`{ options(orderBy: tickLower, orderDirection: desc) { id tickLower } }`,
	`{ options(where: {owner_in: ["0xAB00000000000000000000000000000000000004", "0xab00000000000000000000000000000000000006"], state_not: Settled}, orderBy: expiry, orderDirection: desc, first: 3, skip: 2) { id owner expiry state } }`,
	`{ options(where: {expiry_gte: "-300", expiry_lt: "1000000000000000000000"}, orderBy: expiry) { id expiry } }`,
	`{ options(where: {premium_gt: "-1"}, orderBy: premium, orderDirection: desc) { id premium } }`,
	`{ options(where: {id_gt: "o3"}, orderBy: id, first: 4) { id } }`,
	`{ options(where: {hasLiquidity: true, isCall: false}) { id } }`,
	`{ options(where: {lastExercise_: {delegated: true}}) { id lastExercise { id delegated } } }`,
	`{ exercises(first: 1000, where: {option_: {state: Settled}}) { id option { id state } } }`,
	`{ options { id legs(orderBy: index, orderDirection: desc, first: 2) { id index } exercises(first: 3) { id } } }`,
	`{ options(where: {legs_: {liquidityLeft_gt: "0", pool: "0xab00000000000000000000000000000000000009"}}) { id } }`,
	`{ exercises(first: 1000, orderBy: profitToOwner) { id profitToOwner } }`,
	`{ exercises(first: 1000, orderBy: profitToOwner, orderDirection: desc) { id profitToOwner } }`,
	`{ options(where: {_change_block: {number_gte: 20}}) { id } }`,
	`{ options(where: {or: [{tickLower_lt: 0}, {owner: "0xab00000000000000000000000000000000000005"}]}) { id } }`,
	`{ options(where: {and: [{tickLower_gte: 0}, {or: [{isCall: true}, {exerciseCount: 2}]}]}) { id } }`,
	`{ options(where: {mintTxHash_contains: "0xab", market: "0xab00000000000000000000000000000000000001"}, first: 2, skip: 1) { id } }`,
	`{ options(orderBy: lastExercise__timestamp, first: 5) { id } }`,
	`{ options(where: {owner_in: []}) { id } a: options(where: {owner_not_in: []}) { id } b: options(where: {tickLower_not_in: [0, 1]}) { id } c: options(where: {splitTimestamp_not_in: ["1"]}) { id } }`,
	`{ options(where: {splitTimestamp: null}) { id } a: options(where: {splitTimestamp_not: null}, orderBy: splitTimestamp, orderDirection: desc) { id splitTimestamp } }`,
	`{ option(id: "o3") { id lastExercise { id } legs { id } } }`,
	`{ exercises(where: {market_in: ["0xab00000000000000000000000000000000000000"], timestamp_gte: "1003", timestamp_lt: "1008"}, orderBy: id) { id timestamp } }`,
	`{ exercises(where: {user: "0xAB00000000000000000000000000000000000005", market: "0xab00000000000000000000000000000000000001"}, orderBy: logOrder, orderDirection: desc, first: 3) { id logOrder } }`,
	`{ options(first: 0) { id } a: options(skip: 100) { id } b: options(first: 2, skip: 3, orderBy: state) { id state } }`,
	`{ optionLegs(first: 1000, orderBy: option, orderDirection: desc) { id option { id } } }`,
	`{ options(where: {legs_: {index: 2}, tickLower_in: [-2, 2]}, orderBy: mintLogOrder, orderDirection: desc) { id } }`,
	// a level of references and derived fields read at once (prefetch)
	`{ exercises(first: 1000) { id option { id state purchase { id } lastExercise { id option { id } } legs(where: {index_gt: 0}, skip: 1, first: 2, orderBy: index) { id } } } }`,
	`{ optionLegs(first: 1000, where: {index_in: [1, 2]}) { id option { id exercises(first: 2, orderBy: timestamp, orderDirection: desc) { id timestamp option { id } } } } }`,
	`{ options(first: 1000) { id purchase { id option { id } } exercises(where: {option_: {state: Settled}}) { id } legs(orderBy: liquidityLeft) { id liquidityLeft } } }`,
	`{ options(first: 1000) { id legs(where: {pool_contains: "ab"}, first: 1) { id } exercises(orderBy: option__state) { id } } }`,
}

// The store answers every filter, order and page it pushes into SQL (and
// every one it leaves to the executor) as the emulator's in-memory store
// does, at the head and at earlier blocks.
func TestSelectAnswersAsMemory(t *testing.T) {
	disk := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	mem := graphnode.NewStore(schema(t))
	write(t, disk, mem, optionHistory(), 1, 30, "a")
	for _, block := range []string{"", "block: {number: 9}", "block: {number: 22}"} {
		for i, q := range selectQueries {
			if block != "" {
				q = pinned(q, block)
			}
			d, m := answer(t, disk, q), answer(t, mem, q)
			if d != m {
				t.Errorf("query %d %s:\n disk   %s\n memory %s", i, block, d, m)
			}
			if len(m) < 40 && i != 25 {
				t.Logf("query %d %s answers little: %s", i, block, m)
			}
		}
	}
}

// pinned adds block to every root collection field of q.
func pinned(q, block string) string {
	out := []byte{}
	depth := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		out = append(out, c)
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		case '(':
			if depth == 1 {
				out = append(out, []byte(block+", ")...)
			}
		}
	}
	return string(out)
}

func answer(t *testing.T, q graphnode.Querier, query string) string {
	t.Helper()
	b, err := json.Marshal(q.QueryContext(context.Background(), graphnode.Request{Query: query}))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A query whose context has ended reads nothing more: it fails with the
// context's error, never a partial answer.
func TestCancelledQueryStopsReading(t *testing.T) {
	disk := openStore(t, filepath.Join(t.TempDir(), "s.sqlite"), "b")
	write(t, disk, graphnode.NewStore(schema(t)), optionHistory(), 1, 30, "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := disk.QueryContext(ctx, graphnode.Request{Query: `{ options { id legs { id } } }`})
	if r.Data != nil || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, context.Canceled.Error()) {
		t.Errorf("a cancelled query answered %+v", r)
	}
	if r := disk.QueryContext(context.Background(), graphnode.Request{Query: `{ options { id } }`}); len(r.Errors) > 0 {
		t.Errorf("the next query: %+v", r.Errors)
	}
}
