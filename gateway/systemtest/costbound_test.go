package systemtest

import (
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// rewritePricing makes the fake node's pricing reads answer as edit says.
func rewritePricing(f *scenario.Fakes, edit func(ask contracts.PricingAsk, a *contracts.PricingAnswer)) {
	f.Node.Rewrite = func(to common.Address, data, ret []byte) []byte {
		_, _, asks, ok := contracts.UnpackPricingReadCode(data)
		if !ok || to != (common.Address{}) {
			return ret
		}
		h, answers, err := contracts.UnpackPricingRead(ret)
		if err != nil || len(answers) != len(asks) {
			return ret
		}
		for i := range answers {
			edit(asks[i], &answers[i])
		}
		out, _ := contracts.PackPricingReadOutput(h, answers)
		return out
	}
}

// The purchase quote refuses a cost (premium plus fee) past 2^256-1, as
// the prepare does: mintOption adds them in checked uint256 arithmetic
// and reverts. Before, the quote answered 200 with the sum (attack 5,
// S12). A cost of exactly 2^256-1 is still quoted.
func TestPurchaseQuoteRefusesACostPastUint256(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		fee  int64
		want int
	}{{"at 2^256-1", 0, http.StatusOK}, {"past 2^256-1", 1, http.StatusUnprocessableEntity}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, f := newFakeServer(t)
			rewritePricing(f, func(_ contracts.PricingAsk, a *contracts.PricingAnswer) {
				if a.PremiumOk {
					a.Premium, a.Fee, a.FeeOk = maxUint256, big.NewInt(c.fee), true
				}
			})
			rec := get(t, srv, quoteQuery)
			if rec.Code != c.want {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, c.want)
			}
			if c.want != http.StatusOK {
				if e := decodeError(t, rec); e.Code != "PURCHASE_WOULD_REVERT" || !strings.Contains(e.Message, "past 2^256-1") {
					t.Errorf("%+v, want PURCHASE_WOULD_REVERT naming 2^256-1", e)
				}
				return
			}
			var q struct{ Cost string }
			if err := json.Unmarshal(rec.Body.Bytes(), &q); err != nil || q.Cost != maxUint256.String() {
				t.Errorf("cost %q %v, want 2^256-1", q.Cost, err)
			}
		})
	}
}

// The options chain shows no price for a row whose price of one call
// asset cannot be paid: the market multiplies the amount (one call asset:
// 10^callDecimals for a call, 10^putDecimals for a put) by the price in
// checked uint256. At floor((2^256-1) / 10^decimals) the row is priced;
// one more and it is null, as a reverting getOptionPrice is (attack 5, S12;
// before, premiumRaw 2^256-1 was served).
func TestOptionsChainShowsNoPriceNoPurchaseCanPay(t *testing.T) {
	t.Parallel()
	const callDec, putDec = 18, 6 // the scenario's WETH and USDC, checked below
	bound := func(isPut bool) *big.Int {
		d := callDec
		if isPut {
			d = putDec
		}
		return new(big.Int).Quo(maxUint256, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil))
	}
	for _, extra := range []int64{0, 1} {
		srv, f := newFakeServer(t)
		rewritePricing(f, func(ask contracts.PricingAsk, a *contracts.PricingAnswer) {
			if a.PriceOk {
				a.OptionPrice = new(big.Int).Add(bound(ask.IsPut), big.NewInt(extra))
			}
		})
		rec := get(t, srv, chainQuery)
		if rec.Code != http.StatusOK {
			t.Fatalf("price bound + %d: %d %s", extra, rec.Code, rec.Body)
		}
		var oc struct {
			CallAsset, PutAsset struct{ Decimals json.Number }
			Expiries            []struct {
				Options []struct {
					Type       string
					PremiumRaw *string
				}
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &oc); err != nil {
			t.Fatal(err)
		}
		if oc.CallAsset.Decimals != "18" || oc.PutAsset.Decimals != "6" {
			t.Fatalf("setup: the scenario's decimals are %s/%s, not %d/%d", oc.CallAsset.Decimals, oc.PutAsset.Decimals, callDec, putDec)
		}
		rows := 0
		for _, e := range oc.Expiries {
			for _, o := range e.Options {
				rows++
				want := bound(o.Type == "put").String()
				switch {
				case extra == 0 && (o.PremiumRaw == nil || *o.PremiumRaw != want):
					t.Errorf("%s at the bound: premiumRaw %v, want %s", o.Type, o.PremiumRaw, want)
				case extra == 1 && o.PremiumRaw != nil:
					t.Errorf("%s past the bound: premiumRaw %s, want null (no purchase can pay it)", o.Type, *o.PremiumRaw)
				}
			}
		}
		if rows == 0 {
			t.Fatal("setup: the options chain has no rows")
		}
	}
}
