package graphnode_test

import (
	"math/big"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
)

// A mapping's store.get over a damaged entity gets the store's failure,
// not an absent entity it would create anew over the damage.
func TestMappingStoreGetReportsADamagedEntity(t *testing.T) {
	schema, err := graphnode.ParseSchema("type Pool @entity { id: ID! liquidity: BigInt! }")
	if err != nil {
		t.Fatal(err)
	}
	st := graphnode.NewStore(schema)
	e := graphnode.Entity{"id": {Kind: graphnode.KindString, Str: "p"}, "liquidity": {Kind: graphnode.KindBigInt, Big: big.NewInt(1)}}
	if err := st.Set("Pool", "p", e, 1); err != nil {
		t.Fatal(err)
	}
	graphnode.DamageForTest(st, "Pool", "p")
	if got, err := mapping.Memory(st).Get("Pool", "p"); err == nil || got != nil {
		t.Fatalf("store.get of a damaged entity: %v, %v; want an error", got, err)
	}
}
