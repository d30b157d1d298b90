package config

import (
	"slices"
	"strings"
	"testing"
)

// Every variable the gateway reads is known; a misspelt one, one of
// another chain shape, of a chain not served or with its id spelt
// otherwise, or of an unconfigured swapper key is reported, once, sorted;
// CLAMM_TEST_ and other prefixes are not.
func TestUnknownVariables(t *testing.T) {
	c := Default()
	env := []string{"PATH=/bin", "CLAMM_LISTEN=:1", "CLAMM_CONFIG=x", "CLAMM_CHAINS=5", "CLAMM_CHAIN_42161_RPC_URL=http://n",
		"CLAMM_CHAIN_42161_SUBGRAPHURL=http://g", "CLAMM_CHAIN_42161_SUBGRAPH_URL=http://g", "CLAMM_CHAIN_X_MODE=demo",
		"CLAMM_CHAIN_10_RPC_URL=http://o", "CLAMM_CHAIN_042161_RPC_URL=http://n",
		"CLAMM_STRIKE_TTL=1s", "CLAMM_STRIKE_TTL=2s", "CLAMM_TEST_REQUIRE_ALL=1", "CLAMMY=1", "CLAMM_1INCH_API_KEY=k"}
	for _, s := range settings {
		env = append(env, s.env+"=1")
	}
	got := c.UnknownVariables(env)
	want := []string{"CLAMM_CHAIN_042161_RPC_URL", "CLAMM_CHAIN_10_RPC_URL", "CLAMM_CHAIN_42161_SUBGRAPHURL", "CLAMM_CHAIN_X_MODE", "CLAMM_STRIKE_TTL"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A swapper's key variable is known by the name its configuration
	// gives, and only then.
	if got := c.UnknownVariables([]string{"CLAMM_MY_KEY=k"}); !slices.Equal(got, []string{"CLAMM_MY_KEY"}) {
		t.Fatalf("an unconfigured key variable: %v", got)
	}
	for _, ch := range c.Chains {
		for _, s := range ch.Swappers {
			s.APIKeyEnv = "CLAMM_MY_KEY"
		}
	}
	if got := c.UnknownVariables([]string{"CLAMM_MY_KEY=k"}); len(got) != 0 {
		t.Fatalf("a configured key variable reported: %v", got)
	}
}

// A per-chain variable of a chain not listed names CLAMM_CHAINS with the
// chain's id; anything else is taken for a misspelling.
func TestUnknownHintNamesCLAMMChains(t *testing.T) {
	for name, want := range map[string]string{
		"CLAMM_CHAIN_1337_RPC_URL":     "add it to CLAMM_CHAINS (CLAMM_CHAINS=1337)",
		"CLAMM_CHAIN_10_INDEX_SOURCES": "CLAMM_CHAINS=10",
		"CLAMM_CHAIN_042161_RPC_URL":   "misspelt?",
		"CLAMM_CHAIN_1337_RPCURL":      "misspelt?",
		"CLAMM_STRIKE_TTL":             "misspelt?",
		"CLAMM_CHAIN_X_MODE":           "misspelt?",
	} {
		if got := UnknownHint(name); !strings.Contains(got, want) {
			t.Errorf("UnknownHint(%s) = %q, want it to contain %q", name, got, want)
		}
	}
}
