// Package config holds the gateway's settings: per chain the upstream URLs,
// the handler registry, hooks and swappers; globally the listen address,
// timeouts and cache bounds. Defaults for Arbitrum (42161) and Mantle (5000)
// are embedded; a JSON file (CLAMM_CONFIG) is merged over them field by field,
// and environment variables override both. URLs may carry API keys, so they
// are only ever printed through Redact.
package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

//go:embed defaults.json
var defaultsJSON []byte

// Config is the whole configuration.
type Config struct {
	Listen          string            `json:"listen"`
	UpstreamTimeout Duration          `json:"upstreamTimeout"`
	RequestTimeout  Duration          `json:"requestTimeout"`
	StrikesTTL      Duration          `json:"strikesTTL"`
	HistoryTTL      Duration          `json:"historyTTL"`
	PrepareTTL      Duration          `json:"prepareTTL"`
	ImmutablesTTL   Duration          `json:"immutablesTTL"`
	CacheMaxEntries int               `json:"cacheMaxEntries"`
	CacheMaxBytes   int64             `json:"cacheMaxBytes"`
	StaleGrace      Duration          `json:"staleGrace"`
	RateLimit       float64           `json:"rateLimit"`
	RateBurst       int               `json:"rateBurst"`
	TrustXFF        bool              `json:"trustForwardedFor"`
	MaxFills        int               `json:"maxFills"`
	CORSOrigins     []string          `json:"corsOrigins"`
	MaxLagBlocks    uint64            `json:"maxLagBlocks"`
	Chains          map[uint64]*Chain `json:"chains"`

	// RedisURL, if set, names the Redis replicas share as a second cache
	// tier (redis:// or rediss://; may hold a password, printed only
	// through Redact); RedisPrefix namespaces its keys; RedisTimeout
	// bounds each Redis command (0: the tier's default, 150ms).
	RedisURL     string   `json:"redisUrl"`
	RedisPrefix  string   `json:"redisPrefix"`
	RedisTimeout Duration `json:"redisTimeout"`
}

// Chain is one network's upstreams and protocol registry.
type Chain struct {
	ID          uint64                              `json:"-"`
	Name        string                              `json:"name"`
	SubgraphURL string                              `json:"subgraphUrl"`
	RPCURL      string                              `json:"rpcUrl"`
	Multicall3  common.Address                      `json:"multicall3"`
	Handlers    map[common.Address]Handler          `json:"handlers"`
	Hooks       map[common.Address]HookRules        `json:"hooks"`
	Swappers    map[string]*Swapper                 `json:"swappers"`
	MarketPools map[common.Address][]common.Address `json:"marketPools,omitempty"`
}

// Handler is an entry of the handler registry: the DEX label shown to
// clients and whether the protocol has deprecated the handler.
type Handler struct {
	Name       string `json:"name"`
	Deprecated bool   `json:"deprecated"`
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

// Swapper is one swapperId of a chain.
type Swapper struct {
	Kind    string         `json:"kind"` // "uniswap-v3" or "1inch"
	Address common.Address `json:"address"`
	Router  common.Address `json:"router,omitempty"`
	Quoter  common.Address `json:"quoter,omitempty"`
	// ByDex maps a handler's DEX label to the swapper contract of that DEX,
	// for chains (Mantle) where each Uniswap-V3 fork has its own swapper.
	ByDex      map[string]common.Address `json:"byDex,omitempty"`
	APIBaseURL string                    `json:"apiBaseUrl,omitempty"`
	APIKeyEnv  string                    `json:"apiKeyEnv,omitempty"`
}

// Live reports whether both upstreams of the chain are configured.
func (c *Chain) Live() bool { return c.SubgraphURL != "" && c.RPCURL != "" }

// HandlerInfo returns the registry entry of a handler; an unregistered handler
// is shown as "unknown", not deprecated, rather than hidden: its liquidity is real.
func (c *Chain) HandlerInfo(addr common.Address) Handler {
	if h, ok := c.Handlers[addr]; ok {
		return h
	}
	return Handler{Name: "unknown"}
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

// Default returns the embedded defaults.
func Default() *Config {
	c, err := parse(defaultsJSON, nil)
	if err != nil {
		panic("config: embedded defaults: " + err.Error())
	}
	return c
}

// Load builds the configuration: embedded defaults, then the JSON file named
// by CLAMM_CONFIG (if set), then environment variables:
//
//	CLAMM_LISTEN                      listen address (":8080")
//	CLAMM_CHAIN_<id>_SUBGRAPH_URL     Graph Node query URL of chain <id>
//	CLAMM_CHAIN_<id>_RPC_URL          JSON-RPC URL of chain <id>
//	CLAMM_UPSTREAM_TIMEOUT            deadline of one upstream call ("10s")
//	CLAMM_REQUEST_TIMEOUT             deadline of one client request ("15s")
//	CLAMM_STRIKES_TTL                 cache TTL of strikes-chain responses ("15s")
//	CLAMM_HISTORY_TTL                 cache TTL of exercise-history pages ("10s")
//	CLAMM_PREPARE_TTL                 cache TTL of prepared exercises ("2s")
//	CLAMM_CACHE_MAX_ENTRIES           bound on cached responses (10000)
//	CLAMM_CACHE_MAX_BYTES             bound on cached response bytes (268435456)
//	CLAMM_STALE_GRACE                 how long past its TTL an answer may be served stale ("60s")
//	CLAMM_RATE_LIMIT                  per-client requests per second (0: off)
//	CLAMM_RATE_BURST                  per-client burst (20)
//	CLAMM_TRUST_FORWARDED_FOR         name clients by X-Forwarded-For (false)
//	CLAMM_MAX_FILLS                   upstream fills at once (64)
//	CLAMM_MAX_LAG_BLOCKS              subgraph blocks behind the head before /readyz fails (500)
//	CLAMM_CORS_ORIGINS                browser origins allowed, comma-separated, "*" for any (none)
//	CLAMM_CHAINS                      extra chain ids to configure from the environment alone
//	CLAMM_REDIS_URL                   Redis shared by replicas as a second cache tier (none)
//	CLAMM_REDIS_PREFIX                namespace of the gateway's Redis keys ("clamm:v1:")
//	CLAMM_REDIS_TIMEOUT               deadline of one Redis command ("150ms")
//
// A chain id that appears only in the environment is added with empty registries.
func Load(getenv func(string) string) (*Config, error) {
	c := Default()
	if path := getenv("CLAMM_CONFIG"); path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		if c, err = parse(raw, c); err != nil {
			return nil, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	if err := applyEnv(c, getenv); err != nil {
		return nil, err
	}
	return c, c.Validate()
}

// parse merges raw JSON over base (nil: an empty config). Chains merge field
// by field, so a file can set one URL without repeating the registries.
func parse(raw []byte, base *Config) (*Config, error) {
	if base == nil {
		base = &Config{Chains: map[uint64]*Chain{}}
	}
	var top struct {
		Chains map[string]json.RawMessage `json:"chains"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&top); err != nil {
		return nil, err
	}
	chains := base.Chains
	base.Chains = nil
	if err := json.Unmarshal(raw, base); err != nil {
		return nil, err
	}
	base.Chains = chains
	for key, msg := range top.Chains {
		id, err := strconv.ParseUint(key, 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("chain id %q is not a positive integer", key)
		}
		ch := base.Chains[id]
		if ch == nil {
			ch = &Chain{}
			base.Chains[id] = ch
		}
		if err := json.Unmarshal(msg, ch); err != nil {
			return nil, fmt.Errorf("chain %d: %w", id, err)
		}
		ch.ID = id
	}
	return base, nil
}

func applyEnv(c *Config, getenv func(string) string) error {
	if v := getenv("CLAMM_LISTEN"); v != "" {
		c.Listen = v
	}
	if v := getenv("CLAMM_REDIS_URL"); v != "" {
		c.RedisURL = v
	}
	if v := getenv("CLAMM_REDIS_PREFIX"); v != "" {
		c.RedisPrefix = v
	}
	for name, dst := range map[string]*Duration{
		"CLAMM_UPSTREAM_TIMEOUT": &c.UpstreamTimeout,
		"CLAMM_REQUEST_TIMEOUT":  &c.RequestTimeout,
		"CLAMM_STRIKES_TTL":      &c.StrikesTTL,
		"CLAMM_HISTORY_TTL":      &c.HistoryTTL,
		"CLAMM_PREPARE_TTL":      &c.PrepareTTL,
		"CLAMM_STALE_GRACE":      &c.StaleGrace,
		"CLAMM_REDIS_TIMEOUT":    &c.RedisTimeout,
	} {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			*dst = Duration(d)
		}
	}
	if v := getenv("CLAMM_CACHE_MAX_ENTRIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("CLAMM_CACHE_MAX_ENTRIES: %w", err)
		}
		c.CacheMaxEntries = n
	}
	for name, dst := range map[string]*int{"CLAMM_RATE_BURST": &c.RateBurst, "CLAMM_MAX_FILLS": &c.MaxFills} {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			*dst = n
		}
	}
	if v := getenv("CLAMM_RATE_LIMIT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("CLAMM_RATE_LIMIT: %q is not a rate", v)
		}
		c.RateLimit = f
	}
	if v := getenv("CLAMM_MAX_LAG_BLOCKS"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("CLAMM_MAX_LAG_BLOCKS: %w", err)
		}
		c.MaxLagBlocks = n
	}
	if v := getenv("CLAMM_CORS_ORIGINS"); v != "" {
		c.CORSOrigins = nil
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				c.CORSOrigins = append(c.CORSOrigins, o)
			}
		}
	}
	if v := getenv("CLAMM_TRUST_FORWARDED_FOR"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("CLAMM_TRUST_FORWARDED_FOR: %w", err)
		}
		c.TrustXFF = b
	}
	if v := getenv("CLAMM_CACHE_MAX_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("CLAMM_CACHE_MAX_BYTES: %w", err)
		}
		c.CacheMaxBytes = n
	}
	// Chain URLs: the environment wins over file and defaults (LiveUpstreamsHint names them).
	for _, id := range envChainIDs(getenv, c) {
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
	}
	return nil
}

// envChainIDs lists the configured chains plus any named in CLAMM_CHAINS
// (comma-separated ids), which is how the environment alone adds a chain.
func envChainIDs(getenv func(string) string, c *Config) []uint64 {
	seen := map[uint64]bool{}
	for id := range c.Chains {
		seen[id] = true
	}
	for _, s := range strings.Split(getenv("CLAMM_CHAINS"), ",") {
		if id, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64); err == nil && id > 0 {
			seen[id] = true
		}
	}
	ids := make([]uint64, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// redisSchemes are CLAMM_REDIS_URL's: one primary, Sentinel, Cluster
// (internal/cache/redistier/url.go), each with or without TLS.
var redisSchemes = []string{"redis", "rediss", "redis+sentinel", "rediss+sentinel", "redis+cluster", "rediss+cluster"}

// maxRateLimit bounds CLAMM_RATE_LIMIT: beyond a million requests a second
// per client a limit limits nothing.
const maxRateLimit = 1e6

// Validate checks what would otherwise fail at request time.
func (c *Config) Validate() error {
	// Each setting is checked by itself, and the error names the variable
	// (and the file's key) so an operator knows what to fix: a value the
	// types accept can still turn a feature off or refuse every request
	// (CLAMM_RATE_LIMIT=Inf refused all, NaN disabled the limiter, a
	// negative CLAMM_STALE_GRACE disabled caching).
	for _, d := range []struct {
		name     string
		v        Duration
		positive bool
	}{
		{"CLAMM_UPSTREAM_TIMEOUT (upstreamTimeout)", c.UpstreamTimeout, true},
		{"CLAMM_REQUEST_TIMEOUT (requestTimeout)", c.RequestTimeout, true},
		{"CLAMM_STRIKES_TTL (strikesTTL)", c.StrikesTTL, false},
		{"CLAMM_HISTORY_TTL (historyTTL)", c.HistoryTTL, false},
		{"CLAMM_PREPARE_TTL (prepareTTL)", c.PrepareTTL, false},
		{"immutablesTTL", c.ImmutablesTTL, false},
		{"CLAMM_STALE_GRACE (staleGrace)", c.StaleGrace, false},
		{"CLAMM_REDIS_TIMEOUT (redisTimeout)", c.RedisTimeout, true},
	} {
		if d.v < 0 || (d.positive && d.v == 0) {
			return fmt.Errorf("%s: %s must be positive", d.name, time.Duration(d.v))
		}
	}
	if c.CacheMaxEntries <= 0 {
		return fmt.Errorf("CLAMM_CACHE_MAX_ENTRIES (cacheMaxEntries): %d must be positive", c.CacheMaxEntries)
	}
	if c.CacheMaxBytes <= 0 {
		return fmt.Errorf("CLAMM_CACHE_MAX_BYTES (cacheMaxBytes): %d must be positive", c.CacheMaxBytes)
	}
	if math.IsNaN(c.RateLimit) || math.IsInf(c.RateLimit, 0) || c.RateLimit < 0 || c.RateLimit > maxRateLimit {
		return fmt.Errorf("CLAMM_RATE_LIMIT (rateLimit): %v is not a rate between 0 (off) and %g requests a second", c.RateLimit, float64(maxRateLimit))
	}
	if c.RateBurst < 0 || (c.RateLimit > 0 && c.RateBurst == 0) {
		return fmt.Errorf("CLAMM_RATE_BURST (rateBurst): %d must be at least 1 with a rate limit", c.RateBurst)
	}
	if c.MaxFills < 0 {
		return fmt.Errorf("CLAMM_MAX_FILLS (maxFills): %d must be positive (0: the default)", c.MaxFills)
	}
	if c.RedisURL != "" {
		if p, err := url.Parse(c.RedisURL); err != nil || !slices.Contains(redisSchemes, p.Scheme) || p.Host == "" {
			return fmt.Errorf("redis URL %s is not a redis://, rediss://, redis+sentinel:// or redis+cluster:// URL", Redact(c.RedisURL))
		}
	}
	for id, ch := range c.Chains {
		ch.ID = id
		for _, u := range []string{ch.SubgraphURL, ch.RPCURL} {
			if u == "" {
				continue
			}
			if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") {
				return fmt.Errorf("chain %d: upstream URL %s is not an http(s) URL", id, Redact(u))
			}
		}
		for sid, s := range ch.Swappers {
			if s.Kind != "uniswap-v3" && s.Kind != "1inch" {
				return fmt.Errorf("chain %d swapper %s: unknown kind %q", id, sid, s.Kind)
			}
		}
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

// Redact keeps only the scheme and host of an upstream URL: providers put API
// keys in the path (…/v2/<key>), the query or the user info, so nothing after
// the host is safe to print.
func Redact(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "<redacted>"
	}
	out := u.Scheme + "://" + u.Host
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		out += "/…"
	}
	return out
}

// LiveUpstreamsHint tells a client how the operator gives the chains ids
// live upstreams, naming the real variables: the composition root adds it
// to NOT_RECORDED and to the refusal of a chain without upstreams, so the
// error vocabulary stays free of deployment. No ids: the variables' pattern.
func LiveUpstreamsHint(ids ...uint64) string {
	if len(ids) == 0 {
		return "to serve live data set CLAMM_CHAIN_{id}_SUBGRAPH_URL and CLAMM_CHAIN_{id}_RPC_URL of the chain (see docs/configuration.md)"
	}
	vars := make([]string, len(ids))
	for i, id := range ids {
		vars[i] = fmt.Sprintf("CLAMM_CHAIN_%d_SUBGRAPH_URL and CLAMM_CHAIN_%d_RPC_URL", id, id)
	}
	return "to serve live data set " + strings.Join(vars, ", ") + " (see docs/configuration.md)"
}
