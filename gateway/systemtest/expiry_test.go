package systemtest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// wantError checks an answer's status, code and the parameter it names,
// and that the message holds each of contains.
func wantError(t *testing.T, srv http.Handler, path string, status int, code, param string, contains ...string) {
	t.Helper()
	rec := get(t, srv, path)
	var body struct {
		Error struct{ Code, Message, Param string } `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != status || body.Error.Code != code || body.Error.Param != param {
		t.Errorf("%s: %d %s, want %d %s on %q", path, rec.Code, rec.Body, status, code, param)
		return
	}
	for _, c := range contains {
		if !strings.Contains(body.Error.Message, c) {
			t.Errorf("%s: message %q lacks %q", path, body.Error.Message, c)
		}
	}
}

// A delegate transaction the market would refuse is 422
// DELEGATE_WOULD_REVERT naming the contract's reason, never a prepared
// transaction; nothing of it is cached (the same request answers once the
// market takes it).
func TestDelegateThatWouldRevertIs422(t *testing.T) {
	srv, f := newFakeServer(t)
	path := gateway.PathDelegatePrepare + "?chainId=42161&optionMarket=" + wethUSDC + "&user=" + bob + "&enable=true"
	market := f.Node.Markets[common.HexToAddress(wethUSDC)]
	f.Node.Lock()
	market.DelegateRevert = chaintest.ErrorString("delegation paused")
	f.Node.Unlock()
	wantError(t, srv, path, http.StatusUnprocessableEntity, "DELEGATE_WOULD_REVERT", "", "delegation paused")
	f.Node.Lock()
	market.DelegateRevert = nil
	f.Node.Unlock()
	if rec := get(t, srv, path); rec.Code != http.StatusOK {
		t.Errorf("once the market takes it: %d %s", rec.Code, rec.Body)
	}
}

// Bad parameters of the expiry routes are 400s naming them; an address
// that is no market is a 404.
func TestExpiryRoutesRefuseBadParameters(t *testing.T) {
	srv, _ := newFakeServer(t)
	m := "&optionMarket=" + wethUSDC
	notMarket := "&optionMarket=0x000000000000000000000000000000000000dEaD"
	for _, c := range []struct {
		path, param string
		status      int
	}{
		{gateway.PathDelegatePrepare + "?chainId=42161" + m + "&user=" + bob, "enable", 400},
		{gateway.PathDelegatePrepare + "?chainId=42161" + m + "&user=" + bob + "&enable=1", "enable", 400},
		{gateway.PathDelegatePrepare + "?chainId=42161" + m + "&user=" + bob + "&enable=true&delegate=" + bob, "delegate", 400},
		{gateway.PathDelegatePrepare + "?chainId=42161" + m + "&user=" + bob + "&enable=true&delegate=", "delegate", 400},
		{gateway.PathDelegatePrepare + "?chainId=42161" + m + "&user=0x12&enable=true", "user", 400},
		{gateway.PathDelegatePrepare + "?chainId=42161" + notMarket + "&user=" + bob + "&enable=true", "optionMarket", 404},
		{gateway.PathSettlements + "?chainId=42161&user=" + bob + "&first=0&skip=0", "first", 400},
		{gateway.PathSettlements + "?chainId=42161&user=" + bob + "&first=10&skip=0&optionMarket=", "optionMarket", 400},
		{gateway.PathSettlements + "?chainId=42161" + m + "&first=10&skip=0", "user", 400},
		{gateway.PathSettlements + "?chainId=42161&user=" + bob + notMarket + "&first=10&skip=0", "optionMarket", 404},
		{gateway.PathExpiringOptions + "?chainId=42161" + m + "&within=0&first=10&skip=0", "within", 400},
		{gateway.PathExpiringOptions + "?chainId=42161" + m + "&within=31536001&first=10&skip=0", "within", 400},
		{gateway.PathExpiringOptions + "?chainId=42161" + m + "&within=60&first=10", "skip", 400},
		{gateway.PathExpiringOptions + "?chainId=42161" + notMarket + "&within=60&first=10&skip=0", "optionMarket", 404},
	} {
		code := "INVALID_PARAMETER"
		if c.status == 404 {
			code = "MARKET_NOT_FOUND"
		}
		wantError(t, srv, c.path, c.status, code, c.param)
	}
}

// On a chain whose registry names no auto-exerciser, the delegate must be
// named (400 on delegate), and positions carry no autoExercise.
func TestNoAutoExerciserOnTheChain(t *testing.T) {
	f := scenario.NewFakes(t, demoScenario(t))
	cfg := config.Default()
	cfg.Chains[42161].AutoExerciser = common.Address{}
	srv := newApp(t, app.Options{Config: cfg, Transports: onFakes(f)})
	wantError(t, srv, gateway.PathDelegatePrepare+"?chainId=42161&optionMarket="+wethUSDC+"&user="+bob+"&enable=true", 400, "INVALID_PARAMETER", "delegate", "no auto-exerciser")
	rec := get(t, srv, gateway.PathPurchasePositions+"?chainId=42161&optionMarket="+wethUSDC+"&user="+bob+"&first=10&skip=0")
	var list []struct {
		AutoExercise *json.RawMessage `json:"autoExercise"`
		Status       string           `json:"status"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != 200 || len(list) == 0 {
		t.Fatalf("positions: %d %s", rec.Code, rec.Body)
	}
	for _, p := range list {
		if p.AutoExercise != nil || p.Status == "autoExercise" {
			t.Errorf("position without an auto-exerciser on the chain: %s", rec.Body)
		}
	}
}

// The expiring options' delegates read (it needs the owners the chain
// names) begins as soon as the positions are read, alongside the exercise
// quotes and simulations, not after them: the node holds every exercise
// simulation until the subgraph has been asked for the delegates. Were the
// read begun after the values, the first simulation would wait until its
// upstream timeout or a minute's deadlock breaker gave up on it (a
// failure either way, not a bound on time).
func TestExpiringAsksDelegatesAlongsideTheValues(t *testing.T) {
	t.Parallel()
	f := scenario.NewFakes(t, demoScenario(t))
	sel, err := clamm.ExerciseCalldata(clamm.ExerciseParams{OptionID: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	exercise := hex.EncodeToString(sel[:4])
	asked := make(chan struct{})
	var once sync.Once
	var held, waitedOut atomic.Int64
	tr := f.Transports()
	tr.Subgraph = tap{tr.Subgraph, func(_ *http.Request, body []byte) {
		if bytes.Contains(body, []byte(`"operationName":"ExerciseDelegates"`)) {
			once.Do(func() { close(asked) })
		}
	}}
	tr.RPC = tap{tr.RPC, func(r *http.Request, body []byte) {
		if !bytes.Contains(body, []byte(exercise)) {
			return
		}
		held.Add(1)
		select {
		case <-asked:
		case <-r.Context().Done():
			waitedOut.Add(1)
		case <-time.After(time.Minute):
			waitedOut.Add(1)
		}
	}}
	srv := newApp(t, app.Options{Config: config.Default(), Transports: map[uint64]upstream.Transports{42161: tr}})
	rec := get(t, srv, gateway.PathExpiringOptions+"?chainId=42161&optionMarket="+wethUSDC+"&within=86400&first=100&skip=0")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"exerciseValue":"`) {
		t.Fatalf("%d: %s", rec.Code, rec.Body)
	}
	if held.Load() == 0 || waitedOut.Load() != 0 {
		t.Errorf("%d exercise simulations, %d of them sent before the delegates were asked for", held.Load(), waitedOut.Load())
	}
}

// tap is a transport that shows each request and its body to see before
// it sends the request on.
type tap struct {
	rt  http.RoundTripper
	see func(r *http.Request, body []byte)
}

func (t tap) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	_ = r.Body.Close()
	t.see(r, body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return t.rt.RoundTrip(r)
}
