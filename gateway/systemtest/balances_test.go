package systemtest

import (
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// A prepare's simulation spends what its answer says, from the signer's
// balance: a buyer holding exactly the quote's cost, or a depositor
// exactly the tokens the deposit pulls, is answered 200 with that
// balance; one base unit less is refused before anything is signed, the
// token's reason named. Each case is a user of its own (none of the
// scenario's), so no answer is another's from the cache.
func TestPreparesSpendTheStatedBalance(t *testing.T) {
	srv, f := newFakeServer(t)
	weth := common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1")
	user := func(i int) string { return common.BigToAddress(big.NewInt(int64(0xbeef00 + i))).Hex() }
	purchase := func(u string) string {
		return strings.Replace(quoteQuery, "user=0x0000000000000000000000000000000000000000", "user="+u, 1)
	}
	var quote struct{ Cost string }
	if rec := get(t, srv, purchase(user(0))); rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &quote) != nil {
		t.Fatalf("quote: %d %s", rec.Code, rec.Body)
	}
	cost, _ := new(big.Int).SetString(quote.Cost, 10)
	deposit := func(u string) string { return strings.Replace(depositQry, "user="+lpUser, "user="+u, 1) }
	var prepared struct{ Tokens []struct{ Amount string } }
	if rec := get(t, srv, deposit(lpUser)); rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &prepared) != nil || len(prepared.Tokens) != 2 {
		t.Fatalf("alice's deposit: %d %s", rec.Code, rec.Body)
	}
	pull, _ := new(big.Int).SetString(prepared.Tokens[0].Amount, 10) // WETH is the pool's token0
	if cost == nil || pull == nil || cost.Sign() == 0 || pull.Sign() == 0 {
		t.Fatalf("cost %s, pull %s", quote.Cost, prepared.Tokens[0].Amount)
	}
	for i, c := range []struct {
		path   func(string) string
		amount *big.Int
		status int
		code   string
	}{
		{func(u string) string {
			return strings.Replace(purchase(u), gateway.PathPurchaseQuote, gateway.PathPurchasePrepare, 1) + "&slippage=1"
		}, cost, http.StatusOK, ""},
		{func(u string) string {
			return strings.Replace(purchase(u), gateway.PathPurchaseQuote, gateway.PathPurchasePrepare, 1) + "&slippage=1"
		},
			new(big.Int).Sub(cost, big.NewInt(1)), http.StatusUnprocessableEntity, "PURCHASE_WOULD_REVERT"},
		{deposit, pull, http.StatusOK, ""},
		{deposit, new(big.Int).Sub(pull, big.NewInt(1)), http.StatusUnprocessableEntity, "DEPOSIT_WOULD_REVERT"},
	} {
		u := user(i + 1)
		setBalance(f, weth, u, c.amount)
		rec := get(t, srv, c.path(u))
		if rec.Code != c.status {
			t.Errorf("%s holding %s: %d %s", c.path(u), c.amount, rec.Code, rec.Body)
			continue
		}
		if c.status != http.StatusOK {
			if e := decodeError(t, rec); e.Code != c.code || !strings.Contains(e.Message, "ERC20: transfer amount exceeds balance") {
				t.Errorf("holding %s: %+v", c.amount, e)
			}
			continue
		}
		var body struct{ Balance string }
		if json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Balance != c.amount.String() {
			t.Errorf("holding %s: the answer's balance is %q", c.amount, body.Balance)
		}
	}
}

func setBalance(f *scenario.Fakes, token common.Address, holder string, amount *big.Int) {
	f.Node.Lock()
	defer f.Node.Unlock()
	f.Node.Tokens[token].SetBalance(common.HexToAddress(holder), amount)
}
