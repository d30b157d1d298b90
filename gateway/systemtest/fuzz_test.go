package systemtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
)

var (
	fuzzOnce sync.Once
	fuzzSrv  *gateway.Server
)

// fuzzServer is the gateway over healthy fakes with only chain 42161
// configured: any 5xx it answers is the gateway's own failure.
func fuzzServer(t *testing.T) *gateway.Server {
	fuzzOnce.Do(func() {
		fuzzSrv = newApp(t, app.Options{Transports: onFakes(newFakesOnly(t))})
	})
	return fuzzSrv
}

var fuzzPaths = []string{gateway.PathStrikesChain, gateway.PathExerciseHistory, gateway.PathExercisePrepare}

// FuzzQuery throws arbitrary query strings at every endpoint. The only
// statuses allowed are 200 and 4xx, every 4xx body is the JSON error shape,
// and nothing panics (a panic would surface as a 500). The seeds run as an
// ordinary test in `go test ./...`; a longer run:
//
//	go test ./gateway/systemtest -run XXX -fuzz FuzzQuery -fuzztime 5m
func FuzzQuery(f *testing.F) {
	for _, r := range demo.Requests {
		u, _ := url.Parse(r.Path)
		for i, p := range fuzzPaths {
			if p == u.Path {
				f.Add(uint8(i), u.RawQuery)
			}
		}
	}
	for _, q := range []string{
		"", "&&&", "=", "a=b", "chainId=42161&chainId=42161",
		"optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=1&putsReach=1000",
		"optionMarket=0x501b03bdb431154b8df17bf1c00756e3a8f21744&chainId=042161&callsReach=01&putsReach=1",
		"chainId=%34%32%31%36%31&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=110&swapperId=uni%2Dv3&slippage=1",
		"chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=110&swapperId=uni-v3&slippage=1e-3",
		"chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId=" + strings.Repeat("9", 80) + "&swapperId=1inch&slippage=50",
		"chainId=42161&user=0x%ZZ&optionMarket=x&first=1&skip=0",
		"chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=1000&skip=5000",
		"chainId=-1&user=\u00e9\u00e9&first=\u0661",
		"callsReach=+1&putsReach=1%00",
		strings.Repeat("chainId=1&", 500),
	} {
		for i := range fuzzPaths {
			f.Add(uint8(i), q)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		srv := fuzzServer(t)
		req := httptest.NewRequest(http.MethodGet, fuzzPaths[int(which)%len(fuzzPaths)], nil)
		req.URL.RawQuery = raw
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusOK:
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("200 with invalid JSON for %q", raw)
			}
		case rec.Code >= 400 && rec.Code < 500:
			var body struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
					Param   string `json:"param"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
				t.Fatalf("%d without the error shape for %q: %s", rec.Code, raw, rec.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, raw, rec.Body)
		}
	})
}
