package chain

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// A tick's fee growth is read where each DEX's ticks answer puts it:
// Uniswap V3's third and fourth words, Aerodrome Slipstream's fourth and
// fifth (its stakedLiquidityNet comes third); any other answer gives none.
func TestTickGrowthFollowsTheAnswersLayout(t *testing.T) {
	t.Parallel()
	answer := func(words int, fee0At int) []byte {
		b := make([]byte, 32*words)
		for i := range words {
			copy(b[32*i:], common.LeftPadBytes(big.NewInt(int64(100+i)).Bytes(), 32))
		}
		// a negative int128 before the fee growth, as liquidityNet and
		// stakedLiquidityNet often are: all ones in its high bytes
		for i := range 16 {
			b[32*(fee0At-1)+i] = 0xff
		}
		return b
	}
	for _, c := range []struct {
		name  string
		data  []byte
		want0 int64
	}{
		{"uniswap-v3", answer(contracts.TicksUniswapV3Words, 2), 102},
		{"slipstream", answer(contracts.TicksSlipstreamWords, 3), 103},
	} {
		got := tickGrowth([]Result{{OK: true, Data: c.data}, {OK: true, Data: c.data}})
		for i := range got {
			if got[i][0] == nil || got[i][0].Int64() != c.want0 || got[i][1].Int64() != c.want0+1 {
				t.Errorf("%s: tick %d growth %v, want %d and %d", c.name, i, got[i], c.want0, c.want0+1)
			}
		}
	}
	for _, words := range []int{7, 9, 11} {
		if got := tickGrowth([]Result{{OK: true, Data: make([]byte, 32*words)}, {OK: true, Data: make([]byte, 32*words)}}); got[0][0] != nil {
			t.Errorf("%d words: %v, want no growth", words, got)
		}
	}
}
