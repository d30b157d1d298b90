package replay

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// RecordChains puts recorders in front of each chain's upstreams (nil
// transports: the network). Save writes dir/<chainId>/{subgraph.json,
// quote.json, rpc.json}, the formats the demo and the tests replay; until
// then a failed recording leaves no cassette behind. placeholder gives the
// subgraph URL written for a chain: the real one may hold a key.
func RecordChains(dir string, chains map[uint64]upstream.Transports, placeholder func(chainID uint64) string) (recorders map[uint64]upstream.Transports, save func() error, err error) {
	recorders = map[uint64]upstream.Transports{}
	var stops []func() error
	for id, tr := range chains {
		out := filepath.Join(dir, fmt.Sprint(id))
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, nil, err
		}
		for _, f := range []string{"subgraph.json", "quote.json", "rpc.json"} {
			_ = os.Remove(filepath.Join(out, f)) // a failed recording leaves no stale cassette behind
		}
		gql, err := GraphQLRecorder(filepath.Join(out, "subgraph.json"), orNet(tr.Subgraph), placeholder(id))
		if err != nil {
			return nil, nil, err
		}
		quote, err := HTTPRecorder(filepath.Join(out, "quote.json"), orNet(tr.Quote))
		if err != nil {
			return nil, nil, err
		}
		rpcRec := &RPCRecorder{Real: orNet(tr.RPC)}
		rpcOut := filepath.Join(out, "rpc.json")
		stops = append(stops, gql.Stop, quote.Stop, func() error { return rpcRec.Save(rpcOut) })
		recorders[id] = upstream.Transports{Subgraph: gql, RPC: rpcRec, Quote: quote}
	}
	save = func() error {
		for _, stop := range stops {
			if err := stop(); err != nil {
				return err
			}
		}
		return nil
	}
	return recorders, save, nil
}

func orNet(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		return http.DefaultTransport
	}
	return rt
}
