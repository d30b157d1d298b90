package pipeline

import (
	"math/big"
	"sort"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// The leaderboard on the statistics' three days of trades, indexed by the
// subgraph's mappings from the chain's logs: every figure of every trader
// equals what the chain says, decoded here: LogMintOption's amounts of the
// trader's purchases (the buyer is the option's holder when the mint's
// transaction ended), and for realised the profit token's ERC20 Transfers
// to the option's owner in each exercise's transaction; the USD figures
// value each call-asset amount at the pool's price as of its log; the
// order is by USD net, highest first, then address.
func TestPipelineLeaderboard(t *testing.T) {
	p, a, ev, d3 := boardSetup(t)
	for _, w := range [][2]int64{{d3 - 2*86400, d3 + 86400}, {d3 - 2*86400 + 6*3600, d3 + 13*3600}} {
		want := boardFromChain(t, p, ev, w)
		url := gateway.PathLeaderboard + "?chainId=42161&optionMarket=" + p.Market.Hex() + "&from=" + big.NewInt(w[0]).String() + "&to=" + big.NewInt(w[1]).String() + "&first=100&skip=0"
		var got market.Leaderboard
		get(t, a, url, &got)
		if got.Traders != len(want) || len(got.Entries) != len(want) || len(want) < 3 {
			t.Fatalf("window %v: %d traders (%d entries); the chain has %d (want at least 3)", w, got.Traders, len(got.Entries), len(want))
		}
		for i, e := range got.Entries {
			if g, w := boardLine(e), want[i]; g != w {
				t.Errorf("rank %d:\n got %s\nwant %s", i+1, g, w)
			}
		}
	}
}

// boardSetup is the statistics' three days of trades (a protocol fee
// set), indexed, with a gateway over them whose put asset is a USD
// stablecoin; the market's events decoded from the chain; the start of
// the last day.
func boardSetup(t *testing.T) (*pt.Protocol, *app.App, events, int64) {
	p := pt.Deploy(t, pt.Config{})
	ix := New(t, p)
	p.SetProtocolFee(p.Owner.Addr, 125_000)
	multicall := p.DeployMulticall3()
	statsActivity(t, p, func([]pt.Range) {})
	ix.Sync()
	a := statsGateway(t, p, ix, multicall, true)
	return p, a, marketEvents(t, p), int64(p.Chain.Now()) / 86400 * 86400
}

// boardLine is an entry as one comparable line.
func boardLine(e market.LeaderboardEntry) string {
	parts := []string{strings.ToLower(e.Trader), big.NewInt(int64(e.Purchases)).String(), big.NewInt(int64(e.Exercises)).String(),
		"usd", e.USD.Volume, e.USD.Premiums, e.USD.ProtocolFees, e.USD.Realised, e.USD.Net}
	for _, f := range e.Tokens {
		parts = append(parts, strings.ToLower(f.Token.Address), f.Volume, f.Premiums, f.ProtocolFees, f.Realised, f.Net)
	}
	return strings.Join(parts, " ")
}

// boardFromChain is the ranking the chain's events in w say, as lines.
func boardFromChain(t *testing.T, p *pt.Protocol, ev events, w [2]int64) []string {
	t.Helper()
	type flows struct{ volume, premiums, fees, realised *big.Int }
	type trader struct {
		purchases, exercises int
		tokens               map[common.Address]*flows
		usd                  flows // put-asset units, each call amount valued at its event's price
	}
	z := func() *big.Int { return new(big.Int) }
	traders := map[common.Address]*trader{}
	get := func(a common.Address) *trader {
		if traders[a] == nil {
			traders[a] = &trader{tokens: map[common.Address]*flows{}, usd: flows{z(), z(), z(), z()}}
		}
		return traders[a]
	}
	tok := func(tr *trader, a common.Address) *flows {
		if tr.tokens[a] == nil {
			tr.tokens[a] = &flows{z(), z(), z(), z()}
		}
		return tr.tokens[a]
	}
	inPut := func(e chainEvent, amount *big.Int, callAsset bool) *big.Int {
		if callAsset {
			return e.callInPut(amount)
		}
		return amount
	}
	for _, e := range ev {
		if e.time < w[0] || e.time >= w[1] {
			continue
		}
		if e.mint {
			tr := get(e.buyer)
			tr.purchases++
			asset := p.PutAsset
			if e.isCall {
				asset = p.CallAsset
			}
			f := tok(tr, asset)
			f.volume.Add(f.volume, e.volume)
			f.premiums.Add(f.premiums, e.premium)
			f.fees.Add(f.fees, e.fees)
			tr.usd.volume.Add(tr.usd.volume, inPut(e, e.volume, e.isCall))
			tr.usd.premiums.Add(tr.usd.premiums, inPut(e, e.premium, e.isCall))
			tr.usd.fees.Add(tr.usd.fees, inPut(e, e.fees, e.isCall))
			continue
		}
		tr := get(e.owner)
		tr.exercises++
		asset := p.CallAsset
		if e.isCall {
			asset = p.PutAsset
		}
		paid := transfersTo(t, p, e.tx, asset, e.owner)
		f := tok(tr, asset)
		f.realised.Add(f.realised, paid)
		tr.usd.realised.Add(tr.usd.realised, inPut(e, paid, !e.isCall))
	}
	type line struct {
		addr common.Address
		net  *big.Int
		text string
	}
	dec := int(p.PutDecimals)
	var lines []line
	for a, tr := range traders {
		net := new(big.Int).Sub(tr.usd.realised, tr.usd.premiums)
		net.Sub(net, tr.usd.fees)
		parts := []string{strings.ToLower(a.Hex()), big.NewInt(int64(tr.purchases)).String(), big.NewInt(int64(tr.exercises)).String(),
			"usd", usd(tr.usd.volume, dec), usd(tr.usd.premiums, dec), usd(tr.usd.fees, dec), usd(tr.usd.realised, dec), usd(net, dec)}
		var toks []common.Address
		for k := range tr.tokens {
			toks = append(toks, k)
		}
		sort.Slice(toks, func(i, j int) bool { return strings.ToLower(toks[i].Hex()) < strings.ToLower(toks[j].Hex()) })
		for _, k := range toks {
			f := tr.tokens[k]
			n := new(big.Int).Sub(f.realised, f.premiums)
			parts = append(parts, strings.ToLower(k.Hex()), f.volume.String(), f.premiums.String(), f.fees.String(), f.realised.String(), n.Sub(n, f.fees).String())
		}
		lines = append(lines, line{a, net, strings.Join(parts, " ")})
	}
	sort.Slice(lines, func(i, j int) bool {
		if c := lines[i].net.Cmp(lines[j].net); c != 0 {
			return c > 0
		}
		return strings.ToLower(lines[i].addr.Hex()) < strings.ToLower(lines[j].addr.Hex())
	})
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// transfersTo sums the ERC20 Transfers of token to owner in the transaction.
func transfersTo(t *testing.T, p *pt.Protocol, tx common.Hash, token, owner common.Address) *big.Int {
	t.Helper()
	rc, err := p.Chain.Client().TransactionReceipt(t.Context(), tx)
	if err != nil {
		t.Fatal(err)
	}
	topic := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	sum := new(big.Int)
	for _, lg := range rc.Logs {
		if lg.Address == token && len(lg.Topics) == 3 && lg.Topics[0] == topic && common.BytesToAddress(lg.Topics[2].Bytes()) == owner {
			sum.Add(sum, new(big.Int).SetBytes(lg.Data))
		}
	}
	return sum
}
