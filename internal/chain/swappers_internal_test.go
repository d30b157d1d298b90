package chain

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// swapperAnswer reads ProbeSwappers' four results as the EVM gives them:
// an account without code answers every call with success and nothing; a
// contract answers or reverts; a router call ChainedRead skipped (its
// source failed) reads as not ok with nothing.
func TestSwapperAnswerReadsTheEVMsOutcomes(t *testing.T) {
	router := common.HexToAddress("0x00000000000000000000000000000000000000E5")
	word := Result{OK: true, Data: common.LeftPadBytes(router.Bytes(), 32)}
	notAddress := Result{OK: true, Data: append([]byte{1}, make([]byte, 31)...)}
	nothing, reverted, skipped := Result{OK: true}, Result{OK: false, Data: []byte{0x08, 0xc3, 0x79, 0xa0}}, Result{}
	cases := []struct {
		name             string
		res              []Result
		code, sr, srCode bool
		inch, inchCode   bool
	}{
		{"no code", []Result{nothing, nothing, nothing, nothing}, false, false, false, false, false},
		{"SwapRouterSwapper", []Result{word, reverted, word, skipped}, true, true, true, false, false},
		{"its router without code", []Result{word, reverted, nothing, skipped}, true, true, false, false, false},
		{"OneInchSwapper, its router reverting factory()", []Result{reverted, word, skipped, reverted}, true, false, false, true, true},
		{"a word that is not an address", []Result{notAddress, reverted, reverted, skipped}, true, false, false, false, false},
		{"neither", []Result{reverted, reverted, skipped, skipped}, true, false, false, false, false},
	}
	for _, c := range cases {
		a := swapperAnswer(c.res)
		if a.Code != c.code || (a.SwapRouter != nil) != c.sr || a.SwapRouterCode != c.srCode ||
			(a.OneInchRouter != nil) != c.inch || a.OneInchRouterCode != c.inchCode {
			t.Errorf("%s: %+v", c.name, a)
		}
		if a.SwapRouter != nil && *a.SwapRouter != router || a.OneInchRouter != nil && *a.OneInchRouter != router {
			t.Errorf("%s: routers %v %v, want %s", c.name, a.SwapRouter, a.OneInchRouter, router)
		}
	}
}
