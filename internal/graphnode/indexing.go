package graphnode

// Indexing is where an indexer of a subgraph stands, as Graph Node's
// indexing status API reports a deployment (synced, health, fatal error,
// chain head and latest block): the embedded indexer (internal/indexer)
// gives it, /readyz shows it.
type Indexing struct {
	ChainID uint64 `json:"chainId"`
	// State is "starting", "indexing" (behind the head), "synced" (it has
	// reached the head and follows it) or "failed" (stopped: Error says
	// why).
	State      string `json:"state"`
	StartBlock uint64 `json:"startBlock"`
	// Block is the last block indexed; ChainHead the node's head when last
	// asked.
	Block     uint64 `json:"block"`
	ChainHead uint64 `json:"chainHead"`
	// Error is why indexing stopped, or the last transient failure it is
	// retrying past.
	Error string `json:"error,omitempty"`
	// Stalled: indexing has not got past a failure for a while (the
	// indexer's StallAfter), Error saying which: not ready, whatever the
	// state.
	Stalled bool `json:"stalled,omitempty"`
	// StoreError is the store's last failed read (a damaged file, a disk
	// error): queries of the index fail, so it is not ready. A damaged
	// file's stays until a restart (which refuses the file).
	StoreError string `json:"storeError,omitempty"`
}

// The states of Indexing.
const (
	IndexingStarting = "starting"
	IndexingBehind   = "indexing"
	IndexingSynced   = "synced"
	IndexingFailed   = "failed"
)
