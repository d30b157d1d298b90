package config

import (
	"slices"
	"strconv"
	"strings"
)

// The prefixes are spelt in two pieces so that TestEveryVariableIsInTheTable,
// which reads every CLAMM_ name in the code, does not take them for
// variables.
const (
	prefix     = "CLAMM_"
	testPrefix = prefix + "TEST_"
)

// UnknownVariables returns the names among environ ("NAME=value" entries,
// as os.Environ gives them) that start with CLAMM_ but set nothing: not a
// setting, not a per-chain variable of a chain the configuration serves
// (the documented `<id>` names with each configured chain's id, as the
// loader asks them: CLAMM_CHAIN_10_RPC_URL without CLAMM_CHAINS=10, or
// CLAMM_CHAIN_042161_..., is read by nobody), not a configured swapper's
// API key variable. A misspelt variable is otherwise silently ignored, and
// one that matters can change how a chain is served (a subgraph URL
// misspelt beside an RPC URL leaves the chain indexed by the gateway
// itself). CLAMM_TEST_ variables are the project's tests' own and never
// reported.
func (c *Config) UnknownVariables(environ []string) []string {
	known := map[string]bool{}
	for _, s := range settings {
		known[s.env] = true
	}
	for _, v := range slices.Concat(otherVariables.first, otherVariables.last) {
		if !strings.Contains(v.env, "<id>") {
			known[v.env] = true
			continue
		}
		for id := range c.Chains {
			known[strings.ReplaceAll(v.env, "<id>", strconv.FormatUint(id, 10))] = true
		}
	}
	for _, ch := range c.Chains {
		for _, s := range ch.Swappers {
			if s != nil && s.APIKeyEnv != "" {
				known[s.APIKeyEnv] = true
			}
		}
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, prefix) && !strings.HasPrefix(name, testPrefix) && !known[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// UnknownHint says what would make an unknown variable (UnknownVariables)
// set something. A per-chain variable of a chain the configuration does
// not list (CLAMM_CHAIN_1337_RPC_URL alone) is read only once the chain
// is in CLAMM_CHAINS: the warning says so, naming the id, since a user
// who set only the RPC URL of a local chain saw the chain silently
// unserved and no word of the variable that was missing.
func UnknownHint(name string) string {
	const misspelt = "misspelt? docs/configuration.md lists every one"
	rest, ok := strings.CutPrefix(name, prefix+"CHAIN_")
	id, suffix, cut := strings.Cut(rest, "_")
	n, err := strconv.ParseUint(id, 10, 64)
	if !ok || !cut || err != nil || n == 0 || strconv.FormatUint(n, 10) != id {
		return misspelt
	}
	for _, v := range otherVariables.first {
		if v.env == prefix+"CHAIN_<id>_"+suffix {
			return "chain " + id + " is not configured: add it to CLAMM_CHAINS (CLAMM_CHAINS=" + id + ") to serve it from the environment"
		}
	}
	return misspelt
}
