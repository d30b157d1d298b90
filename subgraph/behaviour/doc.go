// Package behaviour holds the subgraph's behaviour tests: what the
// compiled mappings of subgraph/src (the embedded subgraph/build, as the
// indexer and Graph Node run them) write for each event a contract logs.
// Markets, handlers' ranges and their liquidity, options and their legs,
// purchases, exercises and the swappers decoded from their transactions,
// the pools a market approves, the position managers' discovery of
// contracts, and the daily records, each checked against values stated
// in the test from the contracts' source.
//
// The tests feed real ABI-encoded events through
// internal/graphnode/mapping/mappingtest; the runtime that executes the
// mappings (its heap, its reset, its host functions, the manifest) is
// tested beside it, in internal/graphnode/mapping. The package has no code
// of its own: it is a folder beside subgraph/src so that a change to the
// mappings and the test of what it changes sit together.
package behaviour
