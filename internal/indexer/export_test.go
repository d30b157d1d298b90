package indexer

import "time"

// SetCallRetries sets the pauses before an eth_call refused as a pruned
// node refuses is asked again, for the tests that refuse every block's
// first call (a history's priced events each ask slot0 at their block);
// the returned func puts the default back.
func SetCallRetries(pauses ...time.Duration) (restore func()) {
	old := callRetries
	callRetries = pauses
	return func() { callRetries = old }
}
