// Package config holds the gateway's settings: per chain the upstream URLs,
// the handler registry, hooks and swappers; globally the listen address,
// timeouts and cache bounds. Each global setting is one row of the settings
// table (settings.go: variable, file key, default, parser, check, doc), from
// which loading, validation and the table in docs/configuration.md come.
// The chains of Arbitrum (42161), Mantle (5000), Sonic (146), Base (8453)
// and Blast (81457) are embedded (defaults.json, written by
// subgraph/manifest.mjs from the deployments registry
// subgraph/networks.json; never edited by hand); a JSON file (CLAMM_CONFIG) is merged over the defaults
// field by field, and environment variables override both. URLs may carry API keys, so they
// are only ever printed through package secret.
package config

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
)

//go:embed defaults.json
var defaultsJSON []byte

// Config is the whole configuration. Each field but Chains is one row of
// the settings table (settings.go), which gives its variable, file key,
// default and check.
type Config struct {
	Listen            string
	UpstreamTimeout   Duration
	RequestTimeout    Duration
	StrikesTTL        Duration
	HistoryTTL        Duration
	PrepareTTL        Duration
	ImmutablesTTL     Duration
	CacheMaxEntries   int
	CacheMaxBytes     int64
	StaleGrace        Duration
	RateLimit         float64
	RateBurst         int
	TrustForwardedFor bool
	MaxFills          int
	CORSOrigins       []string
	MaxLagBlocks      uint64
	// RedisURL, if set, names the Redis replicas share as a second cache
	// tier (redis:// or rediss://; may hold a password, printed only
	// through Redact); RedisPrefix namespaces its keys; RedisTimeout
	// bounds each Redis command.
	RedisURL     string
	RedisPrefix  string
	RedisTimeout Duration
	// LogLevel is the least level logged (and access-logged).
	LogLevel slog.Level
	// PprofListen, if set, is where net/http/pprof listens.
	PprofListen string
	// QueriesDir, if set, holds .graphql documents replacing the embedded.
	QueriesDir string
	// Demo serves the embedded recordings on chains without upstreams.
	Demo bool
	// USDStablecoins are the tokens valued at one US dollar, as
	// "<chainId>:<address>" entries; each chain's are linked into it
	// (Chain.IsUSDStablecoin) by Default and Validate.
	USDStablecoins []string
	// IndexDir holds the embedded indexer's stores, one file per chain it
	// indexes; IndexRange is its first eth_getLogs range and
	// IndexMaxRange the widest it grows to; IndexBatch the most calls of
	// one JSON-RPC batch request; IndexPoll how often it asks the node's
	// head once indexed up to it; IndexHistoryBlocks how many blocks
	// below the head its stores keep the state of (0: all);
	// IndexMaxQueries the most queries its query API answers at once.
	IndexDir           string
	IndexRange         uint64
	IndexMaxRange      uint64
	IndexBatch         int
	IndexPoll          Duration
	IndexHistoryBlocks uint64
	IndexMaxQueries    int
	// OrdersPath is the embedded (SQLite) store of the signed-order book,
	// used unless OrdersDatabaseURL names a PostgreSQL database that
	// several replicas share; OrdersPerMaker bounds the orders one maker
	// keeps open on a chain.
	OrdersPath        string
	OrdersDatabaseURL string
	OrdersPerMaker    int
	// Streams serves streams of the reads; HeadPoll is how often a Graph
	// Node chain's head is polled for them; StreamsPerClient and
	// StreamsMax bound the streams followed at once; StreamHeartbeat is
	// the longest silence of a stream.
	Streams          bool
	HeadPoll         Duration
	StreamsPerClient int
	StreamsMax       int
	StreamHeartbeat  Duration

	Chains map[uint64]*Chain
}

// Chain is one network's upstreams and protocol registry.
type Chain struct {
	ID          uint64 `json:"-"`
	Name        string `json:"name"`
	SubgraphURL string `json:"subgraphUrl"`
	RPCURL      string `json:"rpcUrl"`
	// RPCWSURL, if set, is the node's WebSocket RPC URL (ws:// or
	// wss://): with streams on, a Graph Node chain's head feed asks
	// `_meta` at each of its newHeads instead of waiting for its poll.
	RPCWSURL string `json:"rpcWsUrl,omitempty"`
	// Mode, if set, states how the chain is served (ModeDemo,
	// ModeGraphNode, ModeIndexed) rather than leaving it to what is set:
	// ServeMode then refuses the chain unless every setting of that mode is.
	Mode       string                       `json:"mode,omitempty"`
	Multicall3 common.Address               `json:"multicall3"`
	Handlers   map[common.Address]Handler   `json:"handlers"`
	Hooks      map[common.Address]HookRules `json:"hooks"`
	Swappers   map[string]*Swapper          `json:"swappers"`
	// Quoters is the chain's registry of DEX quote contracts, by DEX label
	// (a handler's name): each uniswap-v3 swapper, configured or learned,
	// quotes a leg through the quoter of the leg's DEX (else its own
	// Swapper.Quoter); a DEX without one is quoted by simulating the
	// exercise itself. Defaults from subgraph/networks.json, where each
	// address names its public source.
	Quoters     map[string]Quoter                   `json:"quoters,omitempty"`
	MarketPools map[common.Address][]common.Address `json:"marketPools,omitempty"`
	// PoolDex names the DEX of known pools (a handler's dex name), whose
	// handlers' slot0 layout reads them (PoolSlot0).
	PoolDex map[common.Address]string `json:"poolDex,omitempty"`
	// SupersededMarkets maps a market the protocol replaced to the market
	// that replaced it (same pair; the deployments registry's
	// `supersededBy`, with its evidence): the hosted routes mark it
	// deprecated and resolve its ticker to the successor while that is
	// listed; it is still served by address like any market.
	SupersededMarkets map[common.Address]common.Address `json:"supersededMarkets,omitempty"`
	// IndexSources, if set, replace the data sources the embedded indexer
	// takes from the deployments registry (subgraph/networks.json) for
	// this chain: "<data source or template>:<address>@<start block>"
	// entries, for a local chain or a fork where the contracts live
	// elsewhere.
	IndexSources []string `json:"indexSources,omitempty"`
	// AutoExerciser is the protocol's AutoExerciseTimeBased on this chain,
	// the contract a holder delegates exercise to; Router its ClammRouterV2
	// (purchases and deposits made for a receiver); LimitOrders its
	// LimitOrders. Each is the one the public frontend names, with its
	// evidence in subgraph/networks.json (periphery); zero where none is known.
	AutoExerciser common.Address `json:"autoExerciser,omitempty"`
	Router        common.Address `json:"router,omitempty"`
	LimitOrders   common.Address `json:"limitOrders,omitempty"`
	// Settlers are the accounts the markets' updateAddress approved to
	// settle expired options (subgraph/networks.json periphery.settlers).
	Settlers []common.Address `json:"settlers,omitempty"`
	// usd holds the chain's entries of Config.USDStablecoins.
	usd map[common.Address]bool
}

// IsUSDStablecoin reports whether the configuration values token at one US
// dollar on this chain (CLAMM_USD_STABLECOINS).
func (c *Chain) IsUSDStablecoin(token common.Address) bool { return c.usd[token] }

// linkStablecoins hands each chain its entries of USDStablecoins.
func (c *Config) linkStablecoins() error {
	byChain, err := parseStablecoins(c.USDStablecoins)
	if err != nil {
		return err
	}
	for id, ch := range c.Chains {
		ch.usd = byChain[id]
	}
	return nil
}

// Handler is an entry of the handler registry: the DEX label shown to
// clients, whether the protocol has deprecated the handler, its generation
// (1, 2 or 3: UniswapV3SingleTickLiquidityHandler, …V2, …V3; 0 unknown)
// and the slot0 layout of its DEX's pools (contracts.Slot0Layout; "" unknown).
type Handler struct {
	Name       string `json:"name"`
	Deprecated bool   `json:"deprecated"`
	Version    int    `json:"version,omitempty"`
	Slot0      string `json:"slot0,omitempty"`
}

// HookRules are what a hook contract's onPositionUse enforces when an
// option is bought from a range carrying it (stryke-xyz/clamm
// src/handlers/hooks): BoundedTTLHook_0Day maxTtl 24h, BoundedTTLHook_1Week
// maxTtl 168h, WeekendHook noWeekends, BoundedIVHook minIv 40. Every hook
// also requires the market to be whitelisted in it, which no getter shows.
type HookRules struct {
	// Name is the hook contract's name, shown to clients.
	Name string `json:"name"`
	// MaxTTL bounds the option's ttl (0: no bound).
	MaxTTL Duration `json:"maxTtl,omitempty"`
	// NoWeekends refuses purchases while the block's UTC day is a Saturday or Sunday.
	NoWeekends bool `json:"noWeekends,omitempty"`
	// MinIV refuses purchases unless the market's optionPricing().ttlToVol(ttl) is at least this (0: none).
	MinIV uint64 `json:"minIv,omitempty"`
}

// UnmarshalJSON refuses the label strings ("24h", "weekly") older
// configurations used, which stated no rules.
func (h *HookRules) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return fmt.Errorf("a hook is now an object {\"name\", \"maxTtl\", \"noWeekends\", \"minIv\"}, not the label %s", b)
	}
	type plain HookRules
	return json.Unmarshal(b, (*plain)(h))
}

// The kinds of swapper a chain can configure (Swapper.Kind). Only the
// composition root (internal/app) builds a quoter by kind; the use cases
// ask the quoter what it can do (swap.Quoter.OnChain).
const (
	SwapperUniswapV3 = "uniswap-v3"
	Swapper1inch     = "1inch"
)

// QuoterV2 is the kind of quote contract with Uniswap V3 QuoterV2's
// quoteExactInputSingle((tokenIn, tokenOut, amountIn, uint24 fee,
// sqrtPriceLimitX96)): Uniswap's and its forks' (PancakeSwap, Sushi,
// Agni, FusionX, Thruster, Kodiak). The only kind the gateway calls.
const QuoterV2 = "quoterV2"

// Quoter is one DEX's quote contract (Chain.Quoters).
type Quoter struct {
	Kind    string         `json:"kind"`
	Address common.Address `json:"address"`
}

// Swapper is one swapperId of a chain.
type Swapper struct {
	Kind    string         `json:"kind"` // SwapperUniswapV3 or Swapper1inch
	Address common.Address `json:"address"`
	Router  common.Address `json:"router,omitempty"`
	Quoter  common.Address `json:"quoter,omitempty"`
	// ByDex maps a handler's DEX label to the swapper contract of that DEX,
	// for chains (Mantle) where each Uniswap-V3 fork has its own swapper.
	ByDex      map[string]common.Address `json:"byDex,omitempty"`
	APIBaseURL string                    `json:"apiBaseUrl,omitempty"`
	APIKeyEnv  string                    `json:"apiKeyEnv,omitempty"`
}

// Embedded is the subgraph URL that says, as no subgraph URL does, that
// the gateway indexes the chain itself from its RPC node: a file may set
// a subgraph URL that the environment cannot unset, but can set to this.
const Embedded = "embedded"

// Live reports whether the chain is served from a Graph Node: both
// upstreams configured.
func (c *Chain) Live() bool {
	return c.SubgraphURL != "" && c.SubgraphURL != Embedded && c.RPCURL != ""
}

// Indexed reports whether the gateway indexes the chain itself (the
// embedded indexer): an RPC URL and no subgraph URL, or the subgraph URL
// `embedded`.
func (c *Chain) Indexed() bool {
	return c.RPCURL != "" && (c.SubgraphURL == "" || c.SubgraphURL == Embedded)
}

// IndexSource is one entry of Chain.IndexSources.
type IndexSource struct {
	Name    string
	Address common.Address
	Start   uint64
}

// Sources parses IndexSources (nil when unset). An entry that does not
// parse, or an address given twice (the mappings index one data source
// per address: the later start block would win, and the blocks before it
// go unindexed), is refused naming the variable and the file's key.
func (c *Chain) Sources() ([]IndexSource, error) {
	var out []IndexSource
	where := fmt.Sprintf("CLAMM_CHAIN_%d_INDEX_SOURCES (chains.%d.indexSources)", c.ID, c.ID)
	seen := map[common.Address]string{}
	for _, e := range c.IndexSources {
		name, rest, ok1 := strings.Cut(strings.TrimSpace(e), ":")
		addr, start, ok2 := strings.Cut(rest, "@")
		n, err := strconv.ParseUint(start, 10, 64)
		if !ok1 || !ok2 || name == "" || err != nil || !common.IsHexAddress(addr) || !strings.HasPrefix(addr, "0x") {
			return nil, fmt.Errorf("%s: index source %q is not <data source or template>:<0x address>@<start block>", where, e)
		}
		a := common.HexToAddress(addr)
		if first, twice := seen[a]; twice {
			return nil, fmt.Errorf("%s: %s is given twice (%q and %q): give each address once", where, a.Hex(), first, strings.TrimSpace(e))
		}
		seen[a] = strings.TrimSpace(e)
		out = append(out, IndexSource{Name: name, Address: a, Start: n})
	}
	return out, nil
}

// HandlerInfo returns the registry entry of a handler; an unregistered handler
// is shown as "unknown", not deprecated, rather than hidden: its liquidity is real.
func (c *Chain) HandlerInfo(addr common.Address) Handler {
	if h, ok := c.Handlers[addr]; ok {
		return h
	}
	return Handler{Name: "unknown"}
}

// PoolSlot0 is the slot0 layout pool is read by: that of its DEX when
// PoolDex names it; else the one layout every handler's DEX of the chain
// has, when they agree; else contracts.Slot0Leading, the two leading
// words every layout shares (a pool of a chain whose DEXes differ, which
// the configuration does not place). A handler without a slot0 takes its
// DEX's, as another handler of that DEX declares it; Validate has checked
// that those declarations agree.
func (c *Chain) PoolSlot0(pool common.Address) contracts.Slot0Layout {
	byDex := c.dexSlot0()
	if dex, ok := c.PoolDex[pool]; ok {
		return byDex[dex]
	}
	var shared contracts.Slot0Layout
	for _, h := range c.Handlers {
		l := byDex[h.Name]
		if l == contracts.Slot0Leading || (shared != "" && l != shared) {
			return contracts.Slot0Leading
		}
		shared = l
	}
	return shared
}

// dexSlot0 is each DEX's slot0 layout, as its handlers declare it.
func (c *Chain) dexSlot0() map[string]contracts.Slot0Layout {
	out := map[string]contracts.Slot0Layout{}
	for _, h := range c.Handlers {
		if h.Slot0 != "" {
			out[h.Name] = contracts.Slot0Layout(h.Slot0)
		}
	}
	return out
}

// validateSlot0 checks the chain's slot0 layouts: each handler's is a
// known one, the handlers of one DEX that declare one agree, and every DEX
// PoolDex names has a layout.
func (c *Chain) validateSlot0() error {
	byDex := map[string]string{}
	for addr, h := range c.Handlers {
		if h.Slot0 == "" {
			continue
		}
		if !contracts.Slot0Layout(h.Slot0).Known() {
			return fmt.Errorf("chain %d handler %s: slot0 %q is none of %v", c.ID, addr.Hex(), h.Slot0, contracts.Slot0Layouts())
		}
		if prev, ok := byDex[h.Name]; ok && prev != h.Slot0 {
			return fmt.Errorf("chain %d: handlers of dex %q declare slot0 %q and %q", c.ID, h.Name, prev, h.Slot0)
		}
		byDex[h.Name] = h.Slot0
	}
	for pool, dex := range c.PoolDex {
		if byDex[dex] == "" {
			return fmt.Errorf("chain %d poolDex %s: dex %q has no handler with a slot0 layout", c.ID, pool.Hex(), dex)
		}
	}
	return nil
}

// SupersededBy is the market that replaced market on this chain
// (SupersededMarkets), and whether one did.
func (c *Chain) SupersededBy(market common.Address) (common.Address, bool) {
	next, ok := c.SupersededMarkets[market]
	return next, ok
}

// validateSuperseded refuses a superseded market without a successor, or
// its own: a ticker would then name no market, or loop.
func (c *Chain) validateSuperseded() error {
	for m, next := range c.SupersededMarkets {
		if m == (common.Address{}) || next == (common.Address{}) || m == next {
			return fmt.Errorf("chain %d supersededMarkets: %s -> %s is not one market replaced by another", c.ID, m.Hex(), next.Hex())
		}
		if _, again := c.SupersededMarkets[next]; again {
			return fmt.Errorf("chain %d supersededMarkets: %s's successor %s is superseded too; name the live market", c.ID, m.Hex(), next.Hex())
		}
	}
	return nil
}

// IsSettler reports whether the registry lists addr as a settler of the chain.
func (c *Chain) IsSettler(addr common.Address) bool {
	for _, s := range c.Settlers {
		if s == addr {
			return true
		}
	}
	return false
}

// Duration is a time.Duration written as "15s" in JSON.
type Duration time.Duration

// UnmarshalJSON accepts Go duration strings.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Default returns the defaults: the settings table's, and the chains
// embedded in defaults.json.
func Default() *Config {
	c := &Config{Chains: map[uint64]*Chain{}}
	applyDefaults(c)
	if err := parse(defaultsJSON, c); err != nil {
		panic("config: embedded defaults: " + err.Error())
	}
	if err := c.linkStablecoins(); err != nil {
		panic("config: embedded defaults: " + err.Error())
	}
	return c
}

// Load builds the configuration: the defaults, then the JSON file named by
// CLAMM_CONFIG (if set), then environment variables (the settings table,
// settings.go, and each chain's URLs), then validates it. A chain id that
// appears only in the environment is added with empty registries.
func Load(getenv func(string) string) (*Config, error) {
	c := Default()
	if path := getenv("CLAMM_CONFIG"); path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		if err := parse(raw, c); err != nil {
			return nil, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	if err := applySettingsEnv(c, getenv); err != nil {
		return nil, err
	}
	if err := applyChainEnv(c, getenv); err != nil {
		return nil, err
	}
	return c, c.Validate()
}

// parse merges raw JSON over c. Chains merge field by field, so a file can
// set one URL without repeating the registries.
func parse(raw []byte, c *Config) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return err
	}
	if err := applySettingsFile(c, top); err != nil {
		return err
	}
	var chains map[string]json.RawMessage
	if msg, ok := top["chains"]; ok {
		if err := json.Unmarshal(msg, &chains); err != nil {
			return fmt.Errorf("chains: %w", err)
		}
	}
	for key, msg := range chains {
		id, err := strconv.ParseUint(key, 10, 64)
		if err != nil || id == 0 {
			return fmt.Errorf("chain id %q is not a positive integer", key)
		}
		ch := c.Chains[id]
		if ch == nil {
			ch = &Chain{}
			c.Chains[id] = ch
		}
		if err := json.Unmarshal(msg, ch); err != nil {
			return fmt.Errorf("chain %d: %w", id, err)
		}
		ch.ID = id
	}
	return nil
}

// applyChainEnv sets chain URLs from the environment, which wins over file
// and defaults (LiveUpstreamsHint names the variables).
func applyChainEnv(c *Config, getenv func(string) string) error {
	ids, err := envChainIDs(getenv, c)
	if err != nil {
		return err
	}
	for _, id := range ids {
		ch := c.Chains[id]
		if ch == nil {
			ch = &Chain{ID: id, Name: strconv.FormatUint(id, 10), Multicall3: common.HexToAddress("0xcA11bde05977b3631167028862bE2a173976CA11")}
			c.Chains[id] = ch
		}
		if v := getenv(fmt.Sprintf("CLAMM_CHAIN_%d_SUBGRAPH_URL", id)); v != "" {
			ch.SubgraphURL = v
		}
		if v := getenv(fmt.Sprintf("CLAMM_CHAIN_%d_RPC_URL", id)); v != "" {
			ch.RPCURL = v
		}
		if v := getenv(fmt.Sprintf("CLAMM_CHAIN_%d_RPC_WS_URL", id)); v != "" {
			ch.RPCWSURL = v
		}
		if v := getenv(fmt.Sprintf("CLAMM_CHAIN_%d_MODE", id)); v != "" {
			ch.Mode = v
		}
		if v := getenv(fmt.Sprintf("CLAMM_CHAIN_%d_INDEX_SOURCES", id)); v != "" {
			ch.IndexSources = strings.Split(v, ",")
		}
	}
	return nil
}

// envChainIDs lists the configured chains plus any named in CLAMM_CHAINS
// (comma-separated ids), which is how the environment alone adds a chain.
// An entry that is not a chain id stops the start naming the variable:
// CLAMM_CHAINS=abc used to start serving no chain of its own, silently.
// Empty entries (a trailing comma) are none.
func envChainIDs(getenv func(string) string, c *Config) ([]uint64, error) {
	seen := map[uint64]bool{}
	for id := range c.Chains {
		seen[id] = true
	}
	for _, s := range strings.Split(getenv("CLAMM_CHAINS"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("CLAMM_CHAINS: %.40q is not a chain id (comma-separated positive integers, such as 42161,8453)", s)
		}
		seen[id] = true
	}
	ids := make([]uint64, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// redisSchemes are CLAMM_REDIS_URL's: one primary, Sentinel, Cluster
// (internal/cache/redistier/url.go), each with or without TLS.
var redisSchemes = []string{"redis", "rediss", "redis+sentinel", "rediss+sentinel", "redis+cluster", "rediss+cluster"}

// Validate checks what would otherwise fail at request time: a value the
// types accept can still turn a feature off or refuse every request
// (CLAMM_RATE_LIMIT=Inf refused all, NaN disabled the limiter, a negative
// CLAMM_STALE_GRACE disabled caching).
func (c *Config) Validate() error {
	if err := validateSettings(c); err != nil {
		return err
	}
	if err := c.validateQueriesDir(); err != nil {
		return err
	}
	for id, ch := range c.Chains {
		ch.ID = id
		if err := ch.validateIndex(); err != nil {
			return err
		}
		for _, u := range []string{ch.SubgraphURL, ch.RPCURL} {
			if u == "" || u == Embedded {
				continue
			}
			if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") {
				return fmt.Errorf("chain %d: upstream URL %s is not an http(s) URL", id, secret.URL(u))
			}
		}
		if p, err := url.Parse(ch.RPCWSURL); ch.RPCWSURL != "" && (err != nil || (p.Scheme != "ws" && p.Scheme != "wss")) {
			return fmt.Errorf("chain %d: WebSocket RPC URL %s is not a ws(s) URL", id, secret.URL(ch.RPCWSURL))
		}
		for sid, s := range ch.Swappers {
			if s.Kind != SwapperUniswapV3 && s.Kind != Swapper1inch {
				return fmt.Errorf("chain %d swapper %s: unknown kind %q", id, sid, s.Kind)
			}
		}
		for dex, q := range ch.Quoters {
			if q.Kind != QuoterV2 || q.Address == (common.Address{}) {
				return fmt.Errorf("chain %d quoter of %s: kind %q (want %q) at %s", id, dex, q.Kind, QuoterV2, q.Address.Hex())
			}
		}
		if err := ch.validateSlot0(); err != nil {
			return err
		}
		if err := ch.validateSuperseded(); err != nil {
			return err
		}
	}
	return c.linkStablecoins()
}

// validateQueriesDir refuses a CLAMM_QUERIES_DIR that is not a directory
// this process can read: a path mistyped or not mounted started the
// gateway silently on the built-in documents, which is not what the
// operator asked.
func (c *Config) validateQueriesDir() error {
	if c.QueriesDir == "" {
		return nil
	}
	st, err := os.Stat(c.QueriesDir)
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s is not a directory", c.QueriesDir)
	}
	if err != nil {
		return fmt.Errorf("CLAMM_QUERIES_DIR (queriesDir): %w", err)
	}
	return nil
}

// validateIndex refuses the subgraph URL `embedded` without an RPC URL to
// index from, and index sources that do not parse.
func (c *Chain) validateIndex() error {
	if c.SubgraphURL == Embedded && c.RPCURL == "" {
		return fmt.Errorf("chain %d: CLAMM_CHAIN_%d_SUBGRAPH_URL=%s (the gateway indexes the chain) needs CLAMM_CHAIN_%d_RPC_URL", c.ID, c.ID, Embedded, c.ID)
	}
	if _, err := c.Sources(); err != nil {
		return err // names the chain's variable and key
	}
	return nil
}

// SwapperIDs returns each chain's swapperIds.
func (c *Config) SwapperIDs() map[uint64][]string {
	out := map[uint64][]string{}
	for id, ch := range c.Chains {
		for sid := range ch.Swappers {
			out[id] = append(out[id], sid)
		}
	}
	return out
}

// ChainIDs returns the configured chain ids in ascending order.
func (c *Config) ChainIDs() []uint64 {
	ids := make([]uint64, 0, len(c.Chains))
	for id := range c.Chains {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// LiveUpstreamsHint tells a client how the operator gives the chains ids
// live upstreams, naming the real variables: the composition root adds it
// to NOT_RECORDED and to the refusal of a chain without upstreams, so the
// error vocabulary stays free of deployment. No ids: the variables' pattern.
func LiveUpstreamsHint(ids ...uint64) string {
	if len(ids) == 0 {
		return "to serve live data set CLAMM_CHAIN_{id}_SUBGRAPH_URL and CLAMM_CHAIN_{id}_RPC_URL of the chain, or only CLAMM_CHAIN_{id}_RPC_URL to have the gateway index it (see docs/configuration.md)"
	}
	vars := make([]string, len(ids))
	for i, id := range ids {
		vars[i] = fmt.Sprintf("CLAMM_CHAIN_%d_RPC_URL (an archive node: the gateway indexes the chain itself), or with it CLAMM_CHAIN_%d_SUBGRAPH_URL (a Graph Node)", id, id)
	}
	return "to serve live data set " + strings.Join(vars, "; ") + " (see docs/configuration.md; go run ./cmd/clamm-sandbox tries it on a local chain)"
}
