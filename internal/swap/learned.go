package swap

import (
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Learned builds the quoters of swapper contracts the gateway learned
// from the chain's own exercises (the subgraph's Swapper entities), for
// one chain: what the configuration names for every swapper of a kind
// (the RPC node, the DEX quoter registry), the contract's address from
// the chain.
type Learned struct {
	RPC         BatchCaller
	Timeout     time.Duration
	QuoterByDex map[string]common.Address
}

// For is the quoter of the learned swapper at addr whose kind is the
// subgraph's (subgraph.SwapperKind*): a swapRouter swapper (it answers
// sr()) is quoted and built as a SwapRouterSwapper, swapData
// abi.encode(uint24 fee, uint256 minOut); a SwapRouter02Swapper (a tick
// spacing in the fee's place) answers sr() too, and its legs then revert
// in the exercise's simulation and are left out with the reason, never
// handed out. false for a kind this gateway cannot build swapData for (a
// 1inch swapper needs an API key; an unknown contract, its swapData
// format).
func (l *Learned) For(kind string, addr common.Address) (Quoter, bool) {
	if l == nil || kind != "swapRouter" {
		return nil, false
	}
	return &UniV3{RPC: l.RPC, QuoterByDex: l.QuoterByDex, Timeout: l.Timeout, Contracts: Contracts{Address: addr}}, true
}
