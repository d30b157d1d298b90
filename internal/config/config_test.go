package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if ids := c.ChainIDs(); fmt.Sprint(ids) != "[146 5000 8453 42161 81457]" {
		t.Fatalf("chains %v", ids)
	}
	for id, want := range map[uint64]map[string]string{
		146:  {"0x247fcfB55BFC33945A37F289d5Af2a622CBE4500": "equalizer", "0xDDcbD41E80B3BDbe04A79E198022Be7FFa651bff": "sushiswap"},
		8453: {"0x96024E876cA631DaF12cDFe65c04FC5c39B9E35b": "aerodrome", "0xa51175f9076b2535003ac146921485083ab3a63c": "uniswap"},
	} {
		for addr, dex := range want {
			if h := c.Chains[id].HandlerInfo(common.HexToAddress(addr)); h.Name != dex || h.Version != 2 {
				t.Errorf("chain %d handler %s: %+v", id, addr, h)
			}
		}
	}
	arb := c.Chains[42161]
	if arb.Live() {
		t.Fatal("defaults must not be live")
	}
	h := arb.HandlerInfo(common.HexToAddress("0xe11d346757d052214686bCbC860C94363AfB4a9A"))
	if h.Name != "uniswap" || !h.Deprecated {
		t.Fatalf("V1 handler: %+v", h)
	}
	if arb.Swappers["uni-v3"].Address != common.HexToAddress("0x985A3f3D6822F037968d48Aa3F7D7d990D72F333") {
		t.Fatal("uni-v3 swapper")
	}
	if arb.AutoExerciser != common.HexToAddress("0xb223eD797742E096632c39d1b2e0c313750B25FE") || c.Chains[5000].Router != common.HexToAddress("0xb1eF5f36cBa3e741F8264BcfaCeF590686FDfE68") {
		t.Fatalf("periphery: auto-exerciser %s, Mantle router %s", arb.AutoExerciser, c.Chains[5000].Router)
	}
	if u := arb.HandlerInfo(common.HexToAddress("0x1")); u.Name != "unknown" {
		t.Fatalf("unregistered handler: %+v", u)
	}
}

func TestFileMergesAndEnvWins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	file := `{"strikesTTL":"30s","chains":{"42161":{"subgraphUrl":"https://file.example/sg","rpcUrl":"https://file.example/rpc"},"8453":{"name":"base"}}}`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(env(map[string]string{"CLAMM_CONFIG": path, "CLAMM_CHAIN_42161_RPC_URL": "https://env.example/v2/KEY"}))
	if err != nil {
		t.Fatal(err)
	}
	arb := c.Chains[42161]
	if arb.SubgraphURL != "https://file.example/sg" || arb.RPCURL != "https://env.example/v2/KEY" || !arb.Live() {
		t.Fatalf("urls %q %q", arb.SubgraphURL, arb.RPCURL)
	}
	if len(arb.Handlers) != 7 {
		t.Fatalf("file replaced the handler registry instead of merging: %d", len(arb.Handlers))
	}
	if c.StrikesTTL.D().Seconds() != 30 || c.Chains[8453] == nil || c.Chains[8453].ID != 8453 {
		t.Fatal("file values lost")
	}
}

func TestRejectsBadConfig(t *testing.T) {
	t.Parallel()
	if _, err := Load(env(map[string]string{"CLAMM_CHAIN_42161_RPC_URL": "ftp://x"})); err == nil {
		t.Fatal("ftp URL accepted")
	}
	ws := map[string]string{"CLAMM_CHAIN_42161_RPC_URL": "https://rpc.example/KEY", "CLAMM_CHAIN_42161_RPC_WS_URL": "https://rpc.example/KEY"}
	if _, err := Load(env(ws)); err == nil || strings.Contains(err.Error(), "KEY") {
		t.Fatalf("an http URL as the WebSocket RPC URL: %v", err)
	}
	ws["CLAMM_CHAIN_42161_RPC_WS_URL"] = "wss://rpc.example/KEY"
	if c, err := Load(env(ws)); err != nil || c.Chains[42161].RPCWSURL != "wss://rpc.example/KEY" {
		t.Fatalf("a wss URL: %v", err)
	}
	if _, err := Load(env(map[string]string{"CLAMM_STRIKES_TTL": "soon"})); err == nil {
		t.Fatal("bad duration accepted")
	}
}

// The Redis URL comes from the file or, winning, the environment; a URL
// that is not redis:// or rediss:// is refused without echoing its password.
func TestRedisURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	if err := os.WriteFile(path, []byte(`{"redisUrl":"redis://file:6379/0","redisPrefix":"stage:"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(env(map[string]string{"CLAMM_CONFIG": path}))
	if err != nil || c.RedisURL != "redis://file:6379/0" || c.RedisPrefix != "stage:" {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = Load(env(map[string]string{"CLAMM_CONFIG": path, "CLAMM_REDIS_URL": "rediss://:pw@env:6380", "CLAMM_REDIS_TIMEOUT": "40ms"}))
	if err != nil || c.RedisURL != "rediss://:pw@env:6380" || c.RedisTimeout.D() != 40*time.Millisecond {
		t.Fatalf("%q %s %v", c.RedisURL, c.RedisTimeout.D(), err)
	}
	for _, good := range []string{"redis+sentinel://:pw@s1:26379/0?master_name=m&addr=s2:26379", "rediss+cluster://n1:6379?addr=n2:6379"} {
		if _, err := Load(env(map[string]string{"CLAMM_REDIS_URL": good})); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"http://:s3cret@host:6379", "redis://", "s3cret", "redis+mirror://:s3cret@h:1"} {
		_, err := Load(env(map[string]string{"CLAMM_REDIS_URL": bad}))
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Hook rules and the Mantle Butter handler, as the contracts and their
// deploy broadcasts (stryke-xyz/clamm) state them; a label string from an
// older configuration is refused with a message saying what is expected.
func TestHookRulesAndMantleHandlers(t *testing.T) {
	t.Parallel()
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	day := c.Chains[42161].Hooks[common.HexToAddress("0x8c30c7F03421D2C9A0354e93c23014BF6C465a79")]
	week := c.Chains[42161].Hooks[common.HexToAddress("0x0fC0744eACe0aEA3c3CF91FDF5b4A5428533aA3A")]
	mantleDay := c.Chains[5000].Hooks[common.HexToAddress("0xe68Db25857261874359bC5CFB8D04C0C012ac24C")]
	if day.MaxTTL.D() != 24*time.Hour || week.MaxTTL.D() != 7*24*time.Hour || mantleDay.MaxTTL.D() != 24*time.Hour || day.NoWeekends || day.MinIV != 0 {
		t.Fatalf("hooks: %+v %+v %+v", day, week, mantleDay)
	}
	if h := c.Chains[5000].HandlerInfo(common.HexToAddress("0xD648267FC75e144f28436E7b54030C7466031b05")); h.Name != "butter" || h.Deprecated {
		t.Fatalf("butter: %+v", h)
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(`{"chains":{"42161":{"hooks":{"0x0000000000000000000000000000000000000001":"24h"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(env(map[string]string{"CLAMM_CONFIG": path})); err == nil || !strings.Contains(err.Error(), "maxTtl") {
		t.Fatalf("label string: %v", err)
	}
}

// Values the types accept but that would turn a feature off or refuse
// every request are refused at start, naming the variable.
func TestBadValuesAreRefusedNamingTheVariable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, value string }{
		{"CLAMM_RATE_LIMIT", "Inf"},
		{"CLAMM_RATE_LIMIT", "NaN"},
		{"CLAMM_RATE_LIMIT", "-1"},
		{"CLAMM_RATE_LIMIT", "1e300"},
		{"CLAMM_STALE_GRACE", "-5s"},
		{"CLAMM_STRIKES_TTL", "-1s"},
		{"CLAMM_REQUEST_TIMEOUT", "0s"},
		{"CLAMM_UPSTREAM_TIMEOUT", "-1s"},
		{"CLAMM_CACHE_MAX_BYTES", "-1"},
		{"CLAMM_CACHE_MAX_ENTRIES", "0"},
		{"CLAMM_RATE_BURST", "-3"},
		{"CLAMM_MAX_FILLS", "-1"},
		{"CLAMM_REDIS_TIMEOUT", "-1s"},
		{"CLAMM_REDIS_TIMEOUT", "0"},
		{"CLAMM_IMMUTABLES_TTL", "0s"}, // once silently 24 h (the chain reader's own default)
		{"CLAMM_INDEX_HISTORY_BLOCKS", "9999"},
	} {
		_, err := Load(env(map[string]string{c.name: c.value}))
		if err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s=%s: %v", c.name, c.value, err)
		}
	}
	if _, err := Load(env(map[string]string{"CLAMM_RATE_LIMIT": "0", "CLAMM_RATE_BURST": "0", "CLAMM_STALE_GRACE": "0s", "CLAMM_INDEX_HISTORY_BLOCKS": "0"})); err != nil {
		t.Errorf("zeros that mean off: %v", err)
	}
}

// The USD stablecoins: the defaults per chain, a variable replacing them,
// a file's array, and an entry that names no chain refused.
func TestUSDStablecoins(t *testing.T) {
	t.Parallel()
	usdc, weth := common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"), common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1")
	mantleUSDT := common.HexToAddress("0x201EBa5CC46D216Ce6DC03F6a759e8E766e956aE")
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Chains[42161].IsUSDStablecoin(usdc) || c.Chains[42161].IsUSDStablecoin(weth) || !c.Chains[5000].IsUSDStablecoin(mantleUSDT) || c.Chains[5000].IsUSDStablecoin(usdc) {
		t.Fatal("default stablecoins")
	}
	c, err = Load(env(map[string]string{"CLAMM_USD_STABLECOINS": "42161:" + weth.Hex()}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Chains[42161].IsUSDStablecoin(usdc) || !c.Chains[42161].IsUSDStablecoin(weth) {
		t.Fatal("the variable replaces the defaults")
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(`{"usdStablecoins": ["5000:`+usdc.Hex()+`"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(env(map[string]string{"CLAMM_CONFIG": path})); err != nil || !c.Chains[5000].IsUSDStablecoin(usdc) || c.Chains[42161].IsUSDStablecoin(usdc) {
		t.Fatalf("file: %v", err)
	}
	for _, bad := range []string{weth.Hex(), "0:" + weth.Hex(), "42161:0x12", "x:" + weth.Hex()} {
		if _, err := Load(env(map[string]string{"CLAMM_USD_STABLECOINS": bad})); err == nil || !strings.Contains(err.Error(), "CLAMM_USD_STABLECOINS") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// A pool is read by the slot0 layout of the DEX the configuration places
// it in; a pool it does not place, by the layout every handler of the chain
// shares, or by the leading words when they differ.
func TestPoolSlot0FollowsTheHandlersDEX(t *testing.T) {
	t.Parallel()
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	unknown := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	for _, tc := range []struct {
		chain uint64
		pool  string
		want  contracts.Slot0Layout
	}{
		{8453, "0xb2cc224c1c9feE385f8ad6a55b4d94E92359DC59", contracts.Slot0AerodromeCL}, // Aerodrome WETH/USDC CLPool
		{8453, "0xc9034c3E7F58003E6ae0C8438e7c8f4598d5ACAA", contracts.Slot0UniswapV3},   // Uniswap DEGEN/WETH
		{8453, unknown.Hex(), contracts.Slot0Leading},                                    // Base's DEXes differ
		{5000, "0xD08C50F7E69e9aeb2867DefF4A8053d9A855e26A", contracts.Slot0PancakeV3},   // Agni WMNT/USDT
		{5000, "0x0B15691C828fF6D499375e2ca2070B08Dd62369E", contracts.Slot0UniswapV3},   // Butter WMNT/USDT
		{146, unknown.Hex(), contracts.Slot0UniswapV3},                                   // Equalizer and Sushi agree
		{81457, unknown.Hex(), contracts.Slot0UniswapV3},                                 // Thruster alone
		{42161, "0xd9e2a1a61B6E61b275cEc326465d417e52C1b95c", contracts.Slot0PancakeV3},  // Pancake WETH/USDC
	} {
		if got := c.Chains[tc.chain].PoolSlot0(common.HexToAddress(tc.pool)); got != tc.want {
			t.Errorf("chain %d pool %s: %q, want %q", tc.chain, tc.pool, got, tc.want)
		}
	}
	env := &Chain{ID: 7} // a chain from the environment alone: no handlers
	if got := env.PoolSlot0(unknown); got != contracts.Slot0Leading {
		t.Errorf("no handlers: %q", got)
	}
	// a handler added without a layout takes its DEX's; one of a DEX
	// without a layout leaves the chain's pools to the leading words
	sonic := c.Chains[146]
	sonic.Handlers[common.HexToAddress("0x01")] = Handler{Name: "equalizer"}
	if got := sonic.PoolSlot0(unknown); got != contracts.Slot0UniswapV3 || sonic.validateSlot0() != nil {
		t.Errorf("a handler of a known DEX without slot0: %q", got)
	}
	sonic.Handlers[common.HexToAddress("0x02")] = Handler{Name: "swapx"}
	if got := sonic.PoolSlot0(unknown); got != contracts.Slot0Leading {
		t.Errorf("a handler of a DEX without a layout: %q", got)
	}
}

// A handler's slot0 must be a known layout, handlers of one DEX must
// agree, and poolDex must name a DEX with a layout: each is refused at start.
func TestRejectsBadSlot0Config(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, file := range map[string]string{
		"unknown layout": `{"chains":{"8453":{"handlers":{"0x0000000000000000000000000000000000000001":{"name":"algebra","slot0":"globalState"}}}}}`,
		"dex disagrees":  `{"chains":{"8453":{"handlers":{"0x0000000000000000000000000000000000000001":{"name":"aerodrome","slot0":"uniswap-v3"}}}}}`,
		"pool of no dex": `{"chains":{"146":{"poolDex":{"0x0000000000000000000000000000000000000002":"kodiak"}}}}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(env(map[string]string{"CLAMM_CONFIG": path})); err == nil || !strings.Contains(err.Error(), "slot0") && !strings.Contains(err.Error(), "poolDex") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A chain list or a queries directory the gateway cannot use stops the
// start naming its variable: CLAMM_CHAINS=abc and a CLAMM_QUERIES_DIR
// that does not exist (or is a file) started silently, serving no chain
// of the list and the built-in documents.
func TestChainsAndQueriesDirAreChecked(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "strikes.graphql")
	if err := os.WriteFile(file, []byte("query Strikes { x }"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, value string }{
		{"CLAMM_CHAINS", "abc"},
		{"CLAMM_CHAINS", "42161,x8453"},
		{"CLAMM_CHAINS", "0"},
		{"CLAMM_CHAINS", "-1"},
		{"CLAMM_QUERIES_DIR", filepath.Join(t.TempDir(), "missing")},
		{"CLAMM_QUERIES_DIR", file},
	} {
		if _, err := Load(env(map[string]string{c.name: c.value})); err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s=%s: %v, want an error naming %s", c.name, c.value, err, c.name)
		}
	}
	c, err := Load(env(map[string]string{"CLAMM_CHAINS": " 8453, ,", "CLAMM_QUERIES_DIR": t.TempDir()}))
	if err != nil || c.Chains[8453] == nil {
		t.Errorf("a chain list with spaces and empty entries, an empty queries directory: %v", err)
	}
}

// An RPC URL alone, or with the subgraph URL `embedded`, has the gateway
// index the chain; `embedded` without an RPC URL and index sources that
// do not parse stop the start naming the chain.
func TestIndexedChains(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"CLAMM_CHAIN_42161_RPC_URL": "https://rpc.example/v2/KEY",
		"CLAMM_CHAIN_5000_RPC_URL": "https://rpc.example/mantle", "CLAMM_CHAIN_5000_SUBGRAPH_URL": "embedded",
		"CLAMM_CHAINS": "31337", "CLAMM_CHAIN_31337_RPC_URL": "http://127.0.0.1:8545",
		"CLAMM_CHAIN_31337_INDEX_SOURCES": "PositionManager:0x5FbDB2315678afecb367f032d93F642f64180aa3@0"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{42161, 5000, 31337} {
		if ch := c.Chains[id]; !ch.Indexed() || ch.Live() {
			t.Errorf("chain %d: indexed %v, live %v", id, ch.Indexed(), ch.Live())
		}
	}
	src, err := c.Chains[31337].Sources()
	if err != nil || len(src) != 1 || src[0].Name != "PositionManager" || src[0].Start != 0 ||
		src[0].Address != common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3") {
		t.Errorf("sources %+v %v", src, err)
	}
	for vars, want := range map[string]map[string]string{
		"CLAMM_CHAIN_5000_RPC_URL": {"CLAMM_CHAIN_5000_SUBGRAPH_URL": "embedded"},
		"CLAMM_CHAIN_42161_INDEX_SOURCES (chains.42161.indexSources): index source \"PositionManager@0x1:5\" is not <data source": {
			"CLAMM_CHAIN_42161_RPC_URL": "https://x.example", "CLAMM_CHAIN_42161_INDEX_SOURCES": "PositionManager@0x1:5"},
		// S13: the same address twice, the later start winning, left blocks unindexed
		"CLAMM_CHAIN_42161_INDEX_SOURCES (chains.42161.indexSources): 0x00000000000000000000000000000000000a0001 is given twice": {
			"CLAMM_CHAIN_42161_RPC_URL":       "https://x.example",
			"CLAMM_CHAIN_42161_INDEX_SOURCES": "HandlerV2:0x00000000000000000000000000000000000a0001@100,HandlerV2:0x00000000000000000000000000000000000A0001@200"},
		// S13: a 1 ns poll asked a synced chain's node thousands of times a second
		"CLAMM_INDEX_POLL (indexPoll): 1ns is below the least, 100ms": {"CLAMM_INDEX_POLL": "1ns"},
	} {
		if _, err := Load(env(want)); err == nil || !strings.Contains(err.Error(), vars) {
			t.Errorf("%v: %v, want it to name %s", want, err, vars)
		}
	}
}

// The defaults carry the registry's superseded markets (Arbitrum's 2024
// V2 markets and Sonic's 0xaFd9, each to the market the frontend lists
// for its pair), and a file that names a market its own successor, or a
// successor superseded in turn, stops the start: a ticker would name no
// market.
func TestSupersededMarkets(t *testing.T) {
	t.Parallel()
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for id, pairs := range map[uint64]map[string]string{
		42161: {
			"0x501B03BdB431154b8Df17BF1c00756E3a8F21744": "0xcd697b919aa000378fe429b47eb0ff0d17d3d435",
			"0x550e7E236912DaA302F7d5D0d6e5D7b6EF191f04": "0x502751c59feb16959526f1f8aa767d84b028bfbd",
			"0x4eed3A2b797Bf5630517EcCe2e31C1438A76bb92": "0x20b2431557bb90954744a6d404f45ad1ad8719f4",
			"0xE9e1310d3E6401DFa1f5A3544CC6B0fced68c189": "0xa23233775ed58669cb0c2c7a6fa0380b6ccc1094",
		},
		146: {"0xaFd9352aF9A75E52Ba2889ba9Fa3b2a960ABef61": "0x342e4068bA07bbCcBDDE503b2451FAa3D3C0278B"},
	} {
		ch := c.Chains[id]
		if len(ch.SupersededMarkets) != len(pairs) {
			t.Errorf("chain %d: %d superseded markets, want %d", id, len(ch.SupersededMarkets), len(pairs))
		}
		for old, next := range pairs {
			if got, ok := ch.SupersededBy(common.HexToAddress(old)); !ok || got != common.HexToAddress(next) {
				t.Errorf("chain %d %s superseded by %s %v, want %s", id, old, got.Hex(), ok, next)
			}
		}
	}
	if _, ok := c.Chains[42161].SupersededBy(common.HexToAddress("0xcd697b919aa000378fe429b47eb0ff0d17d3d435")); ok {
		t.Error("the live WETH/USDC market is superseded")
	}
	dir := t.TempDir()
	for name, file := range map[string]string{
		"itself": `{"chains":{"146":{"supersededMarkets":{"0x0000000000000000000000000000000000000001":"0x0000000000000000000000000000000000000001"}}}}`,
		"a chain": `{"chains":{"146":{"supersededMarkets":{"0x0000000000000000000000000000000000000001":"0x0000000000000000000000000000000000000002",` +
			`"0x0000000000000000000000000000000000000002":"0x0000000000000000000000000000000000000003"}}}}`,
		"none": `{"chains":{"146":{"supersededMarkets":{"0x0000000000000000000000000000000000000001":"0x0000000000000000000000000000000000000000"}}}}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(env(map[string]string{"CLAMM_CONFIG": path})); err == nil || !strings.Contains(err.Error(), "supersededMarkets") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
