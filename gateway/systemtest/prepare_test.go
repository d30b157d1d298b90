package systemtest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

var prepareParams = map[string]string{
	"chainId": "42161", "optionMarket": wethUSDC, "optionId": "110", "swapperId": "uni-v3", "slippage": "1",
}

func TestPrepareParamErrors(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	cases := []struct {
		param, value string
		drop         bool
	}{
		{"chainId", "", true}, {"chainId", "10", false},
		{"optionMarket", "", true}, {"optionMarket", "0x1234", false},
		{"optionId", "", true}, {"optionId", "-1", false}, {"optionId", "1.5", false}, {"optionId", "0x6e", false},
		{"optionId", "115792089237316195423570985008687907853269984665640564039457584007913129639936", false}, // 2^256
		{"optionId", strings.Repeat("9", 79), false},
		{"swapperId", "", true}, {"swapperId", "paraswap", false}, {"swapperId", "UNI-V3", false},
		{"slippage", "", true}, {"slippage", "0", false}, {"slippage", "50.5", false}, {"slippage", "-1", false},
		{"slippage", "1%", false}, {"slippage", "0.0000001", false}, {"slippage", "NaN", false},
	}
	for _, c := range cases {
		rec := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, c.param, c.value, c.drop))
		e := decodeError(t, rec)
		if rec.Code != http.StatusBadRequest || e.Param != c.param {
			t.Errorf("%s=%q drop=%v: status %d, %+v", c.param, c.value, c.drop, rec.Code, e)
		}
	}
	if f.Node.Requests() != 0 || f.OneInch.Requests() != 0 {
		t.Error("invalid requests reached an upstream")
	}
	// 2^256-1 is a valid id: it simply does not exist.
	rec := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, "optionId", "115792089237316195423570985008687907853269984665640564039457584007913129639935", false))
	if e := decodeError(t, rec); rec.Code != http.StatusNotFound || e.Code != "OPTION_NOT_FOUND" {
		t.Errorf("max uint256: %d %+v", rec.Code, e)
	}
}

// 1inch's error shapes each become a clear gateway error, never cached.
func TestPrepare1inchErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   int
		code   string
	}{
		{400, `{"statusCode":400,"error":"Bad Request","description":"insufficient liquidity","meta":[],"requestId":"x"}`, 422, "QUOTE_INSUFFICIENT_LIQUIDITY"},
		{429, `{"statusCode":429,"message":"Too Many Requests"}`, 503, "QUOTE_RATE_LIMITED"},
		{500, `{"statusCode":500,"message":"Internal server error"}`, 502, "QUOTE_ERROR"},
		{502, `<html>bad gateway</html>`, 502, "QUOTE_ERROR"},
		{401, `{"statusCode":401,"message":"Unauthorized"}`, 503, "QUOTE_UNAUTHORIZED"},
		{200, `{"toAmount":"12"`, 502, "QUOTE_ERROR"},
		{200, `{"toAmount":"12","tx":{"to":"0x0000000000000000000000000000000000000001","data":"0xe449022e"}}`, 502, "QUOTE_ERROR"},
		// The right router, but calldata whose minimum cannot be read (clipperSwap; truncated swap()).
		{200, `{"toAmount":"12","tx":{"to":"0x1111111254EEB25477B68fb85Ed929f73A960582","data":"0x84bd6d29"}}`, 502, "QUOTE_ERROR"},
		{200, `{"toAmount":"12","tx":{"to":"0x1111111254EEB25477B68fb85Ed929f73A960582","data":"0x12aa3caf0000"}}`, 502, "QUOTE_ERROR"},
	}
	for _, c := range cases {
		srv, f := newFakeServer(t)
		failing := true
		f.OneInch.Fail = func(*http.Request) (int, string) {
			if failing {
				return c.status, c.body
			}
			return 0, ""
		}
		path := gateway.PathExercisePrepare + "?" + query(prepareParams, "swapperId", "1inch", false)
		rec := get(t, srv, path)
		if e := decodeError(t, rec); rec.Code != c.want || e.Code != c.code {
			t.Errorf("1inch %d %s: gateway %d %+v, want %d %s", c.status, c.body, rec.Code, e, c.want, c.code)
		}
		if strings.Contains(rec.Body.String(), "Too Many") || strings.Contains(rec.Body.String(), "html") {
			t.Errorf("upstream text echoed: %s", rec.Body)
		}
		failing = false
		if rec := get(t, srv, path); rec.Code != http.StatusOK {
			t.Errorf("after recovery: %d %s", rec.Code, rec.Body)
		}
	}
}

func TestPrepareAnswers(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	for _, sw := range []string{"uni-v3", "1inch"} {
		rec := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, "swapperId", sw, false))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"tx":{"to":"`+wethUSDC+`","data":"0x32f530a7`) {
			t.Fatalf("%s: %d %s", sw, rec.Code, rec.Body)
		}
	}
	// The configured 1inch key (none here) is not sent as an empty bearer.
	if a := f.OneInch.LastAuthorization(); a != "" {
		t.Errorf("Authorization %q without a key", a)
	}
	for id, code := range map[string]string{"112": "OPTION_EXPIRED", "113": "OPTION_NOT_IN_THE_MONEY", "101": "OPTION_FULLY_EXERCISED", "7": "OPTION_NOT_FOUND"} {
		rec := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, "optionId", id, false))
		if e := decodeError(t, rec); e.Code != code || rec.Code/100 != 4 {
			t.Errorf("option %s: %d %+v, want %s", id, rec.Code, e, code)
		}
	}
}

// Leading zeros name the same option: "0110" is answered from the entry
// "110" filled, and "000" is option 0, which does not exist.
func TestPrepareOptionIDLeadingZeros(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	first := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, "optionId", "110", false))
	again := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, "optionId", "0110", false))
	if first.Code != http.StatusOK || again.Header().Get("X-Cache") != "HIT" || again.Body.String() != first.Body.String() {
		t.Fatalf("110: %d; 0110: %d %s", first.Code, again.Code, again.Header().Get("X-Cache"))
	}
	rec := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, "optionId", "000", false))
	if e := decodeError(t, rec); rec.Code != http.StatusNotFound || e.Code != "OPTION_NOT_FOUND" {
		t.Fatalf("000: %d %+v", rec.Code, e)
	}
}
