package config

import (
	"regexp"
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

// chainVariable is the shape of the per-chain variables (otherVariables'
// CLAMM_CHAIN_<id>_...).
var chainVariable = regexp.MustCompile("^" + prefix + `CHAIN_([0-9]+)_(SUBGRAPH_URL|RPC_URL|MODE|INDEX_SOURCES)$`)

// UnknownVariables returns the names among environ ("NAME=value" entries,
// as os.Environ gives them) that start with CLAMM_ but set nothing: not a
// setting, not a per-chain variable of a chain the configuration serves
// (its id in the decimal form the loader asks: CLAMM_CHAIN_10_RPC_URL
// without CLAMM_CHAINS=10, or CLAMM_CHAIN_042161_..., is read by nobody),
// not a configured swapper's API key variable. A misspelt variable is
// otherwise silently ignored, and one that matters can change how a chain
// is served (a subgraph URL misspelt beside an RPC URL leaves the chain
// indexed by the gateway itself).
// CLAMM_TEST_ variables are the project's tests' own and never reported.
func (c *Config) UnknownVariables(environ []string) []string {
	known := map[string]bool{}
	for _, s := range settings {
		known[s.env] = true
	}
	for _, v := range slices.Concat(otherVariables.first, otherVariables.last) {
		known[v.env] = true
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
		if !strings.HasPrefix(name, prefix) || strings.HasPrefix(name, testPrefix) || known[name] || c.readsChainVariable(name) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// readsChainVariable says whether name is a per-chain variable the loader
// reads: of a configured chain (applyChainEnv asks those of c.Chains,
// CLAMM_CHAINS' included), its id spelt as strconv spells it.
func (c *Config) readsChainVariable(name string) bool {
	m := chainVariable.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	id, err := strconv.ParseUint(m[1], 10, 64)
	return err == nil && strconv.FormatUint(id, 10) == m[1] && c.Chains[id] != nil
}
