package clamm

import (
	"encoding/json"
	"math/big"
	"os"
	"testing"
)

// ShareVectors mirrors testdata/vectors/shares.json: states of handler
// ranges the test handler went through on the simulated EVM and what its
// own convertToAssets and convertToShares answered there
// (internal/evmtest/lptest's TestShareVectors writes and checks it).
type ShareVectors struct {
	States []ShareState `json:"states"`
}

// ShareState is one range at one block, with the getters' answers.
type ShareState struct {
	What                string        `json:"what"`
	TotalLiquidity      string        `json:"totalLiquidity"`
	TotalSupply         string        `json:"totalSupply"`
	DonatedLiquidity    string        `json:"donatedLiquidity"`
	LastDonation        uint64        `json:"lastDonation"`
	LockedBlockDuration uint64        `json:"lockedBlockDuration"`
	Block               uint64        `json:"block"`
	ToAssets            []SharePair   `json:"toAssets"`
	ToShares            []SharePair   `json:"toShares"`
	Within              []WithinCheck `json:"within"`
}

// SharePair is one conversion: shares and the liquidity (assets) they
// convert to or from.
type SharePair struct {
	Shares string `json:"shares"`
	Assets string `json:"assets"`
}

// WithinCheck is SharesWithin(liquidity) and the handler's
// convertToAssets of those shares and of one share more at the state's
// block.
type WithinCheck struct {
	Liquidity    string `json:"liquidity"`
	Shares       string `json:"shares"`
	Assets       string `json:"assets"`
	AssetsOfNext string `json:"assetsOfNext"`
}

func TestShareConversionsMatchTheHandler(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/vectors/shares.json")
	if err != nil {
		t.Fatal(err)
	}
	var v ShareVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.States) < 8 {
		t.Fatalf("%d states in shares.json", len(v.States))
	}
	locked := 0
	for _, s := range v.States {
		r := ShareRange{TotalLiquidity: bi(t, s.TotalLiquidity), TotalSupply: bi(t, s.TotalSupply), DonatedLiquidity: bi(t, s.DonatedLiquidity),
			LastDonation: s.LastDonation, LockedBlockDuration: s.LockedBlockDuration}
		if r.DonationLocked(s.Block).Sign() > 0 {
			locked++
		}
		for _, p := range s.ToAssets {
			if got := r.ConvertToAssets(bi(t, p.Shares), s.Block); got.String() != p.Assets {
				t.Errorf("%s: convertToAssets(%s) = %s, the handler %s", s.What, p.Shares, got, p.Assets)
			}
		}
		for _, p := range s.ToShares {
			if got := r.ConvertToShares(bi(t, p.Assets), s.Block); got.String() != p.Shares {
				t.Errorf("%s: convertToShares(%s) = %s, the handler %s", s.What, p.Assets, got, p.Shares)
			}
		}
		for _, w := range s.Within {
			l := bi(t, w.Liquidity)
			if got := r.SharesWithin(l); got.String() != w.Shares {
				t.Errorf("%s: SharesWithin(%s) = %s, the vector %s", s.What, w.Liquidity, got, w.Shares)
			}
			// The handler's own worth of those shares fits; with no lock,
			// one share more does not (the bound is the most).
			if bi(t, w.Assets).Cmp(l) > 0 {
				t.Errorf("%s: the handler converts SharesWithin(%s) = %s shares to %s", s.What, w.Liquidity, w.Shares, w.Assets)
			}
			if r.DonationLocked(s.Block).Sign() == 0 && bi(t, w.AssetsOfNext).Cmp(l) <= 0 {
				t.Errorf("%s: SharesWithin(%s) = %s is not the most: one more converts to %s", s.What, w.Liquidity, w.Shares, w.AssetsOfNext)
			}
		}
	}
	if locked == 0 {
		t.Error("no state with a donation still locked")
	}
}

func TestShareConversionsEdges(t *testing.T) {
	empty := ShareRange{TotalLiquidity: new(big.Int), TotalSupply: new(big.Int)}
	if empty.ConvertToAssets(big.NewInt(5), 1).Sign() != 0 || empty.SharesWithin(big.NewInt(5)).Sign() != 0 {
		t.Error("a range without supply converts to something")
	}
	r := ShareRange{TotalLiquidity: big.NewInt(1000), TotalSupply: big.NewInt(1000), DonatedLiquidity: big.NewInt(100), LastDonation: 10, LockedBlockDuration: 100}
	for _, c := range []struct {
		block  uint64
		locked int64
	}{{9, 100}, {10, 100}, {11, 99}, {60, 50}, {109, 1}, {110, 0}, {500, 0}} {
		if got := r.DonationLocked(c.block); got.Int64() != c.locked {
			t.Errorf("locked at %d: %s, want %d", c.block, got, c.locked)
		}
	}
	// The whole supply is worth totalLiquidity + 1, one unit more than the range has.
	if got := r.ConvertToAssets(big.NewInt(1000), 500); got.Int64() != 1001 {
		t.Errorf("the whole supply: %s", got)
	}
	if got := r.SharesWithin(big.NewInt(1000)); got.Int64() != 999 {
		t.Errorf("SharesWithin(T): %s", got)
	}
}
