package lptest

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/big"
	"os"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors/shares.json from the test handler's answers")

const shareVectorsFile = "../../../testdata/vectors/shares.json"

// shareState is one entry of shares.json (internal/clamm reads it).
type shareState struct {
	What                string        `json:"what"`
	TotalLiquidity      string        `json:"totalLiquidity"`
	TotalSupply         string        `json:"totalSupply"`
	DonatedLiquidity    string        `json:"donatedLiquidity"`
	LastDonation        uint64        `json:"lastDonation"`
	LockedBlockDuration uint64        `json:"lockedBlockDuration"`
	Block               uint64        `json:"block"`
	ToAssets            []sharePair   `json:"toAssets"`
	ToShares            []sharePair   `json:"toShares"`
	Within              []withinCheck `json:"within"`
}

type sharePair struct {
	Shares string `json:"shares"`
	Assets string `json:"assets"`
}

type withinCheck struct {
	Liquidity    string `json:"liquidity"`
	Shares       string `json:"shares"`
	Assets       string `json:"assets"`
	AssetsOfNext string `json:"assetsOfNext"`
}

// shareRecorder asks the test handler's own getters about one range at
// the chain's latest block.
type shareRecorder struct {
	t      *testing.T
	p      *pt.Protocol
	r      pt.Range
	id     *big.Int
	states []shareState
}

func (s *shareRecorder) assets(shares *big.Int) *big.Int {
	return s.p.Chain.Call(s.p.Handler, pt.HandlerV2.ABI, "convertToAssets", shares, s.id)[0].(*big.Int)
}

// snap records the range's state, the handler's conversions of a spread
// of amounts, and SharesWithin of a few liquidities with the handler's
// worth of those shares and of one share more.
func (s *shareRecorder) snap(what string) {
	s.t.Helper()
	info := s.p.RangeInfo(s.r)
	st := shareState{What: what, TotalLiquidity: info.TotalLiquidity.String(), TotalSupply: info.TotalSupply.String(),
		DonatedLiquidity: info.DonatedLiquidity.String(), LastDonation: info.LastDonation, Block: s.p.Chain.BlockNumber(),
		LockedBlockDuration: s.p.Chain.Call(s.p.Handler, pt.HandlerV2.ABI, "lockedBlockDuration")[0].(uint64)}
	frac := func(x *big.Int, n int64) *big.Int { return new(big.Int).Div(x, big.NewInt(n)) }
	S, T := info.TotalSupply, info.TotalLiquidity
	for _, sh := range []*big.Int{big.NewInt(1), big.NewInt(2), big.NewInt(3), frac(S, 7), frac(S, 3), new(big.Int).Sub(S, big.NewInt(1)), S} {
		st.ToAssets = append(st.ToAssets, sharePair{Shares: sh.String(), Assets: s.assets(sh).String()})
	}
	for _, a := range []*big.Int{big.NewInt(1), big.NewInt(2), frac(T, 5), frac(T, 3), T, new(big.Int).Add(T, big.NewInt(1))} {
		sh := s.p.Chain.Call(s.p.Handler, pt.HandlerV2.ABI, "convertToShares", a, s.id)[0].(*big.Int)
		st.ToShares = append(st.ToShares, sharePair{Shares: sh.String(), Assets: a.String()})
	}
	r := clamm.ShareRange{TotalLiquidity: T, TotalSupply: S, DonatedLiquidity: info.DonatedLiquidity, LastDonation: info.LastDonation, LockedBlockDuration: st.LockedBlockDuration}
	for _, l := range []*big.Int{big.NewInt(1), new(big.Int).Sub(T, info.LiquidityUsed), frac(T, 2), T} {
		w := r.SharesWithin(l)
		st.Within = append(st.Within, withinCheck{Liquidity: l.String(), Shares: w.String(), Assets: s.assets(w).String(),
			AssetsOfNext: s.assets(new(big.Int).Add(w, big.NewInt(1))).String()})
	}
	s.states = append(s.states, st)
}

// TestShareVectors takes one range of the test handler through the states
// its share conversions depend on (supply equal to liquidity, premium
// donations locked and releasing block by block, a deposit and a second
// donation while one is locked, a shorter lock, burns) and records what
// its own convertToAssets and convertToShares answer there. The committed
// testdata/vectors/shares.json must be exactly that (-update rewrites
// it); internal/clamm checks its share maths against the file, so that
// test needs no EVM.
func TestShareVectors(t *testing.T) {
	s := deploy(t)
	p := s.p
	lo := (s.tick/10)*10 + 100
	rec := &shareRecorder{t: t, p: p, r: pt.Range{TickLower: lo, TickUpper: lo + 10}}
	rec.id = p.TokenID(rec.r)
	lp, lp2, buyer := p.Users[0], p.Users[3], p.Users[1]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	deposit := func(a *pt.Account, l *big.Int) {
		_, _, err := p.Deposit(a, rec.r, l)
		must(err)
	}
	buy := func(l *big.Int) {
		_, _, err := p.Buy(buyer, pt.Option{IsCall: true, TickLower: rec.r.TickLower, TickUpper: rec.r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: rec.r, Liquidity: l}}})
		must(err)
	}
	commit := func(n int) {
		for range n {
			p.Chain.Commit()
		}
	}
	deposit(lp, e18(1))
	rec.snap("first deposit: supply equals liquidity")
	deposit(lp2, big.NewInt(1_234_567_891_234_567))
	rec.snap("second deposit")
	buy(new(big.Int).Div(e18(1), big.NewInt(4)))
	rec.snap("premium donated, all locked")
	commit(1)
	rec.snap("one block of the lock released")
	commit(36)
	rec.snap("37 blocks released")
	deposit(lp2, big.NewInt(777_777_777_777_777_777))
	rec.snap("deposit while locked")
	buy(big.NewInt(3_333_333_333_333_333))
	rec.snap("a second donation while the first is locked")
	commit(50)
	rec.snap("both releasing")
	commit(100)
	rec.snap("lock over")
	p.Chain.MustSend(p.Owner, p.Handler, pt.HandlerV2.ABI, "updateLockedBlockDurationAndReserveCooldown", uint64(7), uint64(6*3600))
	buy(big.NewInt(5_555_555_555_555_555))
	rec.snap("a donation under a 7-block lock")
	commit(3)
	rec.snap("3 of 7 blocks released")
	shares := s.shares(p.Handler, lp.Addr, rec.id)
	_, err := p.Withdraw(lp, rec.r, new(big.Int).Div(shares, big.NewInt(3)))
	must(err)
	rec.snap("a burn")
	commit(10)
	rec.snap("7-block lock over")

	out, err := json.MarshalIndent(struct {
		States []shareState `json:"states"`
	}{rec.states}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	if *update {
		if err := os.WriteFile(shareVectorsFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(shareVectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, out) {
		t.Fatalf("%s differs from the handler's answers: go test ./internal/evmtest/lptest -run TestShareVectors -update", shareVectorsFile)
	}
}
