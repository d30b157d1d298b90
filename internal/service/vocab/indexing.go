package vocab

// Indexing is where the gateway's own indexer of a chain stands, as Graph
// Node's indexing status API reports a deployment (synced, fatal error,
// chain head and latest block): readiness shows it and stays unready until
// it has reached the head. It is the use cases' own type, not the
// indexer's, so the use cases import nothing of the index: internal/app
// fills it from the indexer's status.
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
	// Stalled: indexing has not got past a failure for a while, Error
	// saying which: not ready, whatever the state.
	Stalled bool `json:"stalled,omitempty"`
	// StoreError is the index's last failed read (a damaged file, a disk
	// error): its queries fail, so it is not ready.
	StoreError string `json:"storeError,omitempty"`
}

// The states of Indexing.
const (
	IndexingStarting = "starting"
	IndexingBehind   = "indexing"
	IndexingSynced   = "synced"
	IndexingFailed   = "failed"
)
