package swappertest

import (
	"encoding/json"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/evmtest/pipeline"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

// setup is a protocol with options bought from one call range and the
// price moved past it, indexed by the subgraph's compiled mappings.
type setup struct {
	p      *pt.Protocol
	ix     *pipeline.Indexer
	r      pt.Range
	tick   int
	buyer  *pt.Account
	trader *pt.Account
	ids    []*big.Int
	legL   []*big.Int // each option's one leg's liquidity
	mc     common.Address
}

// calls buys n one-leg calls from one range 100 ticks above the price and
// moves the price into the money.
func calls(t *testing.T, n int) *setup {
	p := pt.Deploy(t, pt.Config{})
	_, tick := p.Slot0(p.Pool)
	s := &setup{p: p, tick: tick, buyer: p.Users[1], trader: p.Users[2]}
	lo := tick + 100
	s.r = pt.Range{TickLower: lo, TickUpper: lo + 10}
	for i := 0; i < n; i++ {
		_, l, err := p.Deposit(p.Users[0], s.r, e18(1))
		if err != nil {
			t.Fatal(err)
		}
		id, _, err := p.Buy(s.buyer, pt.Option{IsCall: true, TickLower: lo, TickUpper: lo + 10, TTL: 3600, Legs: []pt.Leg{{Range: s.r, Liquidity: l}}})
		if err != nil {
			t.Fatal(err)
		}
		s.ids, s.legL = append(s.ids, id), append(s.legL, l)
	}
	s.intoTheMoney(t)
	s.mc = p.DeployMulticall3()
	s.ix = pipeline.New(t, p)
	return s
}

// intoTheMoney moves the price 600 ticks above the start, past the range.
func (s *setup) intoTheMoney(t *testing.T) {
	t.Helper()
	if _, now := s.p.Slot0(s.p.Pool); now < s.tick+600 {
		if _, err := s.p.SwapToTick(s.trader, s.p.Fee, s.tick+600); err != nil {
			t.Fatal(err)
		}
	}
	if s.ix != nil { // answers are at the index's block
		s.ix.Sync()
	}
}

// serve is the gateway as the command builds it, serving chainID from
// the simulated node and the indexed store, its configuration adjusted.
func (s *setup) serve(t *testing.T, chainID uint64, adjust func(*config.Chain)) http.Handler {
	t.Helper()
	return s.serveApp(t, chainID, adjust).Server
}

// serveApp is serve's gateway as the app that holds it (its service too).
func (s *setup) serveApp(t *testing.T, chainID uint64, adjust func(*config.Chain)) *app.App {
	t.Helper()
	s.ix.Sync()
	sub := httptest.NewServer(s.ix.Serve())
	t.Cleanup(sub.Close)
	node := httptest.NewServer(pipeline.RPCHandler(s.p.Chain.RPC()))
	t.Cleanup(node.Close)
	cfg := config.Default()
	ch := cfg.Chains[chainID]
	ch.SubgraphURL, ch.RPCURL, ch.AutoExerciser, ch.Multicall3 = sub.URL, node.URL, s.p.AutoExercise, s.mc
	adjust(ch)
	a, err := app.New(app.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if a.Modes[chainID] != app.ModeLive {
		t.Fatalf("chain %d served as %q", chainID, a.Modes[chainID])
	}
	return a
}

// prepare asks gw for option id's exercise through swapperId; want is the
// status expected.
func (s *setup) prepare(t *testing.T, gw http.Handler, chainID uint64, id *big.Int, swapperID string, want int) (trade.Prepared, string) {
	t.Helper()
	q := "?chainId=" + big.NewInt(int64(chainID)).String() + "&optionMarket=" + s.p.Market.Hex() + "&optionId=" + id.String() + "&swapperId=" + swapperID + "&slippage=1"
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathExercisePrepare+q, nil))
	if rec.Code != want {
		t.Fatalf("prepare %s via %s: %d %s", id, swapperID, rec.Code, rec.Body)
	}
	var out trade.Prepared
	if want == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
	}
	return out, rec.Body.String()
}

// send has the owner send the prepared transaction as built; it returns
// what the owner received in the profit token (the put asset: calls).
func (s *setup) send(t *testing.T, got trade.Prepared) *big.Int {
	t.Helper()
	before := s.p.Balance(s.p.PutAsset, s.buyer.Addr)
	if _, err := s.p.Chain.SendRaw(s.buyer, common.HexToAddress(got.Tx.To), common.FromHex(got.Tx.Data), "exerciseOption"); err != nil {
		t.Fatal(err)
	}
	return new(big.Int).Sub(s.p.Balance(s.p.PutAsset, s.buyer.Addr), before)
}

// Issue 48's first Done-when: on a second chain whose configuration names
// no swapper (Base: none by default, its quoter registry emptied here
// too), one exercise sent through a SwapRouterSwapper the gateway was
// never told of teaches it that swapper (the subgraph decodes the
// exercise's transaction and asks the contract what it is); the prepare
// of another option then lists it and prepares through it by its address,
// its transaction, sent as built, paying exactly the profit it said. auto
// and direct never choose it (anyone can make a contract learned, and its
// code may pay in simulation what it keeps when sent): on Base, with no
// configured swapper, they are a 400 naming its address.
func TestLearnedSwapperOnAChainWithoutSwappers(t *testing.T) {
	s := calls(t, 2)
	p := s.p
	learned := p.Chain.Deploy(pt.SwapRouterSwap, p.Router)
	const base = 8453
	gw := s.serve(t, base, func(ch *config.Chain) {
		if len(ch.Swappers) != 0 {
			t.Fatalf("Base's defaults name swappers: %v", ch.Swappers)
		}
		ch.Quoters = nil
		// the test pool is Uniswap's (Base's handlers' layouts differ:
		// Aerodrome's slot0 has no feeProtocol)
		ch.PoolDex = map[common.Address]string{p.Pool: "uniswap"}
	})

	// Before any exercise: nothing to route through, a 400 naming why.
	_, body := s.prepare(t, gw, base, s.ids[1], "auto", http.StatusBadRequest)
	if !strings.Contains(body, "none learned") {
		t.Fatalf("prepare before any exercise: %s", body)
	}

	// The holder exercises option 0 through the new swapper, directly.
	if _, err := p.Exercise(s.buyer, s.ids[0], []pt.ExerciseLeg{{Swapper: learned, SwapData: pt.UniV3SwapData(p.Fee, big.NewInt(0)), Liquidity: s.legL[0]}}); err != nil {
		t.Fatal(err)
	}
	s.ix.Sync()
	sw := s.ix.Store.Get("Swapper", strings.ToLower(learned.Hex()))
	if sw == nil || sw["kind"].Str != "swapRouter" || common.BytesToAddress(sw["router"].Bytes) != p.Router {
		t.Fatalf("learned swapper %v, want kind swapRouter, router %s", sw, p.Router)
	}
	if got := sw["swapDataWord"].Big; got == nil || got.Int64() != int64(p.Fee) {
		t.Fatalf("swapDataWord %v, want the fee %d", got, p.Fee)
	}

	s.intoTheMoney(t)
	// Its address chooses it: offered (learned, with its note), and the
	// exercise sent as built pays what the answer said.
	got, _ := s.prepare(t, gw, base, s.ids[1], learned.Hex(), http.StatusOK)
	if got.SwapperID != learned.Hex() || got.Swappers[0] != learned.Hex() {
		t.Fatalf("by address: swapperId %s, swappers %v, want %s", got.SwapperID, got.Swappers, learned.Hex())
	}
	if len(got.SwapperChoices) != 1 || got.SwapperChoices[0].Source != trade.SourceLearned || !got.SwapperChoices[0].Usable || got.SwapperChoices[0].Note == "" {
		t.Fatalf("choices %+v", got.SwapperChoices)
	}
	if got.Legs[0].QuoteSource != "simulation" || got.Legs[0].QuotedOut != nil {
		t.Fatalf("leg quoted %v by %q on a chain without quoters", got.Legs[0].QuotedOut, got.Legs[0].QuoteSource)
	}
	if paid := s.send(t, got); paid.String() != got.Profit || got.Profit == "0" {
		t.Fatalf("sent as built paid %s, the answer said %s", paid, got.Profit)
	}
	// auto and direct choose among configured swappers only (a learned
	// contract's code is not vouched for): Base has none, a 400 naming the
	// learned address a client may choose.
	for _, id := range []string{"auto", "direct"} {
		_, body := s.prepare(t, gw, base, s.ids[1], id, http.StatusBadRequest)
		if !strings.Contains(body, "configured") || !strings.Contains(body, learned.Hex()) {
			t.Fatalf("swapperId %s with only a learned swapper: %s", id, body)
		}
	}

	// Names the gateway does not offer, and a configured id Base lacks.
	for _, id := range []string{"kyberswap", "sushi-api", "kodiak", "uni-v3", "agni"} {
		_, body := s.prepare(t, gw, base, s.ids[1], id, http.StatusBadRequest)
		// the ids Base takes: a learned swapper's address, never auto
		names := strings.Contains(body, "address of a swapper") || strings.Contains(body, learned.Hex())
		if !strings.Contains(body, "swapperId") || !names || strings.Contains(body, "auto") {
			t.Errorf("swapperId %s: %s", id, body)
		}
	}
}

// Issue 48's second Done-when, one row per DEX kind the quoter registry
// lists (subgraph/networks.json gateway.quoters, all of the QuoterV2 ABI:
// one table) and the simulation fallback of a DEX without a quoter: the
// chain's uni-v3 swapper has no quoter of its own, the test handler is
// registered as that DEX's, the registry names the real QuoterV2 on the
// simulated chain for it. The leg is quoted by that quoter (its output
// equal to QuoterV2's own answer for the leg alone) or, without one, not
// quoted; the prepared exercise, sent as built, pays exactly its profit.
func TestQuoteThroughEachDexKind(t *testing.T) {
	var rows []struct {
		dex    string
		quoted bool
	}
	def := config.Default()
	for _, id := range []uint64{42161, 5000, 146, 8453, 81457} {
		for dex, q := range def.Chains[id].Quoters {
			if q.Kind != config.QuoterV2 {
				t.Fatalf("chain %d dex %s: quoter kind %q has no test row", id, dex, q.Kind)
			}
			rows = append(rows, struct {
				dex    string
				quoted bool
			}{dex, true})
		}
	}
	rows = append(rows, struct {
		dex    string
		quoted bool
	}{"aerodrome", false}, struct {
		dex    string
		quoted bool
	}{"thruster", false})
	s := calls(t, len(rows))
	p := s.p
	for i, r := range rows {
		t.Run(r.dex, func(t *testing.T) {
			gw := s.serve(t, 42161, func(ch *config.Chain) {
				ch.Swappers = map[string]*config.Swapper{"uni-v3": {Kind: config.SwapperUniswapV3, Address: p.Swapper}}
				ch.Handlers = map[common.Address]config.Handler{p.Handler: {Name: r.dex, Version: 2, Slot0: "uniswap-v3"}}
				ch.PoolDex = map[common.Address]string{p.Pool: r.dex}
				ch.Quoters = nil
				if r.quoted {
					ch.Quoters = map[string]config.Quoter{r.dex: {Kind: config.QuoterV2, Address: p.Quoter}}
				}
			})
			s.intoTheMoney(t)
			got, _ := s.prepare(t, gw, 42161, s.ids[i], "uni-v3", http.StatusOK)
			leg := got.Legs[0]
			if r.quoted {
				alone, _ := p.Quote(p.CallAsset, s.amountToSwap(t, leg), p.Fee)
				if leg.QuoteSource != "quoterV2 "+p.Quoter.Hex() || leg.QuotedOut == nil || *leg.QuotedOut != alone.String() {
					t.Fatalf("leg quoted %v by %q, QuoterV2 says %s", leg.QuotedOut, leg.QuoteSource, alone)
				}
			} else if leg.QuoteSource != "simulation" || leg.QuotedOut != nil {
				t.Fatalf("leg quoted %v by %q without a quoter", leg.QuotedOut, leg.QuoteSource)
			}
			if paid := s.send(t, got); paid.String() != got.Profit || got.Profit == "0" {
				t.Fatalf("sent as built paid %s, the answer said %s", paid, got.Profit)
			}
		})
	}
}

func (s *setup) amountToSwap(t *testing.T, l trade.PreparedLeg) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(l.AmountToSwap, 10)
	if !ok {
		t.Fatalf("amountToSwap %q", l.AmountToSwap)
	}
	return v
}
