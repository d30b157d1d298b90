package block

// Strategy is how an answer's block is chosen when the client asks for
// none. Every endpoint states its own in the gateway's endpoint table,
// beside its TTL: the choice follows from which upstream the answer reads
// first. A block the client asks for (the `block` parameter) is the
// answer's block whatever the strategy. The zero Strategy states nothing,
// and no endpoint may have it.
type Strategy struct {
	kind  strategyKind
	stale Stale
}

type strategyKind uint8

const (
	unstated strategyKind = iota
	subgraphFirst
	indexedHead
	chainHead
)

// Stale names which bound of HeadAges an IndexedHead answer is under: the
// one derived from the TTL its answers are cached for.
type Stale uint8

const (
	// StaleStrikes: strikes chains, options chains and statistics
	// (cached for CLAMM_STRIKES_TTL).
	StaleStrikes Stale = iota
	// StaleQuotes: purchase quotes and prepared purchases (cached for
	// CLAMM_PREPARE_TTL).
	StaleQuotes
)

var (
	// SubgraphFirst is for answers whose first read is a subgraph page
	// (histories, positions, option markets, the liquidity provider's
	// reads and prepares): that page resolves the block from `_meta` in
	// the same document, with no round trip of its own, and chain reads
	// wait for it rather than pick the chain's head, which the subgraph
	// may not have indexed.
	SubgraphFirst = Strategy{kind: subgraphFirst}
	// ChainHead is for answers that read the chain only (prepared
	// exercises): they run at the head, whose header the first read
	// fetches in the same round trip, so the block the simulation ran at
	// is the block the answer names.
	ChainHead = Strategy{kind: chainHead}
)

// IndexedHead is for answers that must read the chain before the subgraph
// (the strikes chain and what is built on it): the block is the
// subgraph's indexed head as last seen, taken with no round trip while it
// is younger than stale's bound, else read from `_meta` first.
func IndexedHead(stale Stale) Strategy { return Strategy{kind: indexedHead, stale: stale} }

// Stated reports whether s is one of the strategies above, not the zero
// value.
func (s Strategy) Stated() bool { return s.kind != unstated }
