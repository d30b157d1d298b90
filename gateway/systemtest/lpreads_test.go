package systemtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

// The LP reads' parameters: user required, pool and handler optional but
// checked when given, first and skip as the histories'. Every refusal is a
// 400 naming the parameter; an absent optional one is not refused.
func TestLPReadsParameters(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	const user = "0x000000000000000000000000000000000000dEaD" // no LP activity in the scenario
	const pool = "0xC6962004f452bE9203591991D15f6b388e09E8D0"
	base := "chainId=42161&user=" + user + "&first=10&skip=0"
	for _, path := range []string{gateway.PathDepositHistory, gateway.PathWithdrawHistory, gateway.PathDepositPositions} {
		for _, c := range []struct{ query, param string }{
			{"chainId=42161&first=10&skip=0", "user"},
			{base + "&pool=", "pool"},
			{base + "&pool=0x12", "pool"},
			{base + "&pool=" + pool + "&pool=" + pool, "pool"},
			{base + "&handler=nothex", "handler"},
			{base + "&Pool=" + pool, "Pool"},
			{base + "&optionMarket=" + pool, "optionMarket"},
			{"chainId=42161&user=" + user + "&first=0&skip=0", "first"},
			{"chainId=42161&user=" + user + "&first=10&skip=5001", "skip"},
			{"chainId=42161&user=" + user + "&first=10", "skip"},
			{"chainId=1&user=" + user + "&first=10&skip=0", "chainId"},
		} {
			rec := get(t, srv, path+"?"+c.query)
			var body struct {
				Error struct{ Code, Param string }
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != http.StatusBadRequest || body.Error.Code != "INVALID_PARAMETER" || body.Error.Param != c.param {
				t.Errorf("%s?%s: %d %s, want 400 naming %s", path, c.query, rec.Code, rec.Body, c.param)
			}
		}
		// Absent optional parameters reach the subgraph as no filter at
		// all; given ones as lowercase addresses. The scenario has no LP:
		// empty pages, but POSITION_NOT_FOUND for positions asked of one
		// handler in one pool.
		op := map[string]string{gateway.PathDepositHistory: "LPDepositHistory", gateway.PathWithdrawHistory: "LPWithdrawHistory", gateway.PathDepositPositions: "LPPositions"}[path]
		for _, c := range []struct {
			q     string
			where map[string]any
			code  int
		}{
			{base, map[string]any{"user": strings.ToLower(user)}, http.StatusOK},
			{base + "&pool=" + pool, map[string]any{"user": strings.ToLower(user), "pool": strings.ToLower(pool)}, http.StatusOK},
			{base + "&handler=" + pool + "&pool=" + strings.ToLower(pool), map[string]any{"user": strings.ToLower(user), "pool": strings.ToLower(pool), "handler": strings.ToLower(pool)}, http.StatusOK},
		} {
			want := c.code
			if path == gateway.PathDepositPositions {
				c.where["open"] = true
				if len(c.where) == 4 {
					want = http.StatusNotFound
				}
			}
			rec := get(t, srv, path+"?"+c.q)
			if rec.Code != want || (want == http.StatusOK && strings.TrimSpace(rec.Body.String()) != "[]") ||
				(want == http.StatusNotFound && !strings.Contains(rec.Body.String(), "POSITION_NOT_FOUND")) {
				t.Errorf("%s?%s: %d %s, want %d", path, c.q, rec.Code, rec.Body, want)
			}
			got, _ := json.Marshal(f.Subgraph.LastVariables(op)["where"])
			if w, _ := json.Marshal(c.where); string(got) != string(w) {
				t.Errorf("%s?%s: where %s, want %s", path, c.q, got, w)
			}
		}
	}
}
