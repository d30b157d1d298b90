package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Purchase history on both scenario markets: Arbitrum WETH/USDC (the call
// asset is the pool's token0) and Mantle WMNT/USDT (inverted: the call asset
// is token1). Each answer is compared whole with a golden file, and the
// strike and ttl of every option that also appears in the independent
// exercise-history vectors (gen.mjs) must equal the vector's.
func TestPurchaseHistoryGoldenAndVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "testdata/vectors/history.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v historyVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ golden, scenario, user, market string }{
		{"purchases-mantle-alice", "testdata/scenarios/mantle-wmnt-usdt.json", "0xA11CE00000000000000000000000000000000001", "0x1D5DE630BbBF68c9bf17D8462605227D79eA910C"},
		{"purchases-arbitrum-alice", "testdata/scenarios/arbitrum-weth-usdc.json", "0xA11CE00000000000000000000000000000000001", "0x501B03BdB431154b8Df17BF1c00756E3a8F21744"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			scs, err := scenario.Load(filepath.Join(root, c.scenario))
			if err != nil {
				t.Fatal(err)
			}
			svc, _ := newService(t, scs[0])
			got, err := svc.PurchaseHistory(context.Background(), trade.HistoryRequest{
				ChainID: scs[0].ChainID, User: common.HexToAddress(c.user), Market: common.HexToAddress(c.market), First: 1000, Skip: 0,
			})
			if err != nil {
				t.Fatal(err)
			}
			types := map[string]bool{}
			for _, r := range got.Records {
				types[r.Type] = true
			}
			if !types["call"] || !types["put"] {
				t.Fatalf("want calls and puts, got %v", types)
			}
			checked := 0
			for _, h := range v.Histories {
				if h.Scenario != c.scenario && filepath.Base(h.Scenario) != filepath.Base(c.scenario) {
					continue
				}
				for _, want := range h.Records {
					for _, r := range got.Records {
						if r.OptionID != want["optionId"] {
							continue
						}
						ws, _ := strconv.ParseFloat(want["strike"].(string), 64)
						if r.Strike != ws || float64(r.TTL) != want["ttl"].(float64) || r.Type != want["type"] || r.Premium != want["premium"] {
							t.Errorf("option %s: strike %v ttl %d type %s premium %s, vector %v", r.OptionID, r.Strike, r.TTL, r.Type, r.Premium, want)
						}
						checked++
					}
				}
			}
			if checked == 0 {
				t.Fatal("no purchase cross-checked against the vectors")
			}
			checkGolden(t, c.golden, got.Records)
		})
	}
}

// Open positions on both scenario markets (normal and inverted), compared
// whole with golden files; each market's answer must hold an exercisable
// call and an exercisable put with a positive value.
func TestPurchasePositionsGolden(t *testing.T) {
	for _, c := range []struct{ golden, scenario, market string }{
		{"positions-mantle-alice", "testdata/scenarios/mantle-wmnt-usdt.json", "0x1D5DE630BbBF68c9bf17D8462605227D79eA910C"},
		{"positions-arbitrum-alice", "testdata/scenarios/arbitrum-weth-usdc.json", "0x501B03BdB431154b8Df17BF1c00756E3a8F21744"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			scs, err := scenario.Load(filepath.Join(root, c.scenario))
			if err != nil {
				t.Fatal(err)
			}
			svc, _ := newService(t, scs[0])
			got, err := svc.PurchasePositions(context.Background(), trade.HistoryRequest{
				ChainID: scs[0].ChainID, User: common.HexToAddress("0xA11CE00000000000000000000000000000000001"), Market: common.HexToAddress(c.market), First: 1000,
			})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, r := range got.Records {
				if r.Exercisable && r.ValueIfExercised != "0" {
					seen[r.Type] = true
				}
			}
			if !seen["call"] || !seen["put"] {
				t.Fatalf("want an exercisable call and put, got %v", seen)
			}
			checkGolden(t, c.golden, got.Records)
		})
	}
}

func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	body, _ := json.MarshalIndent(v, "", "  ")
	body = append(body, '\n')
	path := filepath.Join(root, "testdata/golden", name+".json")
	if *update {
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(body, want) {
		t.Errorf("differs from %s:\n%s", path, body)
	}
}

// M29: on a chain whose uni-v3 swapper has no QuoterV2 (Mantle's and
// Blast's defaults), positions and the expiring list still answer once
// options are in the money: exerciseValue and exerciseSwapper are null and
// valueIfExercised judges, as docs/api.md says.
func TestPositionsWithSwapperWithoutQuoter(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/mantle-wmnt-usdt.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := newServiceConfigured(t, func(ch *config.Chain) {
		uni := ch.Swappers["uni-v3"]
		if uni == nil {
			t.Fatal("Mantle's defaults configure no uni-v3 swapper")
		}
		uni.Quoter = common.Address{}
		ch.Quoters = nil // nor the DEX quoter registry's
	}, scs[0])
	market := common.HexToAddress("0x1D5DE630BbBF68c9bf17D8462605227D79eA910C")
	got, err := svc.PurchasePositions(context.Background(), trade.HistoryRequest{
		ChainID: scs[0].ChainID, User: common.HexToAddress("0xA11CE00000000000000000000000000000000001"), Market: market, First: 1000,
	})
	if err != nil {
		t.Fatalf("positions: %v", err)
	}
	inTheMoney := 0
	for _, r := range got.Records {
		risk := r.ExpiryRisk
		if risk.ExerciseValue != nil || risk.ExerciseSwapper != nil {
			t.Errorf("option %s: exerciseValue %v by %v without a quote source", r.OptionID, risk.ExerciseValue, risk.ExerciseSwapper)
		}
		if risk.Unknown != nil {
			t.Errorf("option %s: unknown %v: a chain without a quote source is no failed read", r.OptionID, risk.Unknown)
		}
		if want := r.Exercisable && r.ValueIfExercised != "0"; risk.InTheMoney != want {
			t.Errorf("option %s: inTheMoney %v, valueIfExercised %s says %v", r.OptionID, risk.InTheMoney, r.ValueIfExercised, want)
		}
		if risk.InTheMoney {
			inTheMoney++
		}
	}
	if inTheMoney == 0 {
		t.Fatal("no option in the money: the case M29 is about is not exercised")
	}
	exp, err := svc.ExpiringOptions(context.Background(), trade.ExpiringRequest{
		ChainID: scs[0].ChainID, Market: market, Within: 365 * 24 * 3600, First: 1000,
	})
	if err != nil {
		t.Fatalf("expiring: %v", err)
	}
	if len(exp.Records) == 0 {
		t.Fatal("the expiring list is empty: the case M29 is about is not exercised")
	}
	for _, r := range exp.Records {
		if r.ExpiryRisk.ExerciseValue != nil || !r.ExpiryRisk.InTheMoney {
			t.Errorf("expiring option %s: exerciseValue %v, inTheMoney %v", r.OptionID, r.ExpiryRisk.ExerciseValue, r.ExpiryRisk.InTheMoney)
		}
	}
}

// M32: an auto-exerciser that does not answer as AutoExerciseTimeBased
// (here an address with no code) leaves autoExercise null with the reason
// in unknown; the positions themselves, their values and delegates, are
// served.
func TestPositionsWithAutoExerciserThatDoesNotAnswer(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/mantle-wmnt-usdt.json"))
	if err != nil {
		t.Fatal(err)
	}
	absent := common.HexToAddress("0x00000000000000000000000000000000000A0E00")
	svc, _ := newServiceConfigured(t, func(ch *config.Chain) {
		ch.AutoExerciser = absent
	}, scs[0])
	got, err := svc.PurchasePositions(context.Background(), trade.HistoryRequest{
		ChainID: scs[0].ChainID, User: common.HexToAddress("0xA11CE00000000000000000000000000000000001"),
		Market: common.HexToAddress("0x1D5DE630BbBF68c9bf17D8462605227D79eA910C"), First: 1000,
	})
	if err != nil {
		t.Fatalf("positions: %v", err)
	}
	if len(got.Records) == 0 {
		t.Fatal("no positions served")
	}
	inTheMoney := 0
	for _, r := range got.Records {
		risk := r.ExpiryRisk
		if risk.InTheMoney && risk.TimeToExpiry >= 0 {
			inTheMoney++
			if risk.Status != trade.StatusUnknown {
				t.Errorf("option %s in the money: status %q %q, though whether the auto-exerciser acts is unknown", r.OptionID, risk.Status, risk.StatusMessage)
			}
		}
		if risk.AutoExercise != nil {
			t.Errorf("option %s: autoExercise %+v from a contract that does not answer", r.OptionID, risk.AutoExercise)
		}
		if why := risk.Unknown["autoExercise"]; !strings.Contains(why, absent.Hex()) {
			t.Errorf("option %s: unknown %v does not name the auto-exerciser", r.OptionID, risk.Unknown)
		}
		if risk.Delegates == nil || risk.Status == "" {
			t.Errorf("option %s: delegates %v status %q: the other fields must still be served", r.OptionID, risk.Delegates, risk.Status)
		}
	}
	if inTheMoney == 0 {
		t.Error("no open option in the money: the status rule went untested")
	}
}

// A quote source that fails (a QuoterV2 address that reverts every quote,
// one that answers nothing) leaves only the exercise values unknown: the
// positions and the expiring list answer, each option in the money by
// valueIfExercised with exerciseValue null and the reason in unknown, as
// on a chain without a quote source, and the pages say they are degraded
// (the gateway caches them only briefly).
func TestPositionsAndExpiringWithFailingQuoter(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/mantle-wmnt-usdt.json"))
	if err != nil {
		t.Fatal(err)
	}
	market := common.HexToAddress("0x1D5DE630BbBF68c9bf17D8462605227D79eA910C")
	// (a quoter answering nothing, an address without code, is no quoter:
	// the exercise's simulation values the leg, TestNoCodeQuoterValuesBySimulation)
	for name, quoter := range map[string]common.Address{
		"reverts": market, // the market answers no quoteExactInputSingle
	} {
		t.Run(name, func(t *testing.T) {
			svc, _ := newServiceConfigured(t, func(ch *config.Chain) {
				ch.Swappers["uni-v3"].Quoter = quoter
				for dex := range ch.Quoters { // the registry's quoters fail too
					ch.Quoters[dex] = config.Quoter{Kind: config.QuoterV2, Address: quoter}
				}
			}, scs[0])
			got, err := svc.PurchasePositions(context.Background(), trade.HistoryRequest{
				ChainID: scs[0].ChainID, User: common.HexToAddress("0xA11CE00000000000000000000000000000000001"), Market: market, First: 1000,
			})
			if err != nil {
				t.Fatalf("positions: %v", err)
			}
			if n := failedValues(t, got.Records); n == 0 || !got.Records.Degraded() {
				t.Fatalf("%d options in the money with their value unknown, degraded %v: the case is not exercised", n, got.Records.Degraded())
			}
			exp, err := svc.ExpiringOptions(context.Background(), trade.ExpiringRequest{ChainID: scs[0].ChainID, Market: market, Within: 365 * 24 * 3600, First: 1000})
			if err != nil {
				t.Fatalf("expiring: %v", err)
			}
			recs := make([]trade.PositionRecord, len(exp.Records))
			for i, r := range exp.Records {
				recs[i] = r.PositionRecord
			}
			if n := failedValues(t, recs); n == 0 || n != len(recs) || !exp.Records.Degraded() {
				t.Errorf("expiring: %d of %d options with their value unknown, degraded %v", n, len(recs), exp.Records.Degraded())
			}
		})
	}
}

// failedValues checks that every open option valueIfExercised puts in the
// money has its exercise value unknown, with the reason, and is judged in
// the money; it returns how many there are.
func failedValues(t *testing.T, recs []trade.PositionRecord) int {
	t.Helper()
	n := 0
	for _, r := range recs {
		risk := r.ExpiryRisk
		if !r.Exercisable || r.ValueIfExercised == "0" || risk.TimeToExpiry < 0 {
			continue
		}
		n++
		if risk.ExerciseValue != nil || risk.ExerciseSwapper != nil || !risk.InTheMoney || !strings.Contains(risk.Unknown["exerciseValue"], "valueIfExercised judges") {
			t.Errorf("option %s: exerciseValue %v by %v, inTheMoney %v, unknown %v", r.OptionID, risk.ExerciseValue, risk.ExerciseSwapper, risk.InTheMoney, risk.Unknown)
		}
	}
	return n
}

// A registered quoter with no code on the chain (a default's address on a
// fork or a local chain) answers eth_call with nothing: it counts as no
// quoter, and the exercise's simulation from the owner values the option.
func TestNoCodeQuoterValuesBySimulation(t *testing.T) {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/mantle-wmnt-usdt.json"))
	if err != nil {
		t.Fatal(err)
	}
	nothing := common.HexToAddress("0x0000000000000000000000000000000000000A00")
	svc, _ := newServiceConfigured(t, func(ch *config.Chain) {
		ch.Swappers["uni-v3"].Quoter = nothing
		for dex := range ch.Quoters {
			ch.Quoters[dex] = config.Quoter{Kind: config.QuoterV2, Address: nothing}
		}
	}, scs[0])
	got, err := svc.PurchasePositions(context.Background(), trade.HistoryRequest{
		ChainID: scs[0].ChainID, User: common.HexToAddress("0xA11CE00000000000000000000000000000000001"),
		Market: common.HexToAddress("0x1D5DE630BbBF68c9bf17D8462605227D79eA910C"), First: 1000,
	})
	if err != nil {
		t.Fatalf("positions: %v", err)
	}
	valued := 0
	for _, r := range got.Records {
		if r.ExpiryRisk.Unknown != nil {
			t.Errorf("option %s: unknown %v", r.OptionID, r.ExpiryRisk.Unknown)
		}
		if r.Exercisable && r.ValueIfExercised != "0" {
			if r.ExpiryRisk.ExerciseValue == nil || *r.ExpiryRisk.ExerciseValue == "0" {
				t.Errorf("option %s in the money: exerciseValue %v", r.OptionID, r.ExpiryRisk.ExerciseValue)
			}
			valued++
		}
	}
	if valued == 0 {
		t.Fatal("no option in the money: the case is not exercised")
	}
}
