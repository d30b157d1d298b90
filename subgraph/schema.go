package subgraph

import _ "embed"

// Schema is the options subgraph's schema (schema.graphql, the file graph
// build compiles), embedded so that the Graph Node emulator
// (internal/graphnode) derives its query schema from the very text the
// mappings were built against.
//
//go:embed schema.graphql
var Schema string
