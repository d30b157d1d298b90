package subgraph

import "embed"

// Build is the compiled subgraph as `npm run --prefix subgraph build` writes
// it (subgraph/build, committed and checked by CI against a fresh build):
// each network's manifest (build/subgraph.yaml for arbitrum-one,
// build/<network>/subgraph.yaml for the others), the compiled mappings
// and the ABIs each data source lists. The embedded indexer
// (internal/indexer) runs it, so the served binary needs no npm. graph
// build writes one wasm per mapping file and network, and the copies are
// byte for byte the same across networks (as the ABI copies are across
// data sources): the Go toolchain stores identical embedded files once, so
// the binary holds each distinct file once.
//
//go:embed build
var Build embed.FS

// ABIs are the contracts' ABIs the manifests list (subgraph/abis).
//
//go:embed abis/*.json
var ABIs embed.FS

// Networks is the registry of deployments (networks.json): per Graph Node
// network its chain id and the position managers, markets and handlers
// indexed from their start blocks.
//
//go:embed networks.json
var Networks []byte
