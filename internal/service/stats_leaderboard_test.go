package service_test

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// boardChain knows one market.
type boardChain struct {
	vocab.Chain
	info *chain.MarketInfo
}

func (c boardChain) Market(_ context.Context, m common.Address) (*chain.MarketInfo, error) {
	if m != c.info.Market {
		return nil, problem.New(problem.MarketNotFound, "no market %s", m.Hex())
	}
	return c.info, nil
}

// boardEvents answers purchases and exercises of the market, n of each
// (at most the page asked).
type boardEvents struct {
	vocab.Subgraph
	purchases, exercises int
}

func (b boardEvents) BoardPurchases(_ context.Context, q subgraph.BoardQuery) ([]subgraph.BoardPurchase, subgraph.Meta, error) {
	out := make([]subgraph.BoardPurchase, min(b.purchases, q.First))
	one := subgraph.BigInt{Int: big.NewInt(1)}
	for i := range out {
		out[i] = subgraph.BoardPurchase{Market: subgraph.Address(q.Markets[0]), StatsPurchase: subgraph.StatsPurchase{ID: fmt.Sprint(i), Buyer: subgraph.Address(common.BigToAddress(big.NewInt(int64(i + 1)))),
			Premium: one, ProtocolFees: one, TotalAssetWithdrawn: one, SqrtPriceX96: subgraph.BigInt{Int: new(big.Int).Lsh(one.Int, 96)}}}
	}
	return out, subgraph.Meta{Block: 7}, nil
}

func (b boardEvents) BoardExercises(_ context.Context, q subgraph.BoardQuery) ([]subgraph.BoardExercise, subgraph.Meta, error) {
	out := make([]subgraph.BoardExercise, min(b.exercises, q.First))
	for i := range out {
		out[i] = subgraph.BoardExercise{Market: subgraph.Address(q.Markets[0]), User: subgraph.Address(common.BigToAddress(big.NewInt(int64(i + 1)))),
			StatsExercise: subgraph.StatsExercise{ID: fmt.Sprint(i), SqrtPriceX96: subgraph.BigInt{Int: new(big.Int).Lsh(big.NewInt(1), 96)}}}
	}
	return out, subgraph.Meta{Block: 7}, nil
}

// A window holding a full page of purchases or of exercises is the
// client's 400 (param to), never an answer counting part of it; one event
// fewer is answered whole.
func TestLeaderboardRefusesAWindowOverItsReads(t *testing.T) {
	m := common.HexToAddress("0xa1")
	info := &chain.MarketInfo{Market: m, CallAsset: chain.Token{Address: common.HexToAddress("0x01"), Decimals: 18}, PutAsset: chain.Token{Address: common.HexToAddress("0x02"), Decimals: 6}, Token0: common.HexToAddress("0x01")}
	cfg := config.Default()
	for _, c := range []struct {
		purchases, exercises int
		refused              bool
	}{
		{market.MaxBoardEvents - 1, market.MaxBoardEvents - 1, false},
		{market.MaxBoardEvents, 0, true},
		{0, market.MaxBoardEvents, true},
	} {
		up := &vocab.Upstreams{Config: cfg.Chains[42161], Chain: boardChain{info: info}, Subgraph: boardEvents{purchases: c.purchases, exercises: c.exercises}}
		got, err := service.New(map[uint64]*vocab.Upstreams{42161: up}).Leaderboard(context.Background(), market.LeaderboardRequest{ChainID: 42161, Market: &m, From: 0, To: 100, First: 10})
		if c.refused {
			if pe := problem.As(err); pe.Code != problem.InvalidParameter || pe.Param != "to" {
				t.Errorf("%d purchases, %d exercises: %v; want 400 on to", c.purchases, c.exercises, err)
			}
			continue
		}
		if err != nil || got.Purchases != c.purchases || got.Exercises != c.exercises || got.Traders != c.purchases || len(got.Entries) != 10 || got.Block() != 7 {
			t.Errorf("%d purchases, %d exercises: %+v (%d traders), %v", c.purchases, c.exercises, got.Purchases, got.Traders, err)
		}
	}
}
