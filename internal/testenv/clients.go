// Package testenv is the home of test support: the stated market scenarios
// that feed the fakes (scenario), the per-test prerequisite checks
// (prereq), polling with a deadline (eventually), and here the gateway's
// clients built with the configuration's defaults. Fakes of one upstream
// stay beside the package they fake (chaintest, graphnodetest, swaptest,
// redistest); the EVM harnesses are under internal/evmtest. The served
// binary links none of it.
package testenv

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The constructors take no defaults of their own (the served binary passes
// validated configuration): tests pass the default configuration's, the
// values the gateway serves with, stated once in internal/config.

// NewReader is chain.NewReader over c with Multicall3 at multicall and the
// default CLAMM_UPSTREAM_TIMEOUT and CLAMM_IMMUTABLES_TTL; an error fails
// the test.
func NewReader(t testing.TB, c chain.Caller, multicall common.Address) *chain.Reader {
	t.Helper()
	d := config.Default()
	r, err := chain.NewReader(c, chain.Options{Multicall3: multicall, CallTimeout: d.UpstreamTimeout.D(), ImmutablesTTL: d.ImmutablesTTL.D()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// NewSubgraph is subgraph.New with a zero Timeout or MaxBytes in opts set
// to the default CLAMM_UPSTREAM_TIMEOUT and the upstream body bound; an
// error fails the test.
func NewSubgraph(t testing.TB, url string, opts subgraph.Options) *subgraph.Client {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = config.Default().UpstreamTimeout.D()
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = upstream.DefaultMaxBody
	}
	c, err := subgraph.New(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
