package service

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
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

// thinningSource is a market whose user owns the options the subgraph
// names, named pages of pageSize (ids 1 up to named), except that the
// chain shows option exercised with no liquidity left: the positions page
// that names it holds one record fewer than it names.
type thinningSource struct {
	vocab.Chain
	vocab.Subgraph
	info      *chain.MarketInfo
	user      common.Address
	named     int
	exercised int64
	skips     []int
}

func (f *thinningSource) Market(context.Context, common.Address) (*chain.MarketInfo, error) {
	return f.info, nil
}

func (f *thinningSource) MarketSnapshot(context.Context, common.Address) (*chain.MarketInfo, chain.PoolState, error) {
	return f.info, chain.PoolState{SqrtPriceX96: new(big.Int).Lsh(big.NewInt(1), 96)}, nil
}

func (f *thinningSource) PurchaseHistory(context.Context, subgraph.HistoryQuery) ([]subgraph.Purchase, subgraph.Meta, error) {
	return nil, subgraph.Meta{Block: 7, Timestamp: 1000}, nil
}

func (f *thinningSource) ExerciseHistory(context.Context, subgraph.HistoryQuery) ([]subgraph.Exercise, subgraph.Meta, error) {
	return nil, subgraph.Meta{Block: 7, Timestamp: 1000}, nil
}

func (f *thinningSource) PurchasePositions(_ context.Context, q subgraph.HistoryQuery) (subgraph.HeldPage, subgraph.Meta, error) {
	f.skips = append(f.skips, q.Skip)
	page := subgraph.HeldPage{DelegatesRead: true}
	for id := q.Skip + 1; id <= min(f.named, q.Skip+q.First); id++ {
		n := subgraph.BigInt{Int: big.NewInt(int64(id))}
		page.Options = append(page.Options, subgraph.HeldOption{ID: fmt.Sprint(id), TokenID: n, Expiry: subgraph.BigInt{Int: big.NewInt(5000)},
			Premium: subgraph.BigInt{Int: big.NewInt(1)}, ProtocolFees: subgraph.BigInt{Int: big.NewInt(0)}, TotalAssetWithdrawn: subgraph.BigInt{Int: big.NewInt(1)},
			MintTimestamp: subgraph.BigInt{Int: big.NewInt(900)}, MintTxHash: "0x" + strings.Repeat("ab", 32)})
	}
	return page, subgraph.Meta{Block: 7, Timestamp: 1000}, nil
}

func (f *thinningSource) Positions(_ context.Context, _ common.Address, ids []*big.Int) ([]chain.PositionResult, error) {
	out := make([]chain.PositionResult, len(ids))
	for i, id := range ids {
		left := big.NewInt(1e6)
		if id.Int64() == f.exercised {
			left = new(big.Int)
		}
		out[i].Position = &chain.Position{Owner: f.user, Version: chain.MarketV2, BlockTimestamp: big.NewInt(1000),
			Data: chain.OptionData{TickLower: 100, TickUpper: 110, Expiry: big.NewInt(5000), IsCall: true},
			Legs: []chain.OptionLeg{{Pool: f.info.Pool, TickLower: 100, TickUpper: 110, LiquidityToUse: left}}}
	}
	return out, nil
}

func (f *thinningSource) DelegateView(context.Context, common.Address, common.Address, []chain.Delegation) (*chain.AutoExerciser, []bool, error) {
	return nil, nil, nil
}

func (f *thinningSource) ReadPricing(context.Context, common.Address, common.Address, []contracts.PricingAsk) (contracts.PricingHead, []contracts.PricingAnswer, error) {
	return contracts.PricingHead{}, nil, nil // no pricing: the Greeks are null, the options still listed
}

// A positions page the chain thins (an option of the first page exercised
// in full since the subgraph's block) is not the last: the portfolio reads
// on by the records the subgraph named, so the second page's options are
// listed (they were dropped when the page's kept records decided).
func TestPortfolioReadsPastAThinnedPositionsPage(t *testing.T) {
	m := common.HexToAddress("0xa1")
	info := &chain.MarketInfo{Market: m, Pool: common.HexToAddress("0xb1"), Fee: 500,
		CallAsset: chain.Token{Address: common.HexToAddress("0x01"), Decimals: 18}, PutAsset: chain.Token{Address: common.HexToAddress("0x02"), Decimals: 6},
		Token0: common.HexToAddress("0x01"), Token1: common.HexToAddress("0x02")}
	user := common.HexToAddress("0xb0")
	src := &thinningSource{info: info, user: user, named: pageSize + 2, exercised: 17}
	up := &vocab.Upstreams{Config: config.Default().Chains[42161], Chain: src, Subgraph: src}
	s := New(map[uint64]*vocab.Upstreams{42161: up})
	got, err := s.portfolioMarket(context.Background(), PortfolioRequest{ChainID: 42161, User: user}, market.TradedMarket{Address: m})
	if err != nil {
		t.Fatal(err)
	}
	open := 0
	for _, o := range got.Options {
		if o.Open {
			open++
		}
		if o.OptionID == "17" {
			t.Errorf("option 17, exercised in full, listed: %+v", o)
		}
	}
	if want := pageSize + 1; open != want || !slices.Equal(src.skips, []int{0, pageSize}) {
		t.Errorf("%d open options from position pages at skips %v; want %d from skips 0 and %d", open, src.skips, want, pageSize)
	}
}
