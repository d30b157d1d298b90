package chain

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// market is a scripted exerciseOption: legs run in index order; a leg's
// profit may depend on which earlier legs ran (price impact), and a leg may
// revert. It counts round trips.
type market struct {
	profit  func(leg int, before []int) int64 // before: the legs that ran earlier
	reverts map[int]string                    // leg -> custom error
	nodeErr error
	batches int
}

func (m *market) CallContext(ctx context.Context, result any, method string, args ...any) error {
	el := []rpc.BatchElem{{Method: method, Args: args, Result: result}}
	if err := m.BatchCallContext(ctx, el); err != nil {
		return err
	}
	return el[0].Error
}

func (m *market) BatchCallContext(_ context.Context, b []rpc.BatchElem) error {
	m.batches++
	for i := range b {
		if m.nodeErr != nil {
			b[i].Error = m.nodeErr
			continue
		}
		data := b[i].Args[0].(map[string]any)["data"].(hexutil.Bytes)
		vals, err := contracts.OptionMarketV2.Methods["exerciseOption"].Inputs.Unpack(data[4:])
		if err != nil {
			return err
		}
		liq := vals[0].(struct {
			OptionId            *big.Int         `json:"optionId"`
			Swapper             []common.Address `json:"swapper"`
			SwapData            [][]byte         `json:"swapData"`
			LiquidityToExercise []*big.Int       `json:"liquidityToExercise"`
		}).LiquidityToExercise
		var ran []int
		total := new(big.Int)
		var revert string
		for leg, l := range liq {
			if l.Sign() == 0 {
				continue
			}
			if name, ok := m.reverts[leg]; ok {
				revert = name
				break
			}
			total.Add(total, big.NewInt(m.profit(leg, ran)))
			ran = append(ran, leg)
		}
		if revert != "" {
			b[i].Error = jsonErr{3, "execution reverted", hexutil.Encode(contracts.OptionMarketErrors.Errors[revert].ID.Bytes()[:4])}
			continue
		}
		out, _ := contracts.OptionMarketV2.Methods["exerciseOption"].Outputs.Pack(common.Address{}, common.Address{}, total, new(big.Int))
		*(b[i].Result.(*hexutil.Bytes)) = out
	}
	return nil
}

func params(n int) clamm.ExerciseParams {
	p := clamm.ExerciseParams{OptionID: big.NewInt(1), Swapper: make([]common.Address, n), SwapData: make([][]byte, n), LiquidityToExercise: make([]*big.Int, n)}
	for i := range p.LiquidityToExercise {
		p.SwapData[i] = []byte{}
		p.LiquidityToExercise[i] = big.NewInt(1)
	}
	return p
}

// Each leg's delta is what it adds after the legs accepted before it; a
// reverting leg is left out with its reason and the later legs are
// simulated again without it before them; a leg that adds nothing is left
// out too. One batch when nothing is left out, one more per left-out leg.
func TestSimulateSequence(t *testing.T) {
	// Leg 2 earns 100, less 30 for each earlier leg that ran (impact).
	impact := func(leg int, before []int) int64 { return 100 - 30*int64(len(before)) }
	m := &market{profit: impact}
	r := newTestReader(t, m, common.Address{})
	out, err := r.SimulateSequence(context.Background(), common.Address{1}, common.Address{2}, params(3))
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{100, 70, 40}
	for i, o := range out {
		if !o.Exercised || o.Delta.Int64() != want[i] {
			t.Fatalf("leg %d: %+v, want delta %d", i, o, want[i])
		}
	}
	if m.batches != 1 {
		t.Fatalf("%d round trips, want 1", m.batches)
	}

	m = &market{profit: impact, reverts: map[int]string{1: "DopexV2OptionMarket__NotEnoughAfterSwap"}}
	r = newTestReader(t, m, common.Address{})
	p := params(4)
	p.LiquidityToExercise[3] = new(big.Int) // not a candidate
	out, err = r.SimulateSequence(context.Background(), common.Address{1}, common.Address{2}, p)
	if err != nil {
		t.Fatal(err)
	}
	if !out[0].Exercised || out[1].Exercised || out[1].Reason != "DopexV2OptionMarket__NotEnoughAfterSwap" ||
		!out[2].Exercised || out[2].Delta.Int64() != 70 || out[3].Exercised || out[3].Reason != "" || m.batches != 2 {
		t.Fatalf("%+v after %d round trips", out, m.batches)
	}

	// A leg adding nothing (here: the third leg to run) is left out.
	m = &market{profit: func(leg int, before []int) int64 { return 100 - 50*int64(len(before)) }}
	out, err = newTestReader(t, m, common.Address{}).SimulateSequence(context.Background(), common.Address{1}, common.Address{2}, params(3))
	if err != nil || !out[1].Exercised || out[2].Exercised || out[2].Reason != NoProfit {
		t.Fatalf("%v %+v", err, out)
	}

	// A market-level revert (not the owner) is not a leg's fault.
	m = &market{profit: impact, reverts: map[int]string{0: "DopexV2OptionMarket__NotOwnerOrDelegator"}}
	_, err = newTestReader(t, m, common.Address{}).SimulateSequence(context.Background(), common.Address{1}, common.Address{2}, params(2))
	var rev *RevertError
	if !errors.As(err, &rev) || rev.Reason != "DopexV2OptionMarket__NotOwnerOrDelegator" {
		t.Fatalf("market-level revert: %v", err)
	}
}

// A node failure while simulating is the upstream's error (502, or 503
// for a rate limit, as an HTTP 429 is), never a revert (issue 16 item 2).
func TestSimulationNodeFailure(t *testing.T) {
	for _, nodeErr := range []error{jsonErr{-32000, "header not found", nil}, jsonErr{-32005, "rate limited", "0x"}, jsonErr{-32603, "internal error", nil}} {
		m := &market{nodeErr: nodeErr}
		r := newTestReader(t, m, common.Address{})
		_, err := r.SimulateSequence(context.Background(), common.Address{1}, common.Address{2}, params(2))
		want := problem.KindUpstreamError
		if nodeErr.(jsonErr).code == -32005 {
			want = problem.KindUpstreamUnavailable
		}
		var rev *RevertError
		if errors.As(err, &rev) || problem.As(err).Kind() != want {
			t.Errorf("%v: %v", nodeErr, err)
		}
		_, err = r.SimulateExercise(context.Background(), common.Address{1}, common.Address{2}, []byte{1, 2, 3, 4})
		if errors.As(err, &rev) || problem.As(err).Kind() != want {
			t.Errorf("%v: %v", nodeErr, err)
		}
	}
}
