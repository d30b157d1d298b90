package config

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/secret"
)

// A setting is one knob of the gateway, stated once: the variable that sets
// it, its key in the config file, its default, where it lives in Config,
// what a valid value is, and its row in docs/configuration.md. Loading
// (defaults, file, environment), validation and the documentation table
// all come from the settings table below; a test holds the docs equal to
// it and finds every CLAMM_ variable the code reads in it.
//
// To add a knob: a Config field, one row here (field returns a pointer of
// a type set parses), and the docs table the test prints.
type setting struct {
	env  string // the environment variable
	json string // the config file's key; "": environment only
	def  string // the default, spelt as the variable would be; "": none
	// field points into c: *string, *bool, *int, *int64, *uint64,
	// *float64, *Duration, *[]string (comma-separated), or an
	// encoding.TextUnmarshaler.
	field func(c *Config) any
	// check, if set, refuses what the type accepts but the gateway cannot
	// serve with (c is complete: checks may read other settings).
	check func(c *Config) error
	doc   string // the meaning, in the docs table
	shown string // the default as the docs show it, if not `def`
}

// maxRateLimit bounds CLAMM_RATE_LIMIT: beyond a million requests a second
// per client a limit limits nothing.
const maxRateLimit = 1e6

// settings are the gateway's knobs in the order docs/configuration.md
// lists them. Per-chain variables and the few read elsewhere are in
// otherVariables.
var settings = []setting{
	{env: "CLAMM_LISTEN", json: "listen", def: ":8080", field: func(c *Config) any { return &c.Listen },
		check: func(c *Config) error { return nonEmpty(c.Listen) },
		doc:   "listen address (the `-listen` flag wins)"},
	{env: "CLAMM_UPSTREAM_TIMEOUT", json: "upstreamTimeout", def: "10s", field: func(c *Config) any { return &c.UpstreamTimeout },
		check: func(c *Config) error { return positive(c.UpstreamTimeout) },
		doc:   "deadline of one upstream call"},
	{env: "CLAMM_REQUEST_TIMEOUT", json: "requestTimeout", def: "15s", field: func(c *Config) any { return &c.RequestTimeout },
		check: func(c *Config) error { return positive(c.RequestTimeout) },
		doc:   "deadline of one client request"},
	{env: "CLAMM_STRIKES_TTL", json: "strikesTTL", def: "15s", field: func(c *Config) any { return &c.StrikesTTL },
		check: func(c *Config) error { return positive(c.StrikesTTL) },
		doc:   "how long a strikes-chain answer is served from cache, and, halved, how old a subgraph block it may be built at without asking the subgraph first"},
	{env: "CLAMM_HISTORY_TTL", json: "historyTTL", def: "10s", field: func(c *Config) any { return &c.HistoryTTL },
		check: func(c *Config) error { return positive(c.HistoryTTL) },
		doc:   "how long an exercise-history page is served from cache"},
	{env: "CLAMM_PREPARE_TTL", json: "prepareTTL", def: "2s", field: func(c *Config) any { return &c.PrepareTTL },
		check: func(c *Config) error { return positive(c.PrepareTTL) },
		doc:   "how long a prepared exercise (its quotes) is served from cache; the same bounds purchase quotes as `CLAMM_STRIKES_TTL` bounds strikes chains"},
	{env: "CLAMM_IMMUTABLES_TTL", json: "immutablesTTL", def: "24h", field: func(c *Config) any { return &c.ImmutablesTTL },
		check: func(c *Config) error { return positive(c.ImmutablesTTL) },
		doc:   "how long a market's immutable facts (assets, pool, fee) are kept"},
	{env: "CLAMM_CACHE_MAX_ENTRIES", json: "cacheMaxEntries", def: "10000", field: func(c *Config) any { return &c.CacheMaxEntries },
		check: func(c *Config) error { return positive(c.CacheMaxEntries) },
		doc:   "bound on cached responses (oldest writes evicted first)"},
	{env: "CLAMM_CACHE_MAX_BYTES", json: "cacheMaxBytes", def: "268435456", field: func(c *Config) any { return &c.CacheMaxBytes },
		check: func(c *Config) error { return positive(c.CacheMaxBytes) },
		doc:   "bound on cached response bytes"},
	{env: "CLAMM_STALE_GRACE", json: "staleGrace", def: "60s", field: func(c *Config) any { return &c.StaleGrace },
		check: func(c *Config) error { return notNegative(c.StaleGrace) },
		doc:   "how long past its TTL a strikes or history answer may be served stale"},
	{env: "CLAMM_RATE_LIMIT", json: "rateLimit", def: "0", shown: "`0` (off)", field: func(c *Config) any { return &c.RateLimit },
		check: func(c *Config) error {
			if r := c.RateLimit; math.IsNaN(r) || math.IsInf(r, 0) || r < 0 || r > maxRateLimit {
				return fmt.Errorf("%v is not a rate between 0 (off) and %g requests a second", r, float64(maxRateLimit))
			}
			return nil
		},
		doc: "per-client requests per second, at most 10^6; over it `429 RATE_LIMITED` with `Retry-After`"},
	{env: "CLAMM_RATE_BURST", json: "rateBurst", def: "20", field: func(c *Config) any { return &c.RateBurst },
		check: func(c *Config) error {
			if c.RateBurst < 0 || (c.RateLimit > 0 && c.RateBurst == 0) {
				return fmt.Errorf("%d must be at least 1 with a rate limit", c.RateBurst)
			}
			return nil
		},
		doc: "requests a client may make at once"},
	{env: "CLAMM_TRUST_FORWARDED_FOR", json: "trustForwardedFor", def: "false", field: func(c *Config) any { return &c.TrustForwardedFor },
		doc: "name clients by the last `X-Forwarded-For` entry, the one the proxy in front appended (only behind one proxy that appends it)"},
	{env: "CLAMM_MAX_FILLS", json: "maxFills", def: "64", field: func(c *Config) any { return &c.MaxFills },
		check: func(c *Config) error { return positive(c.MaxFills) },
		doc:   "upstream fills at once (and each upstream's idle connections); one more is `503 OVERLOADED` with `Retry-After`"},
	{env: "CLAMM_MAX_LAG_BLOCKS", json: "maxLagBlocks", def: "500", field: func(c *Config) any { return &c.MaxLagBlocks },
		check: func(c *Config) error { return positive(c.MaxLagBlocks) },
		doc:   "blocks the subgraph may trail the chain head before `/readyz` fails"},
	{env: "CLAMM_REDIS_URL", json: "redisUrl", shown: "none", field: func(c *Config) any { return &c.RedisURL },
		check: func(c *Config) error {
			if c.RedisURL == "" {
				return nil
			}
			if p, err := url.Parse(c.RedisURL); err != nil || !slices.Contains(redisSchemes, p.Scheme) || p.Host == "" {
				return fmt.Errorf("%s is not a redis://, rediss://, redis+sentinel:// or redis+cluster:// URL", secret.URL(c.RedisURL))
			}
			return nil
		},
		doc: "Redis (or Valkey) shared by replicas as a second cache tier ([operations.md](operations.md#several-replicas-on-one-redis)): one primary, a primary behind Sentinel, or a Redis Cluster, by the URL's form (below)"},
	{env: "CLAMM_REDIS_PREFIX", json: "redisPrefix", def: "clamm:v1:", field: func(c *Config) any { return &c.RedisPrefix },
		check: func(c *Config) error { return nonEmpty(c.RedisPrefix) },
		doc:   "namespace of the gateway's Redis keys; replicas that share answers share it"},
	{env: "CLAMM_REDIS_TIMEOUT", json: "redisTimeout", def: "150ms", field: func(c *Config) any { return &c.RedisTimeout },
		check: func(c *Config) error { return positive(c.RedisTimeout) },
		doc:   "deadline of one Redis command, positive (0 or below stops the start); past it the replica skips Redis for 1 s"},
	{env: "CLAMM_CORS_ORIGINS", json: "corsOrigins", shown: "none", field: func(c *Config) any { return &c.CORSOrigins },
		doc: "browser origins allowed to read answers, comma-separated, `*` for any; preflights answered"},
	{env: "CLAMM_LOG_LEVEL", json: "logLevel", def: "info", field: func(c *Config) any { return &c.LogLevel },
		doc: "`debug`, `info` (one JSON access line per request), `warn`, `error`"},
	{env: "CLAMM_PPROF_LISTEN", json: "pprofListen", shown: "off", field: func(c *Config) any { return &c.PprofListen },
		doc: "address for net/http/pprof (bind it to loopback); one that cannot be bound stops the start"},
	{env: "CLAMM_QUERIES_DIR", json: "queriesDir", shown: "embedded", field: func(c *Config) any { return &c.QueriesDir },
		doc: "directory of `.graphql` files replacing those in `queries/`"},
	{env: "CLAMM_DEMO", json: "demo", def: "on", field: func(c *Config) any { return &c.Demo },
		doc: "`off` disables the embedded recordings"},
	{env: "CLAMM_USD_STABLECOINS", json: "usdStablecoins", def: defaultUSDStablecoins, field: func(c *Config) any { return &c.USDStablecoins },
		check: func(c *Config) error { _, err := parseStablecoins(c.USDStablecoins); return err },
		shown: "USDC, USDC.e, USDT on 42161; USDT, USDC on 5000; USDC.e, scUSD on 146; USDC on 8453; USDB on 81457",
		doc:   "tokens counted as one US dollar, `<chainId>:<address>` comma-separated (an array of such strings in the file); a market whose put asset is one gets `usd` figures in `/clamm/stats`, any other none"},
	{env: "CLAMM_INDEX_DIR", json: "indexDir", def: "clamm-index", field: func(c *Config) any { return &c.IndexDir },
		check: func(c *Config) error { return nonEmpty(c.IndexDir) },
		doc:   "directory of the embedded indexer's stores (`<chainId>.sqlite` each), created if absent; relative to the working directory"},
	{env: "CLAMM_ORDERS_PATH", json: "ordersPath", def: "clamm-orders.sqlite", field: func(c *Config) any { return &c.OrdersPath },
		check: func(c *Config) error { return nonEmpty(c.OrdersPath) },
		doc:   "the signed-order book's embedded store (SQLite), created if absent, opened when a chain is served live or indexed; relative to the working directory"},
	{env: "CLAMM_ORDERS_DATABASE_URL", json: "ordersDatabaseUrl", shown: "none", field: func(c *Config) any { return &c.OrdersDatabaseURL },
		check: func(c *Config) error { return postgresURL(c.OrdersDatabaseURL) },
		doc:   "`postgres://` URL of an existing PostgreSQL database holding the order book instead of `CLAMM_ORDERS_PATH`: replicas sharing it serve one book (docs/orders.md)"},
	{env: "CLAMM_ORDERS_PER_MAKER", json: "ordersPerMaker", def: "100", field: func(c *Config) any { return &c.OrdersPerMaker },
		check: func(c *Config) error { return positive(c.OrdersPerMaker) },
		doc:   "the most orders one maker keeps open on a chain; one more is 429 ORDER_BOOK_FULL"},
	{env: "CLAMM_INDEX_RANGE", json: "indexRange", def: "2000", field: func(c *Config) any { return &c.IndexRange },
		check: func(c *Config) error { return positive(c.IndexRange) },
		doc:   "the embedded indexer's first `eth_getLogs` range in blocks; halved when the node refuses a range, doubled while answers stay small"},
	{env: "CLAMM_INDEX_MAX_RANGE", json: "indexMaxRange", def: "100000", field: func(c *Config) any { return &c.IndexMaxRange },
		check: func(c *Config) error { return positive(c.IndexMaxRange) },
		doc:   "the widest `eth_getLogs` range the embedded indexer grows to (a node's cap, e.g. 10000, avoids the refused first tries)"},
	{env: "CLAMM_INDEX_BATCH", json: "indexBatch", def: "100", field: func(c *Config) any { return &c.IndexBatch },
		check: func(c *Config) error { return positive(c.IndexBatch) },
		doc:   "the most calls the embedded indexer puts in one JSON-RPC batch request (blocks and receipts are read in batches); lower it for a provider that refuses larger batches or answers"},
	{env: "CLAMM_INDEX_POLL", json: "indexPoll", def: "2s", field: func(c *Config) any { return &c.IndexPoll },
		check: func(c *Config) error { return atLeast(c.IndexPoll, MinIndexPoll) },
		doc:   "how often the embedded indexer asks the node's head once it has indexed up to it; at least 100ms"},
	{env: "CLAMM_INDEX_HISTORY_BLOCKS", json: "indexHistoryBlocks", def: "1000000", field: func(c *Config) any { return &c.IndexHistoryBlocks },
		check: func(c *Config) error { return historyBlocks(c.IndexHistoryBlocks) },
		doc:   "how many blocks below the head the embedded indexer keeps the state of (Graph Node's `history_blocks`): older entity versions are pruned as the head moves, and a request pinned (`block`) below what is kept is `422 BLOCK_PRUNED` naming the oldest block served; the default is about 2.9 days on Arbitrum One, 139 on Ethereum; at least 10000 (the blocks a reorg is checked against), or 0 to keep every version"},
	{env: "CLAMM_INDEX_MAX_QUERIES", json: "indexMaxQueries", def: "16", field: func(c *Config) any { return &c.IndexMaxQueries },
		check: func(c *Config) error { return positive(c.IndexMaxQueries) },
		doc:   "the most queries an indexed chain's query API (`/subgraphs/<chainId>`) answers at once; one more is `503 OVERLOADED` with `Retry-After: 1` (the gateway's own reads of its index are bounded by `CLAMM_MAX_FILLS` instead)"},
	{env: "CLAMM_STREAMS", json: "streams", def: "false", field: func(c *Config) any { return &c.Streams },
		doc: "serve streams of the reads (`Accept: text/event-stream`, and WebSocket at `/clamm/ws`) and poll each Graph Node chain's head for them; off, nothing streams and no head is polled"},
	{env: "CLAMM_HEAD_POLL", json: "headPoll", def: "1s", field: func(c *Config) any { return &c.HeadPoll },
		check: func(c *Config) error { return positive(c.HeadPoll) },
		doc:   "with streams on, how often a Graph Node chain's `_meta` is asked for its head (an indexed chain's indexer announces its own)"},
	{env: "CLAMM_STREAMS_PER_CLIENT", json: "streamsPerClient", def: "64", field: func(c *Config) any { return &c.StreamsPerClient },
		check: func(c *Config) error { return positive(c.StreamsPerClient) },
		doc:   "streams one client may follow at once (SSE connections and WebSocket subscriptions); one more is `429 RATE_LIMITED`"},
	{env: "CLAMM_STREAMS_MAX", json: "streamsMax", def: "20000", field: func(c *Config) any { return &c.StreamsMax },
		check: func(c *Config) error { return positive(c.StreamsMax) },
		doc:   "streams the gateway follows at once, all clients together; one more is `503 OVERLOADED`"},
	{env: "CLAMM_STREAM_HEARTBEAT", json: "streamHeartbeat", def: "15s", field: func(c *Config) any { return &c.StreamHeartbeat },
		check: func(c *Config) error { return positive(c.StreamHeartbeat) },
		doc:   "how long a stream stays silent before a heartbeat comment (proxies close idle connections)"},
}

// defaultUSDStablecoins: Arbitrum One's USDC, USDC.e (bridged) and USDT;
// Mantle's USDT and USDC; Sonic's USDC.e (bridged USDC, the put asset of
// its markets) and Rings' scUSD (the put asset of market 0x1E3b); Base's
// USDC; Blast's USDB.
const defaultUSDStablecoins = "42161:0xaf88d065e77c8cC2239327C5EDb3A432268e5831,42161:0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8," +
	"42161:0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9,5000:0x201EBa5CC46D216Ce6DC03F6a759e8E766e956aE,5000:0x09Bc4E0D864854c6aFB6eB9A9cdF58aC190D0dF9," +
	"146:0x29219dd400f2Bf60E5a23d13Be72B486D4038894,146:0xd3DCe716f3eF535C5Ff8d041c1A41C3bd89b97aE,8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913," +
	"81457:0x4300000000000000000000000000000000000003"

// parseStablecoins reads CLAMM_USD_STABLECOINS's entries, `<chainId>:<address>`.
func parseStablecoins(entries []string) (map[uint64]map[common.Address]bool, error) {
	out := map[uint64]map[common.Address]bool{}
	for _, e := range entries {
		id, addr, ok := strings.Cut(strings.TrimSpace(e), ":")
		chainID, err := strconv.ParseUint(id, 10, 64)
		if !ok || err != nil || chainID == 0 || !common.IsHexAddress(addr) || !strings.HasPrefix(addr, "0x") {
			return nil, fmt.Errorf("%q is not <chainId>:<0x address>", e)
		}
		if out[chainID] == nil {
			out[chainID] = map[common.Address]bool{}
		}
		out[chainID][common.HexToAddress(addr)] = true
	}
	return out, nil
}

// otherVariable is a variable outside the settings table: per chain, or read
// where it is used. It is documented (and found by the test) all the same.
type otherVariable struct {
	env, shown, doc string
}

// otherVariables come before (first) and after the settings in the docs.
var otherVariables = struct{ first, last []otherVariable }{
	first: []otherVariable{
		{"CLAMM_CONFIG", "none", "JSON file merged over the embedded defaults, field by field (the keys are the second column's names)"},
		{"CLAMM_CHAIN_<id>_SUBGRAPH_URL", "none", "Graph Node query URL of chain `<id>`; `chains.<id>.subgraphUrl` in the file"},
		{"CLAMM_CHAIN_<id>_RPC_URL", "none", "JSON-RPC URL of chain `<id>`; a node that answers another `eth_chainId` stops the start; `chains.<id>.rpcUrl` in the file. Set alone (no subgraph URL, or the subgraph URL `embedded`), the gateway indexes the chain itself ([operations.md](operations.md#live-with-only-an-rpc-url))"},
		{"CLAMM_CHAIN_<id>_RPC_WS_URL", "none", "WebSocket JSON-RPC URL (`ws://` or `wss://`) of chain `<id>`'s node: with streams on, a Graph Node chain's head feed asks the subgraph's `_meta` at each `newHeads` the node announces, not only every `CLAMM_HEAD_POLL`; `chains.<id>.rpcWsUrl` in the file"},
		{"CLAMM_CHAIN_<id>_MODE", "what is set", "how chain `<id>` is served: `demo`, `graph-node` (both URLs above) or `indexed` (the RPC URL, no subgraph URL); set, a start missing one of the mode's settings stops naming it; unset, the mode follows from the URLs set (neither: the demo; both: `graph-node`; only the RPC URL: `indexed`; only the subgraph URL stops the start) ([configuration.md](configuration.md#how-a-chain-is-served)); `chains.<id>.mode` in the file"},
		{"CLAMM_CHAIN_<id>_INDEX_SOURCES", "the registry's", "data sources the embedded indexer indexes on chain `<id>` instead of those of `subgraph/networks.json`: `<data source or template>:<0x address>@<start block>` comma-separated (a local chain or a fork); `chains.<id>.indexSources` in the file"},
		{"CLAMM_CHAINS", "none", "extra chain ids to serve from the environment alone (comma-separated)"},
		{"CLAMM_1INCH_API_KEY", "none", "1inch API key (the variable name is the swapper's `apiKeyEnv`)"},
	},
	last: []otherVariable{
		{"GOGC`, `GOMEMLIMIT", "see below", "Go's garbage-collector settings"},
	},
}

// DocsTable is the configuration table of docs/configuration.md, made
// from the settings.
func DocsTable() string {
	var b strings.Builder
	b.WriteString("| Variable | File key | Default | Meaning |\n|---|---|---|---|\n")
	row := func(env, key, shown, doc string) {
		if key != "" {
			key = "`" + key + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", env, key, shown, doc)
	}
	for _, o := range otherVariables.first {
		row(o.env, "", o.shown, o.doc)
	}
	for _, s := range settings {
		shown := s.shown
		if shown == "" {
			shown = "`" + s.def + "`"
		}
		row(s.env, s.json, shown, s.doc)
	}
	for _, o := range otherVariables.last {
		row(o.env, "", o.shown, o.doc)
	}
	return b.String()
}

// applyDefaults sets every setting to its default.
func applyDefaults(c *Config) {
	for _, s := range settings {
		if err := set(s.field(c), s.def); err != nil {
			panic(fmt.Sprintf("config: default of %s: %v", s.env, err))
		}
	}
}

// applySettingsEnv sets every setting whose variable is set.
func applySettingsEnv(c *Config, getenv func(string) string) error {
	for _, s := range settings {
		if v := getenv(s.env); v != "" {
			if err := set(s.field(c), v); err != nil {
				return fmt.Errorf("%s: %w", s.env, err)
			}
		}
	}
	return nil
}

// applySettingsFile sets every setting the file's top level names; a key
// that names none is refused, so a misspelt key is not silently ignored.
func applySettingsFile(c *Config, top map[string]json.RawMessage) error {
	for key, raw := range top {
		if key == "chains" {
			continue
		}
		s := settingByKey(key)
		if s == nil {
			return fmt.Errorf("unknown key %q", key)
		}
		if err := json.Unmarshal(raw, s.field(c)); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

func settingByKey(key string) *setting {
	for i := range settings {
		if settings[i].json == key {
			return &settings[i]
		}
	}
	return nil
}

// validateSettings runs each setting's check; the error names the
// variable and the file's key, so an operator knows what to fix.
func validateSettings(c *Config) error {
	for _, s := range settings {
		if s.check == nil {
			continue
		}
		if err := s.check(c); err != nil {
			return fmt.Errorf("%s (%s): %w", s.env, s.json, err)
		}
	}
	return nil
}

// set parses v, as a variable spells it, into the field dst points to.
func set(dst any, v string) error {
	var err error
	switch p := dst.(type) {
	case *string:
		*p = v
	case *bool:
		switch strings.ToLower(v) {
		case "on":
			*p = true
		case "off":
			*p = false
		default:
			*p, err = strconv.ParseBool(v)
		}
	case *int:
		*p, err = strconv.Atoi(v)
	case *int64:
		*p, err = strconv.ParseInt(v, 10, 64)
	case *uint64:
		*p, err = strconv.ParseUint(v, 10, 64)
	case *float64:
		*p, err = strconv.ParseFloat(v, 64)
		if err != nil {
			err = fmt.Errorf("%q is not a number", v)
		}
	case *Duration:
		var d time.Duration
		d, err = time.ParseDuration(v)
		*p = Duration(d)
	case *[]string:
		*p = []string{}
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
	case encoding.TextUnmarshaler:
		err = p.UnmarshalText([]byte(v))
	default:
		return fmt.Errorf("config: no parser for %T", dst)
	}
	return err
}

type number interface {
	~int | ~int64 | ~uint64 | ~float64
}

func positive[N number](n N) error {
	if n <= 0 {
		return fmt.Errorf("%v must be positive", show(n))
	}
	return nil
}

// MinIndexPoll is the shortest CLAMM_INDEX_POLL: a synced chain asks its
// node about four requests a poll, and a 1 ns poll made it thousands a
// second (attack 5, S13). Arbitrum's blocks come every 250 ms.
const MinIndexPoll = Duration(100 * time.Millisecond)

func atLeast(d, least Duration) error {
	if d < least {
		return fmt.Errorf("%v is below the least, %v", show(d), show(least))
	}
	return nil
}

func notNegative[N number](n N) error {
	if n < 0 {
		return fmt.Errorf("%v must not be negative", show(n))
	}
	return nil
}

// show prints a Duration as one ("-1s"), other numbers as they are.
func show(v any) any {
	if d, ok := v.(Duration); ok {
		return time.Duration(d)
	}
	return v
}

// historyBlocks is the retention's bound: none (0) or at least the
// indexer's reorg window (sqlstore.MinHistory), since a revert needs the
// versions valid at the fork.
func historyBlocks(n uint64) error {
	if n != 0 && n < 10_000 {
		return fmt.Errorf("%d is under 10000 (the blocks a reorg is checked against); 0 keeps every version", n)
	}
	return nil
}

func nonEmpty(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// postgresURL accepts "" (no PostgreSQL) or a postgres:// URL with a host.
func postgresURL(s string) error {
	if s == "" {
		return nil
	}
	if p, err := url.Parse(s); err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") || p.Host == "" {
		return errors.New("want a postgres:// URL with a host")
	}
	return nil
}
