// Package readertest builds chain.Readers for tests. chain.NewReader takes
// no defaults of its own (the served binary passes validated
// configuration), so tests take the configuration's defaults from here:
// the same values the gateway serves with, stated once in internal/config.
// It is a package of its own because chaintest is imported by chain's
// internal tests and so cannot import chain.
package readertest

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
)

// Options are chain.Options with Multicall3 at multicall and the durations
// of the default configuration (CLAMM_UPSTREAM_TIMEOUT,
// CLAMM_IMMUTABLES_TTL).
func Options(multicall common.Address) chain.Options {
	d := config.Default()
	return chain.Options{Multicall3: multicall, CallTimeout: d.UpstreamTimeout.D(), ImmutablesTTL: d.ImmutablesTTL.D()}
}

// NewReader is chain.NewReader over c with Options(multicall); an error
// fails the test.
func NewReader(t testing.TB, c chain.Caller, multicall common.Address) *chain.Reader {
	t.Helper()
	r, err := chain.NewReader(c, Options(multicall))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
