package service_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// historyVectors mirrors testdata/vectors/history.json (gen.mjs).
type historyVectors struct {
	Histories []struct {
		Scenario string           `json:"scenario"`
		ChainID  uint64           `json:"chainId"`
		User     string           `json:"user"`
		Market   string           `json:"market"`
		First    int              `json:"first"`
		Skip     int              `json:"skip"`
		Records  []map[string]any `json:"records"`
	} `json:"histories"`
}

func TestExerciseHistoryMatchesIndependentVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "testdata/vectors/history.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v historyVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	sawInverted := false
	for _, c := range v.Histories {
		scs, err := scenario.Load(filepath.Join(root, c.Scenario))
		if err != nil {
			t.Fatal(err)
		}
		svc, _ := newService(t, scs[0])
		got, err := svc.ExerciseHistory(context.Background(), trade.HistoryRequest{
			ChainID: c.ChainID, User: common.HexToAddress(c.User), Market: common.HexToAddress(c.Market), First: c.First, Skip: c.Skip,
		})
		if err != nil {
			t.Fatalf("%s: %v", c.Scenario, err)
		}
		if len(got.Records) != len(c.Records) || len(c.Records) == 0 {
			t.Fatalf("%s first=%d skip=%d: %d records, want %d", c.Scenario, c.First, c.Skip, len(got.Records), len(c.Records))
		}
		for i, want := range c.Records {
			b, _ := json.Marshal(got.Records[i])
			var have map[string]any
			_ = json.Unmarshal(b, &have)
			for _, k := range []string{"optionId", "type", "premium", "profit", "size", "timestamp", "txHash"} {
				if have[k] != want[k] {
					t.Errorf("%s record %d: %s = %v, want %v", c.Scenario, i, k, have[k], want[k])
				}
			}
			for _, k := range []string{"strike", "exercisePrice"} {
				w, _ := strconv.ParseFloat(want[k].(string), 64)
				if have[k].(float64) != w {
					t.Errorf("%s record %d: %s = %v, want %s", c.Scenario, i, k, have[k], want[k])
				}
			}
			// the scenarios' owners exercise themselves: paid, not delegated, the whole profit theirs
			if have["exerciser"] != strings.ToLower(c.User) || have["delegated"] != false || have["profitToOwner"] != want["profit"] {
				t.Errorf("%s record %d: exerciser %v delegated %v profitToOwner %v, want %s false %v", c.Scenario, i, have["exerciser"], have["delegated"], have["profitToOwner"], strings.ToLower(c.User), want["profit"])
			}
			if have["ttl"].(float64) != want["ttl"].(float64) {
				t.Errorf("record %d: ttl %v, want %v", i, have["ttl"], want["ttl"])
			}
			for _, k := range []string{"sizeToken", "profitToken"} {
				hb, _ := json.Marshal(have[k])
				wb, _ := json.Marshal(want[k])
				if string(hb) != string(wb) {
					t.Errorf("record %d: %s = %s, want %s", i, k, hb, wb)
				}
			}
		}
		if c.ChainID == 5000 {
			sawInverted = true
		}
	}
	if !sawInverted {
		t.Fatal("no inverted-market case in history.json")
	}
}
