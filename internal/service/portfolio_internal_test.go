package service

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// oneMarketChain knows one market.
type oneMarketChain struct {
	vocab.Chain
	info *chain.MarketInfo
}

func (c oneMarketChain) Market(context.Context, common.Address) (*chain.MarketInfo, error) {
	return c.info, nil
}

// boardFailing lists one market and answers its board reads with err,
// or, when err is nil, with full pages (the leaderboard's bound).
type boardFailing struct {
	vocab.Subgraph
	market common.Address
	err    error
}

func (b boardFailing) OptionMarkets(context.Context) ([]subgraph.Market, subgraph.Meta, error) {
	return []subgraph.Market{{ID: subgraph.Address(b.market)}}, subgraph.Meta{Block: 7}, nil
}

func (b boardFailing) BoardPurchases(_ context.Context, q subgraph.BoardQuery) ([]subgraph.BoardPurchase, subgraph.Meta, error) {
	if b.err != nil {
		return nil, subgraph.Meta{}, b.err
	}
	out := make([]subgraph.BoardPurchase, q.First)
	for i := range out {
		out[i] = subgraph.BoardPurchase{Market: subgraph.Address(b.market), StatsPurchase: subgraph.StatsPurchase{ID: fmt.Sprint(i)}}
	}
	return out, subgraph.Meta{Block: 7}, nil
}

func (b boardFailing) BoardExercises(context.Context, subgraph.BoardQuery) ([]subgraph.BoardExercise, subgraph.Meta, error) {
	return nil, subgraph.Meta{Block: 7}, b.err
}

// realizedUsd is null only for the documented bound (a history of a page
// of events or more); a subgraph that fails (a 503, a timeout) fails the
// portfolio, so no null meaning "history too large" is cached for it.
func TestPortfolioRealizedUSDNullOnlyAtTheBound(t *testing.T) {
	m := common.HexToAddress("0xa1")
	info := &chain.MarketInfo{Market: m, CallAsset: chain.Token{Address: common.HexToAddress("0x01"), Decimals: 18}, PutAsset: chain.Token{Address: common.HexToAddress("0x02"), Decimals: 6}, Token0: common.HexToAddress("0x01")}
	cfg := config.Default()
	for _, c := range []struct {
		name string
		err  error
		want *problem.Code // nil: answered null
	}{
		{"bound", nil, nil},
		{"503", problem.New(problem.SubgraphUnavailable, "subgraph answered 503"), problem.SubgraphUnavailable},
		{"timeout", problem.Upstream(problem.Subgraph, context.DeadlineExceeded), problem.SubgraphTimeout},
	} {
		up := &vocab.Upstreams{Config: cfg.Chains[42161], Chain: oneMarketChain{info: info}, Subgraph: boardFailing{market: m, err: c.err}}
		got, err := New(map[uint64]*vocab.Upstreams{42161: up}).realizedUSD(context.Background(), PortfolioRequest{ChainID: 42161, User: common.HexToAddress("0xb0")})
		if c.want == nil {
			if err != nil || got != nil {
				t.Errorf("%s: %v, %v; want null", c.name, got, err)
			}
			continue
		}
		if got != nil || err == nil || problem.As(err).Code != c.want {
			t.Errorf("%s: %v, %v; want %s", c.name, got, err, c.want)
		}
	}
}

// A source of more than maxSkip+pageSize records is refused, never read
// in part; one whose pages the chain thins (fewer records than the
// subgraph named) is read on to its short page. lpPositions reads
// DepositPositions' pages through readPages, Named as named.
func TestReadPagesRefusesPastTheBound(t *testing.T) {
	over := errors.New("over")
	reader := func(total, kept int, reads *int) func(context.Context, int) ([]int, int, error) {
		return func(_ context.Context, skip int) ([]int, int, error) {
			*reads++
			named := min(max(total-skip, 0), pageSize)
			return make([]int, min(named, kept)), named, nil
		}
	}
	for _, c := range []struct {
		total, kept, want, reads int
		refused                  bool
	}{
		{maxSkip + pageSize + 1, pageSize, 0, 6, true},
		{maxSkip + pageSize - 1, pageSize, maxSkip + pageSize - 1, 6, false},
		{2500, 3, 9, 3, false}, // the chain keeps 3 of each page
		{0, 0, 0, 1, false},
	} {
		reads := 0
		got, err := readPages(context.Background(), reader(c.total, c.kept, &reads), func() error { return over })
		if c.refused != (err == over) || (err != nil && !c.refused) || len(got) != c.want || reads != c.reads {
			t.Errorf("%d records (%d kept a page): %d read in %d pages, %v; want %d in %d, refused %v", c.total, c.kept, len(got), reads, err, c.want, c.reads, c.refused)
		}
	}
}
