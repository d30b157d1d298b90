package service_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// The start-up checks ask each configured contract one read as its kind:
// on the scenario's chain as configured nothing is named; an
// auto-exerciser with no code and a pool configured as another DEX's
// (Aerodrome Slipstream's six-word slot0 for a pool that answers seven)
// are named, each once in the log, and shown in /readyz's chain, which
// stays ready.
func TestStartChecksNameContractsThatDoNotAnswerAsTheirKind(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/mantle-wmnt-usdt.json"))
	if err != nil {
		t.Fatal(err)
	}
	market := common.HexToAddress("0x1D5DE630BbBF68c9bf17D8462605227D79eA910C")
	pool := common.HexToAddress("0x000000000000000000000000000000000000A901")
	absent := common.HexToAddress("0x00000000000000000000000000000000000A0E00")
	only := func(ch *config.Chain) {
		ch.PoolDex, ch.MarketPools = map[common.Address]string{}, map[common.Address][]common.Address{market: {pool}}
		ch.Swappers = nil // the fake node's swappers hold no code (TestStartChecksNameSwappersWithoutCode)
	}
	svc, _ := newServiceConfigured(t, only, scs[0])
	var buf bytes.Buffer
	if got := svc.CheckContracts(context.Background(), slog.New(slog.NewTextHandler(&buf, nil))); len(got) != 0 || buf.Len() != 0 {
		t.Fatalf("as configured: %+v\n%s", got, buf.String())
	}
	svc, _ = newServiceConfigured(t, func(ch *config.Chain) {
		only(ch)
		ch.AutoExerciser = absent
		ch.Handlers[common.HexToAddress("0x00000000000000000000000000000000000AE20D")] = config.Handler{Name: "aerodrome", Slot0: "aerodrome-cl"}
		ch.PoolDex[pool] = "aerodrome"
	}, scs[0])
	got := svc.CheckContracts(context.Background(), slog.New(slog.NewTextHandler(&buf, nil)))[scs[0].ChainID]
	if len(got) != 2 || got[0].Contract != absent.Hex() || got[0].Kind != "AutoExerciseTimeBased" ||
		got[1].Contract != pool.Hex() || !strings.Contains(got[1].Kind, "aerodrome-cl") || got[1].Problem == "" {
		t.Fatalf("checks: %+v", got)
	}
	if lines := strings.Count(buf.String(), "does not answer as its kind"); lines != 2 {
		t.Errorf("%d log lines:\n%s", lines, buf.String())
	}
	_, chains := svc.Readiness(context.Background(), 1<<40)
	if len(chains) != 1 || len(chains[0].ContractChecks) != 2 {
		t.Errorf("readiness: %+v", chains)
	}
}

// Mantle's default swapper configuration names two contracts (uni-v3's
// address, which is also its Agni byDex entry, and its FusionX one); on
// the scenario's fake node neither holds code. Each is named once in the
// checks (the Agni one with both its names), the swapper fails whole, and
// auto and direct refuse with a 400 that names the check's finding rather
// than preparing through a swapper whose legs would revert. Before the
// check has answered nothing is left out.
func TestStartChecksNameSwappersWithoutCode(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/mantle-wmnt-usdt.json"))
	if err != nil {
		t.Fatal(err)
	}
	agni, fusionx := common.HexToAddress("0x471923c6148495530C5153040A9D8726213421Bd"), common.HexToAddress("0x480199183c57853a96BEF4F8e2B0C28dd877c7D8")
	svc, _ := newServiceConfigured(t, func(ch *config.Chain) {
		ch.PoolDex, ch.MarketPools, ch.AutoExerciser = nil, nil, common.Address{}
		if sw := ch.Swappers["uni-v3"]; sw == nil || sw.Address != agni || sw.ByDex["agni"] != agni || sw.ByDex["fusionx"] != fusionx {
			t.Fatalf("Mantle's default swappers changed: %+v", ch.Swappers)
		}
	}, scs[0])
	prepare := func(id string) error {
		_, err := svc.ExercisePrepare(context.Background(), trade.PrepareRequest{ChainID: scs[0].ChainID, Market: scs[0].Market.Address, OptionID: big.NewInt(1), SwapperID: id, Slippage: slippage(t, "1")})
		return err
	}
	if err := prepare("auto"); err != nil && strings.Contains(err.Error(), "start-up check") {
		t.Fatalf("left out before any check: %v", err)
	}
	var buf bytes.Buffer
	got := svc.CheckContracts(context.Background(), slog.New(slog.NewTextHandler(&buf, nil)))[scs[0].ChainID]
	if len(got) != 2 || got[0].Contract != agni.Hex() || got[0].Kind != "uniswap-v3 swapper uni-v3, uni-v3 (byDex agni)" ||
		got[1].Contract != fusionx.Hex() || got[1].Kind != "uniswap-v3 swapper uni-v3 (byDex fusionx)" ||
		!strings.HasPrefix(got[0].Problem, "no code") || !strings.HasPrefix(got[1].Problem, "no code") {
		t.Fatalf("checks: %+v", got)
	}
	if lines := strings.Count(buf.String(), "does not answer as its kind"); lines != 2 {
		t.Errorf("%d log lines:\n%s", lines, buf.String())
	}
	for _, id := range []string{"auto", "direct", "agni"} {
		err := prepare(id)
		var p *problem.Error
		if !errors.As(err, &p) || p.Code != problem.InvalidParameter || !strings.Contains(p.Message, "start-up check") || !strings.Contains(p.Message, agni.Hex()+": no code") {
			t.Errorf("swapperId %s: %v", id, err)
		}
	}
}

// A node behind the swappers' deploy block (still syncing, or a replica
// that started with the gateway) answers them as accounts without code:
// the check fails them, auto refuses, and the markets list names why on
// each swapper as the exercise prepare does. Once the node answers their
// code (sr() naming a router that holds code), the next swapper check
// (KeepChecking's shorter cadence while one fails) passes them: auto
// prepares through them again, the markets list's error and /readyz's
// finding are gone, and the clearing is logged.
func TestSwapperCheckRecoversWhenTheNodeFindsTheCode(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/mantle-wmnt-usdt.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := scs[0]
	agni, fusionx := common.HexToAddress("0x471923c6148495530C5153040A9D8726213421Bd"), common.HexToAddress("0x480199183c57853a96BEF4F8e2B0C28dd877c7D8")
	svc, f := newServiceConfigured(t, func(ch *config.Chain) {
		ch.PoolDex, ch.MarketPools, ch.AutoExerciser = nil, nil, common.Address{}
	}, sc)
	prepare := func() error {
		_, err := svc.ExercisePrepare(context.Background(), trade.PrepareRequest{ChainID: sc.ChainID, Market: sc.Market.Address, OptionID: big.NewInt(1), SwapperID: "auto", Slippage: slippage(t, "1")})
		return err
	}
	before := prepare() // no check has answered: nothing left out
	if before != nil && strings.Contains(before.Error(), "check") {
		t.Fatalf("left out before any check: %v", before)
	}
	listed := func() string {
		list, _, err := svc.MarketsList(context.Background(), sc.ChainID)
		if err != nil || len(list) == 0 {
			t.Fatalf("markets list: %v (%d markets)", err, len(list))
		}
		for _, s := range list[0].Swappers {
			if s.ID == "uni-v3" {
				if !s.Usable {
					t.Errorf("uni-v3 listed unusable: %+v", s)
				}
				return s.Error
			}
		}
		t.Fatalf("uni-v3 not listed: %+v", list[0].Swappers)
		return ""
	}
	var logs bytes.Buffer // read once KeepChecking has returned
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.KeepChecking(ctx, slog.New(slog.NewTextHandler(&logs, nil)), service.Recheck{Every: 24 * time.Hour, Failing: time.Millisecond, Timeout: time.Minute})
	}()
	defer func() { cancel(); <-done }()
	for {
		if err := prepare(); err != nil && strings.Contains(err.Error(), agni.Hex()+": no code") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if why := listed(); !strings.HasPrefix(why, "left out of auto and direct: the start-up check found "+agni.Hex()+": no code") {
		t.Errorf("markets list's uni-v3 error: %q", why)
	}
	// The swappers' code arrives: sr() names a router whose factory()
	// answers, as a SwapRouterSwapper over a deployed router does.
	router := common.HexToAddress("0x00000000000000000000000000000000000C0DE1")
	selector := func(sig string) []byte { return crypto.Keccak256([]byte(sig))[:4] }
	answer := func(sig string, word common.Address) func([]byte) ([]byte, bool) {
		return func(data []byte) ([]byte, bool) {
			if len(data) >= 4 && bytes.Equal(data[:4], selector(sig)) {
				return common.LeftPadBytes(word.Bytes(), 32), true
			}
			return nil, false // a contract's fallback that reverts
		}
	}
	f.Node.Lock()
	f.Node.Code = map[common.Address]func([]byte) ([]byte, bool){
		agni: answer("sr()", router), fusionx: answer("sr()", router),
		router: answer("factory()", common.HexToAddress("0x00000000000000000000000000000000000FAC70")),
	}
	f.Node.Unlock()
	for {
		if _, chains := svc.Readiness(context.Background(), 1<<40); len(chains) == 1 && len(chains[0].ContractChecks) == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := prepare(); (before == nil) != (err == nil) || (err != nil && strings.Contains(err.Error(), "check")) {
		t.Errorf("auto after the code arrived: %v (before any check: %v)", err, before)
	}
	if why := listed(); why != "" {
		t.Errorf("markets list's uni-v3 error after the code arrived: %q", why)
	}
	cancel()
	<-done
	if n := strings.Count(logs.String(), "passes its check now"); n != 2 {
		t.Errorf("%d clearings logged:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "does not answer as its kind"); n != 2 {
		t.Errorf("%d findings logged (each once, though checked again):\n%s", n, logs.String())
	}
}
