// Package subgraphtest builds subgraph.Clients for tests. subgraph.New
// takes no bounds of its own (the served binary passes validated
// configuration), so tests that do not care take the gateway's: the
// default CLAMM_UPSTREAM_TIMEOUT and the upstream body bound.
package subgraphtest

import (
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// New is subgraph.New with a zero Timeout or MaxBytes in opts set to the
// gateway's defaults; an error fails the test.
func New(t testing.TB, url string, opts subgraph.Options) *subgraph.Client {
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
