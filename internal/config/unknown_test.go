package config

import (
	"slices"
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
