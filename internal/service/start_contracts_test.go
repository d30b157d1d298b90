package service_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
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
