package config

import (
	"fmt"
	"strings"
)

// The ways a chain is served (Chain.Mode, CLAMM_CHAIN_<id>_MODE). Each
// needs its own settings, and a chain given some but not all of them is
// refused at start (Chain.ServeMode): half a live configuration must not
// quietly fall back to the demo, nor to the other live mode.
const (
	// ModeDemo serves the embedded demo of the chain: no upstream URL, the
	// demo on (CLAMM_DEMO) and recordings for the chain.
	ModeDemo = "demo"
	// ModeGraphNode is live through a Graph Node: the subgraph's query URL
	// and an RPC URL of the same chain.
	ModeGraphNode = "graph-node"
	// ModeIndexed is live through the gateway's own index of the chain:
	// an RPC URL (an archive node), and no subgraph URL or the subgraph
	// URL `embedded`.
	ModeIndexed = "indexed"
	// ModeNone is a chain with no setting of any mode (and no demo): it is
	// listed, and its requests are refused naming the variables.
	ModeNone = "not served"
)

// Modes are the values CLAMM_CHAIN_<id>_MODE accepts.
var Modes = []string{ModeDemo, ModeGraphNode, ModeIndexed}

// ServeMode applies the rule that decides how the chain is served, given
// whether the demo can serve it (the demo is on and has recordings for
// the chain). An explicit Mode is taken as stated and its needs checked;
// without one the mode follows from what is set: nothing, the demo (or
// not served); both URLs, Graph Node; only the RPC URL (or the subgraph
// URL `embedded`), its own index. Any other combination, and any mode
// missing one of its settings, is an error naming the missing variable.
func (c *Chain) ServeMode(demo bool) (string, error) {
	v := c.vars()
	sub := c.SubgraphURL != "" && c.SubgraphURL != Embedded
	mode := c.Mode
	if mode == "" {
		mode = c.inferMode(sub, demo)
	}
	var missing []string
	switch mode {
	case ModeGraphNode:
		if !sub {
			missing = append(missing, v.subgraph+" (the Graph Node's query URL)")
		}
		if c.RPCURL == "" {
			missing = append(missing, v.rpc)
		}
		if len(c.IndexSources) > 0 {
			return "", fmt.Errorf("chain %d: %s applies to the %s mode only; the %s mode reads the Graph Node", c.ID, v.sources, ModeIndexed, ModeGraphNode)
		}
	case ModeIndexed:
		if c.RPCURL == "" {
			missing = append(missing, v.rpc+" (an archive node to index from)")
		}
		if sub {
			return "", fmt.Errorf("chain %d: the %s mode indexes the chain itself: unset %s or set it to %s", c.ID, ModeIndexed, v.subgraph, Embedded)
		}
	case ModeDemo:
		if c.SubgraphURL != "" || c.RPCURL != "" || len(c.IndexSources) > 0 {
			return "", fmt.Errorf("chain %d: the %s mode serves recordings and takes no upstream: unset %s, %s and %s, or set %s to %s or %s", c.ID, ModeDemo, v.subgraph, v.rpc, v.sources, v.mode, ModeGraphNode, ModeIndexed)
		}
		if !demo {
			missing = append(missing, "CLAMM_DEMO=on with recordings of the chain (the demo holds chain(s) with recordings only)")
		}
	case ModeNone:
		return ModeNone, nil
	default:
		return "", fmt.Errorf("chain %d: %s=%q is not one of %s", c.ID, v.mode, c.Mode, strings.Join(Modes, ", "))
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("chain %d: the %s mode needs %s, which is not set", c.ID, mode, strings.Join(missing, " and "))
	}
	return mode, nil
}

// inferMode is the mode a chain without an explicit Mode gets from what
// is set. Half of one mode's settings infers that mode, so ServeMode
// then names the other half rather than serving something else.
func (c *Chain) inferMode(sub, demo bool) string {
	switch {
	case sub:
		return ModeGraphNode // with or without the RPC URL: the subgraph URL says Graph Node
	case c.RPCURL != "" || c.SubgraphURL == Embedded || len(c.IndexSources) > 0:
		return ModeIndexed
	case demo:
		return ModeDemo
	}
	return ModeNone
}

// chainVars are the variables of one chain's settings, for messages.
type chainVars struct{ mode, subgraph, rpc, sources string }

func (c *Chain) vars() chainVars {
	return chainVars{mode: fmt.Sprintf("CLAMM_CHAIN_%d_MODE", c.ID), subgraph: fmt.Sprintf("CLAMM_CHAIN_%d_SUBGRAPH_URL", c.ID),
		rpc: fmt.Sprintf("CLAMM_CHAIN_%d_RPC_URL", c.ID), sources: fmt.Sprintf("CLAMM_CHAIN_%d_INDEX_SOURCES", c.ID)}
}
