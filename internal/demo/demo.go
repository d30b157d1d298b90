// Package demo is the gateway's embedded default: recorded upstream answers
// for a few real markets, replayed when a chain has no live upstream
// configured, so `go run ./cmd/clamm-gateway` works on a fresh machine with
// no network and no configuration.
//
// The recordings are generated, never hand-written: Scenarios (in
// testdata/scenarios) state each market's state, and the go:generate program
// (./generate) loads them into the fake upstreams, runs the demo requests
// through the real gateway with recorders in front of the RPC node and the
// 1inch API, and writes recordings/<chainId>/{store.json,quote.json,rpc.json}:
// the subgraph's entity store, which the subgraph's compiled mappings wrote
// for the logs of the scenarios' histories, served by the Graph Node
// emulator (internal/graphnode), and the cassettes a live record mode writes.
// Regenerate with `go generate ./internal/demo`. This package holds only the
// recordings and their replaying transports: the served binary links it, so
// it imports no fake.
package demo

//go:generate go run ./generate

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

//go:embed recordings
var recordings embed.FS

// Placeholder upstream URLs of demo chains; they are never dialled.
func SubgraphURL(chainID uint64) string {
	return fmt.Sprintf("https://demo-subgraph.invalid/%d", chainID)
}

// RPCURL is the placeholder RPC URL of a demo chain.
func RPCURL(chainID uint64) string { return fmt.Sprintf("https://demo-rpc.invalid/%d", chainID) }

// Request is one request the demo answers.
type Request struct {
	Name string // golden file name
	Path string // path and query
	// WantStatus is the expected status; 0 means 200.
	WantStatus int
}

// Status is the status the request answers with.
func (r Request) Status() int {
	if r.WantStatus == 0 {
		return http.StatusOK
	}
	return r.WantStatus
}

// Scenarios are the demo's scenario files, in testdata/scenarios (where
// every scenario lives): what the generator records.
var Scenarios = []string{"arbitrum-weth-usdc.json"}

// Requests are the requests recorded into the demo, in the order generated.
// README examples come from this list. The widest strikes request records
// every strike of the demo market, so the demo's RPC recordings answer
// any reach.
var Requests = []Request{
	{"strikes-weth-usdc-1000", "/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=1000&putsReach=1000", 0},
	{"strikes-weth-usdc-100", "/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=100&putsReach=100", 0},
	{"strikes-weth-usdc-10", "/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=10&putsReach=10", 0},
	{"history-alice-page1", "/clamm/exercise/history?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=5&skip=0", 0},
	{"history-alice-page2", "/clamm/exercise/history?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=5&skip=5", 0},
	{"history-alice-all", "/clamm/exercise/history?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=100&skip=0", 0},
	{"history-bob", "/clamm/exercise/history?chainId=42161&user=0xB0B0000000000000000000000000000000000002&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=100&skip=0", 0},
	{"history-nobody", "/clamm/exercise/history?chainId=42161&user=0x000000000000000000000000000000000000dEaD&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=100&skip=0", 0},
	{"prepare-call-uniswap", "/clamm/exercise/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=110&swapperId=uni-v3&slippage=1", 0},
	{"prepare-call-1inch", "/clamm/exercise/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=110&swapperId=1inch&slippage=1", 0},
	{"prepare-put-uniswap", "/clamm/exercise/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=111&swapperId=uni-v3&slippage=0.5", 0},
	{"prepare-put-1inch", "/clamm/exercise/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=111&swapperId=1inch&slippage=0.5", 0},
	{"prepare-expired", "/clamm/exercise/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=112&swapperId=uni-v3&slippage=1", http.StatusUnprocessableEntity},
	{"readyz", "/readyz", 0},
	{"purchases-alice-all", "/clamm/purchase/history?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=100&skip=0", 0},
	{"purchases-alice-page2", "/clamm/purchase/history?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=5&skip=5", 0},
	{"purchases-bob", "/clamm/purchase/history?chainId=42161&user=0xB0B0000000000000000000000000000000000002&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=100&skip=0", 0},
	{"positions-alice", "/clamm/purchase/positions?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=100&skip=0", 0},
	{"positions-bob", "/clamm/purchase/positions?chainId=42161&user=0xB0B0000000000000000000000000000000000002&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=100&skip=0", 0},
	{"prepare-out-of-the-money", "/clamm/exercise/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=113&swapperId=uni-v3&slippage=1", http.StatusUnprocessableEntity},
	{"markets-arbitrum", "/clamm/option-markets?chainId=42161", 0},
	{"quote-call", "/clamm/purchase/quote?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0x0000000000000000000000000000000000000000&type=call&strike=3004.9080590767317&ttl=86400&amount=1000000000000000000", 0},
	{"quote-put", "/clamm/purchase/quote?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0x0000000000000000000000000000000000000000&type=put&strike=2995.90729282992&ttl=3600&amount=5000000000", 0},
	{"quote-too-much", "/clamm/purchase/quote?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0x0000000000000000000000000000000000000000&type=call&strike=3004.9080590767317&ttl=86400&amount=100000000000000000000", http.StatusUnprocessableEntity},
	{"quote-iv-not-set", "/clamm/purchase/quote?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0x0000000000000000000000000000000000000000&type=call&strike=3004.9080590767317&ttl=7200&amount=1000000000000000000", http.StatusUnprocessableEntity},
	// The purchase and the deposit prepares of a user who holds the tokens
	// they spend (alice), and of one who holds none (bob): the scenario's
	// stated balances (testdata/scenarios, "balances").
	{"purchase-prepare-alice", "/clamm/purchase/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0xA11CE00000000000000000000000000000000001&type=call&strike=3004.9080590767317&ttl=86400&amount=1000000000000000000&slippage=1", 0},
	{"purchase-prepare-bob", "/clamm/purchase/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0xB0B0000000000000000000000000000000000002&type=call&strike=3004.9080590767317&ttl=86400&amount=1000000000000000000&slippage=1", http.StatusUnprocessableEntity},
	// The next page at the first page's block (X-Block-Number): pinned
	// answers, recorded with the block's header.
	{"history-alice-page2-at-block", "/clamm/exercise/history?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=5&skip=5&block=402123456", 0},
	{"strikes-weth-usdc-10-at-block", "/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=10&putsReach=10&block=402123456", 0},
	{"options-chain-weth-usdc", "/clamm/options-chain?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&callsReach=10&putsReach=10&ttls=3600,86400", 0},
	// The liquidity providers carol and dave (internal/testenv/scenario's LPs).
	{"lp-deposits-carol", "/clamm/deposit/history?chainId=42161&user=0xCA20100000000000000000000000000000000003&first=100&skip=0", 0},
	{"lp-withdrawals-carol", "/clamm/withdraw/history?chainId=42161&user=0xCA20100000000000000000000000000000000003&first=100&skip=0", 0},
	{"lp-positions-carol", "/clamm/deposit/positions?chainId=42161&user=0xCA20100000000000000000000000000000000003&first=100&skip=0", 0},
	{"lp-positions-carol-uniswap", "/clamm/deposit/positions?chainId=42161&user=0xCA20100000000000000000000000000000000003&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116&first=5&skip=0", 0},
	{"lp-positions-bob", "/clamm/deposit/positions?chainId=42161&user=0xB0B0000000000000000000000000000000000002&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116&first=100&skip=0", http.StatusNotFound},
	{"stats-weth-usdc", "/clamm/stats?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&from=1763553600&to=1763704800", 0},
	{"stats-weth-usdc-one-day", "/clamm/stats?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&from=1763596800&to=1763683200", 0},
	{"deposit-prepare-alice", "/clamm/deposit/prepare?chainId=42161&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&hook=0x0000000000000000000000000000000000000000&tickLower=-196200&tickUpper=-196180&amount=1000000000000000000&user=0xA11CE00000000000000000000000000000000001", 0},
	{"deposit-prepare-bob", "/clamm/deposit/prepare?chainId=42161&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&hook=0x0000000000000000000000000000000000000000&tickLower=-196200&tickUpper=-196180&amount=1000000000000000000&user=0xB0B0000000000000000000000000000000000002", http.StatusUnprocessableEntity},
	{"withdraw-prepare-alice", "/clamm/withdraw/prepare?chainId=42161&user=0xA11CE00000000000000000000000000000000001&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&hook=0x0000000000000000000000000000000000000000&tickLower=-196200&tickUpper=-196190&shares=max", http.StatusNotFound},
	// carol's range that options hold part of: the burn, then the reservation.
	{"withdraw-prepare-carol", "/clamm/withdraw/prepare?chainId=42161&user=0xCA20100000000000000000000000000000000003&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&hook=0x0000000000000000000000000000000000000000&tickLower=-196150&tickUpper=-196140&shares=max", 0},
	// Expiry: bob opting in to the chain's auto-exerciser, alice opting
	// out, bob disabling his own delegate; the settlements of alice's 115
	// and bob's 116; the options expiring within six hours and a day.
	{"delegate-prepare-bob", "/clamm/exercise/delegate/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0xB0B0000000000000000000000000000000000002&enable=true", 0},
	{"delegate-prepare-alice-off", "/clamm/exercise/delegate/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0xA11CE00000000000000000000000000000000001&enable=false", 0},
	{"delegate-prepare-bob-own", "/clamm/exercise/delegate/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0xB0B0000000000000000000000000000000000002&delegate=0xDE1E6A7E00000000000000000000000000000005&enable=false", 0},
	{"settlements-alice", "/clamm/settlements/history?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&user=0xA11CE00000000000000000000000000000000001&first=100&skip=0", 0},
	{"settlements-bob", "/clamm/settlements/history?chainId=42161&user=0xB0B0000000000000000000000000000000000002&first=100&skip=0", 0},
	{"expiring-six-hours", "/clamm/options/expiring?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&within=21600&first=100&skip=0", 0},
	{"expiring-day", "/clamm/options/expiring?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&within=86400&first=100&skip=0", 0},
	// Market data: the mark price at the head; candles of the prime pool's
	// swaps (the scenario's exercises and settlements swap through it, and
	// the head block moves it to its stated price) by day over the
	// scenario's ten days and by four hours over the statistics window.
	{"stats-chain-arbitrum", "/clamm/stats/chain?chainId=42161&from=1763553600&to=1763704800", 0},
	// The traders' leaderboard over the scenario's ten days: the chain's,
	// the market's second place, and a page the parameters refuse.
	{"leaderboard-arbitrum", "/clamm/stats/leaderboard?chainId=42161&from=1762905600&to=1763740800&first=10&skip=0", 0},
	{"leaderboard-weth-usdc-second", "/clamm/stats/leaderboard?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&from=1762905600&to=1763740800&first=1&skip=1", 0},
	{"leaderboard-bad-first", "/clamm/stats/leaderboard?chainId=42161&from=1762905600&to=1763740800&first=0&skip=0", http.StatusBadRequest},
	{"mark-price-weth-usdc", "/clamm/mark-price?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744", 0},
	{"candles-weth-usdc-1d", "/clamm/candles?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&interval=1d&from=1762905600&to=1763740800", 0},
	{"candles-weth-usdc-4h", "/clamm/candles?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&interval=4h&from=1763553600&to=1763704800", 0},
	{"candles-bad-interval", "/clamm/candles?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&interval=2h&from=1763553600&to=1763704800", http.StatusBadRequest},
}

// OptionIDs are every option the demo market minted (its scenario's
// options), and NeverMinted one id it never minted: the recordings read each
// of them, so the demo answers a prepare of any id (unminted.go).
var (
	OptionIDs   = []int{101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116}
	NeverMinted = 999
)

// Recorded are the paths the generator records: Requests, then the sweep
// over the routes of the endpoint table (Sweep).
func Recorded(routes []Route) ([]string, error) {
	sweep, err := Sweep(routes)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(Requests)+len(sweep))
	for _, r := range Requests {
		paths = append(paths, r.Path)
	}
	return append(paths, sweep...), nil
}

// Chains lists the chain ids that have recordings.
func Chains() []uint64 {
	entries, _ := fs.ReadDir(recordings, "recordings")
	var ids []uint64
	for _, e := range entries {
		if id, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && e.IsDir() {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Replays are a demo chain's replaying transports.
type Replays struct {
	Subgraph http.RoundTripper
	RPC      http.RoundTripper
	Quote    http.RoundTripper // the 1inch API
}

// Transports returns replaying transports for a demo chain's upstreams:
// the subgraph is the Graph Node emulator over the recorded store,
// the RPC node answers call by call from the recorded batches (node.go),
// the 1inch API replays its recorded requests.
func Transports(chainID uint64) (Replays, error) {
	dir := fmt.Sprintf("recordings/%d", chainID)
	sub, err := fs.Sub(recordings, dir)
	if err != nil {
		return Replays{}, err
	}
	var r Replays
	if r.Subgraph, err = subgraphOf(dir, sub); err != nil {
		return Replays{}, fmt.Errorf("%s/%s: %w", dir, StoreFile, err)
	}
	exact, err := replay.HTTPReplayer(sub, "quote.json")
	if err != nil {
		return Replays{}, err
	}
	r.Quote = exact
	if rawQuotes, err := fs.ReadFile(sub, "quote.json"); err == nil { // none: the chain's demo asks no 1inch quote
		if r.Quote, err = newOneInch(rawQuotes, exact); err != nil {
			return Replays{}, fmt.Errorf("%s/quote.json: %w", dir, err)
		}
	}
	n, err := nodeOf(dir, sub)
	if err != nil {
		return Replays{}, fmt.Errorf("%s/rpc.json: %w", dir, err)
	}
	r.RPC = n
	return r, nil
}

// nodes are the RPC nodes of the recordings by chain directory (a
// sync.OnceValues of each): read-only once loaded, so every gateway built
// on the demo shares one rather than indexing the sweep's recordings again.
var nodes sync.Map

// nodeOf is the shared node of a chain's recordings, loaded from sub.
func nodeOf(dir string, sub fs.FS) (*node, error) {
	v, _ := nodes.LoadOrStore(dir, sync.OnceValues(func() (*node, error) {
		raw, err := fs.ReadFile(sub, "rpc.json")
		if err != nil {
			return nil, err
		}
		return newNode(raw)
	}))
	return v.(func() (*node, error))()
}

// StoreFile is a chain's recorded subgraph store.
const StoreFile = "store.json"

// Schema is the query schema the emulator derives from the subgraph's
// schema.graphql, derived once.
var Schema = sync.OnceValues(func() (*graphnode.Schema, error) { return graphnode.ParseSchema(subgraph.Schema) })

// stores are the loaded recorded stores by chain directory: read-only, so
// every gateway built on the demo shares one.
var stores sync.Map

// subgraphOf serves a chain's recorded store with the emulator: any query
// Graph Node would answer, answered as it would.
func subgraphOf(dir string, sub fs.FS) (http.RoundTripper, error) {
	if st, ok := stores.Load(dir); ok {
		return &graphnode.Server{Store: st.(*graphnode.Store)}, nil
	}
	s, err := Schema()
	if err != nil {
		return nil, err
	}
	f, err := sub.Open(StoreFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := graphnode.LoadStore(s, f)
	if err != nil {
		return nil, err
	}
	stores.Store(dir, st)
	return &graphnode.Server{Store: st}, nil
}

// Holds says, in one sentence built from Requests, the sweep and OptionIDs, what the
// demo's recordings are about: the chains, markets and users its requests
// name, and the options its market minted.
// The composition root adds it to NOT_RECORDED, so a client that asked for
// something else learns what it can ask for.
func Holds() string {
	seen := map[string]map[string]bool{"optionMarket": {}, "user": {}, "chainId": {}}
	for _, d := range Dims() {
		if len(d.Names) == 1 && seen[d.Names[0]] != nil {
			for _, v := range d.Values {
				seen[d.Names[0]][v[0]] = true
			}
		}
	}
	for _, r := range Requests {
		u, err := url.Parse(r.Path)
		if err != nil {
			continue
		}
		for name, vals := range u.Query() {
			if seen[name] != nil {
				for _, v := range vals {
					seen[name][v] = true
				}
			}
		}
	}
	list := func(name string) string {
		vals := make([]string, 0, len(seen[name]))
		for v := range seen[name] {
			vals = append(vals, v)
		}
		sort.Slice(vals, func(i, j int) bool {
			if len(vals[i]) != len(vals[j]) {
				return len(vals[i]) < len(vals[j])
			}
			return vals[i] < vals[j]
		})
		return strings.Join(vals, ", ")
	}
	ids := make([]string, len(OptionIDs))
	for i, id := range OptionIDs {
		ids[i] = strconv.Itoa(id)
	}
	return fmt.Sprintf("the demo holds chain %s, option market %s, users %s and options %s", list("chainId"), list("optionMarket"), list("user"), strings.Join(ids, ", "))
}
