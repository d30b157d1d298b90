package pipeline

import (
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
)

// Serve answers GraphQL from the indexed store through the Graph Node
// emulator (internal/graphnode): the gateway's own documents, and any other
// query Graph Node would answer, over exactly what the mappings wrote, with
// _meta at the last indexed block.
func (ix *Indexer) Serve() *graphnodetest.Server {
	return &graphnodetest.Server{Store: ix.Store}
}
