package market

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// A superseded market is deprecated in the hosted list only when its
// successor is listed on the chain too: the demo lists Arbitrum's 2024
// WETH/USDC market (0x501B, superseded by 0xcd69) alone, and its hosted
// clients, which drop deprecated markets, would show no market. A V1
// market is deprecated either way; a market nothing supersedes is not.
func TestHostedDeprecatedOnlyWithTheSuccessorListed(t *testing.T) {
	old := common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744")
	next := common.HexToAddress("0xcd697b919aa000378fe429b47eb0ff0d17d3d435")
	v1 := common.HexToAddress("0x764fA09d0B3de61EeD242099BD9352C1C61D3d27")
	cfg := config.Default().Chains[42161]
	if got, ok := cfg.SupersededBy(old); !ok || got != next {
		t.Fatalf("the defaults' successor of %s: %s, %v; want %s", old.Hex(), got.Hex(), ok, next.Hex())
	}
	up := &vocab.Upstreams{Config: cfg}
	for _, c := range []struct {
		name    string
		listed  []common.Address
		market  common.Address
		version string
		want    bool
	}{
		{"superseded, successor listed", []common.Address{old, next}, old, "V2", true},
		{"superseded, alone (the demo)", []common.Address{old}, old, "V2", false},
		{"the successor", []common.Address{old, next}, next, "V2", false},
		{"V1", []common.Address{v1}, v1, "V1", true},
	} {
		h := hostedChain{up: up, id: 42161, listed: map[common.Address]bool{}}
		for _, a := range c.listed {
			h.listed[a] = true
		}
		if got := h.deprecated(OptionMarket{Address: c.market.Hex(), Version: c.version}); got != c.want {
			t.Errorf("%s: deprecated %v, want %v", c.name, got, c.want)
		}
	}
}
