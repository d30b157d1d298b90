package systemtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

const (
	lpHandler  = "0x29BbF7EbB9C5146c98851e76A5529985E4052116"
	lpPool     = "0xC6962004f452bE9203591991D15f6b388e09E8D0"
	zeroAddr   = "0x0000000000000000000000000000000000000000"
	lpUser     = "0xA11CE00000000000000000000000000000000001"
	depositQry = gateway.PathDepositPrepare + "?chainId=42161&handler=" + lpHandler + "&pool=" + lpPool + "&hook=" + zeroAddr +
		"&tickLower=-196200&tickUpper=-196180&amount=1000000000000000000&user=" + lpUser
	withdrawQry = gateway.PathWithdrawPrepare + "?chainId=42161&user=" + lpUser + "&handler=" + lpHandler + "&pool=" + lpPool +
		"&hook=" + zeroAddr + "&tickLower=-196200&tickUpper=-196190&shares=max"
)

// Every deposit and withdrawal parameter is validated before anything is
// read, and the 400 names it; the range is given by strikes or by ticks,
// one way only.
func TestLPParameters(t *testing.T) {
	srv, _ := newFakeServer(t)
	for _, c := range []struct{ query, from, to, param string }{
		{depositQry, "&tickLower=-196200&tickUpper=-196180", "", "minStrike"},
		{depositQry, "&tickLower=-196200", "&tickLower=-196200&minStrike=3000", "minStrike"},
		{depositQry, "&tickUpper=-196180", "", "tickUpper"},
		{depositQry, "tickLower=-196200", "tickLower=+196200", "tickLower"},
		{depositQry, "tickLower=-196200", "tickLower=-887273", "tickLower"},
		{depositQry, "tickUpper=-196180", "tickUpper=-196200", "tickUpper"},
		{depositQry, "&tickLower=-196200&tickUpper=-196180", "&minStrike=3000&maxStrike=2999", "maxStrike"},
		{depositQry, "&tickLower=-196200&tickUpper=-196180", "&minStrike=3e3&maxStrike=3100", "minStrike"},
		{depositQry, "amount=1000000000000000000", "amount=0", "amount"},
		{depositQry, "amount=1000000000000000000", "amount=340282366920938463463374607431768211456", "amount"},
		{depositQry, "user=" + lpUser, "user=" + zeroAddr, "user"},
		{depositQry, "hook=" + zeroAddr, "hook=0x12", "hook"},
		{depositQry, "pool=" + lpPool, "pool=" + lpPool + "&pool=" + lpPool, "pool"},
		{withdrawQry, "shares=max", "shares=0", "shares"},
		{withdrawQry, "shares=max", "shares=MAX", "shares"},
		{withdrawQry, "shares=max", "shares=340282366920938463463374607431768211456", "shares"},
		{withdrawQry, "&shares=max", "", "shares"},
		{withdrawQry, "tickUpper=-196190", "tickUpper=x", "tickUpper"},
		{withdrawQry, "user=" + lpUser, "user=" + zeroAddr, "user"},
		{withdrawQry, "handler=" + lpHandler, "handler=", "handler"},
		{withdrawQry, "&shares=max", "&shares=max&minStrike=1", "minStrike"},
	} {
		path := strings.Replace(c.query, c.from, c.to, 1)
		rec := get(t, srv, path)
		var body struct{ Error struct{ Code, Param string } }
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusBadRequest || body.Error.Param != c.param {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
