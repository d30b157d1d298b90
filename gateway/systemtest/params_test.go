package systemtest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

// strikesParams are valid values; each case breaks one of them.
var strikesParams = map[string]string{
	"optionMarket": wethUSDC, "chainId": "42161", "callsReach": "100", "putsReach": "100",
}

func query(base map[string]string, param, value string, drop bool) string {
	q := url.Values{}
	for k, v := range base {
		if k == param && drop {
			continue
		}
		if k == param {
			v = value
		}
		q.Set(k, v)
	}
	return q.Encode()
}

func TestStrikesParamErrors(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	cases := []struct {
		param, value string
		drop         bool
	}{
		{"optionMarket", "", true},
		{"optionMarket", "", false},
		{"optionMarket", "0x501B", false},
		{"optionMarket", "501B03BdB431154b8Df17BF1c00756E3a8F21744aa", false},
		{"optionMarket", "0x501B03BdB431154b8Df17BF1c00756E3a8F2174G", false},
		{"optionMarket", "0x501B03BdB431154b8Df17BF1c00756E3a8F217440", false},
		{"optionMarket", "vitalik.eth", false},
		{"chainId", "", true},
		{"chainId", "abc", false},
		{"chainId", "-1", false},
		{"chainId", "1", false}, // unknown chain
		{"chainId", "42161.0", false},
		{"chainId", "99999999999999999999999", false},
		{"callsReach", "", true},
		{"callsReach", "0", false},
		{"callsReach", "1001", false},
		{"callsReach", "-5", false},
		{"callsReach", "1.5", false},
		{"callsReach", "1e2", false},
		{"callsReach", " 100", false},
		{"callsReach", "100000000000000000000", false},
		{"putsReach", "", true},
		{"putsReach", "0", false},
		{"putsReach", "1001", false},
		{"putsReach", "ten", false},
	}
	for _, c := range cases {
		path := gateway.PathStrikesChain + "?" + query(strikesParams, c.param, c.value, c.drop)
		rec := get(t, srv, path)
		e := decodeError(t, rec)
		if rec.Code != http.StatusBadRequest || e.Param != c.param || e.Code != "INVALID_PARAMETER" {
			t.Errorf("%s=%q drop=%v: status %d, %+v", c.param, c.value, c.drop, rec.Code, e)
		}
	}
	if n := f.Subgraph.Requests() + f.Node.Requests(); n != 0 {
		t.Errorf("invalid requests reached the upstreams %d times", n)
	}
}

func TestStrikesRepeatedParam(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	rec := get(t, srv, strikes+"&callsReach=5")
	if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Param != "callsReach" {
		t.Fatalf("status %d, %+v", rec.Code, e)
	}
}

func TestStrikesAcceptsAnyAddressCase(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	want := get(t, srv, strikes)
	for _, m := range []string{strings.ToLower(wethUSDC), "0x" + strings.ToUpper(wethUSDC[2:])} {
		rec := get(t, srv, gateway.PathStrikesChain+"?optionMarket="+m+"&chainId=42161&callsReach=100&putsReach=100")
		if rec.Code != http.StatusOK || rec.Body.String() != want.Body.String() {
			t.Errorf("%s: status %d", m, rec.Code)
		}
	}
}

func TestNotFoundAndMethodNotAllowedAreJSON(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	rec := get(t, srv, "/clamm/nope")
	if e := decodeError(t, rec); rec.Code != http.StatusNotFound || e.Code != "NOT_FOUND" {
		t.Errorf("404: %d %+v", rec.Code, e)
	}
	for _, m := range []string{http.MethodPost, http.MethodDelete, http.MethodPut} {
		rec := httptestDo(srv, m, strikes)
		if e := decodeError(t, rec); rec.Code != http.StatusMethodNotAllowed || e.Code != "METHOD_NOT_ALLOWED" {
			t.Errorf("%s: %d %+v", m, rec.Code, e)
		}
	}
}

func TestUnknownMarketIs404(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	rec := get(t, srv, gateway.PathStrikesChain+"?optionMarket=0x1111111111111111111111111111111111111111&chainId=42161&callsReach=1&putsReach=1")
	if e := decodeError(t, rec); rec.Code != http.StatusNotFound || e.Code != "MARKET_NOT_FOUND" || e.Param != "optionMarket" {
		t.Fatalf("status %d, %+v", rec.Code, e)
	}
}

// TestManyPairsAndEscapedKeys: a query of more pairs than params holds in
// its arrays reads the same, repeated parameters are still refused, and
// keys are compared after unescaping.
func TestManyPairsAndEscapedKeys(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	want := get(t, srv, strikes)
	if want.Code != http.StatusOK {
		t.Fatalf("status %d", want.Code)
	}
	if rec := get(t, srv, strings.Replace(strikes, "callsReach", "calls%52each", 1)); rec.Code != http.StatusOK || rec.Body.String() != want.Body.String() {
		t.Errorf("an escaped key: status %d %s", rec.Code, rec.Body)
	}
	var filler, repeats strings.Builder
	for i := range 20 {
		filler.WriteString("&x" + string(rune('a'+i)) + "=1&&")
		repeats.WriteString("&&putsReach=5")
	}
	for q, param := range map[string]string{
		strikes + filler.String(): "xa", // unknown, beyond the arrays, ours first
		gateway.PathStrikesChain + "?" + filler.String()[1:] + "&" + strikes[len(gateway.PathStrikesChain)+1:]: "xa", // ours last
		strikes + repeats.String():   "putsReach",  // repeated beyond the arrays
		strikes + "&calls%52each=5":  "callsReach", // repeated, once escaped
		strikes + "&chainid=42161":   "chainid",    // wrongly cased
		strikes + "&first=5&foo=bar": "first",      // another endpoint's
	} {
		rec := get(t, srv, q)
		if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Param != param {
			t.Errorf("%s: status %d, %+v, want a 400 naming %s", q, rec.Code, e, param)
		}
	}
}
