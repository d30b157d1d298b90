package mappinghosttest

import "github.com/clamm-gateway/clamm-gateway/internal/graphnode"

// The store's value model is the Graph Node emulator's: one Go model of the
// entities for the mappings, the emulator, the tests and the demo.
type (
	Kind   = graphnode.Kind
	Value  = graphnode.Value
	Entity = graphnode.Entity
)

// The kinds of stored values, numbered as Graph Node's StoreValueKind.
const (
	KindString     = graphnode.KindString
	KindInt        = graphnode.KindInt
	KindBigDecimal = graphnode.KindBigDecimal
	KindBool       = graphnode.KindBool
	KindArray      = graphnode.KindArray
	KindNull       = graphnode.KindNull
	KindBytes      = graphnode.KindBytes
	KindBigInt     = graphnode.KindBigInt
	KindInt8       = graphnode.KindInt8
	KindTimestamp  = graphnode.KindTimestamp
)
