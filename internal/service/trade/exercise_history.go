package trade

import (
	"context"
	"fmt"
	"math/big"
	"regexp"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Paging bounds of the history and positions requests: Graph Node's own
// limits, so a page the subgraph would refuse is the client's error (400),
// not an upstream's (502).
const (
	MaxFirst = subgraph.MaxFirst
	MaxSkip  = subgraph.MaxSkip
)

// HistoryRequest is a validated exercise-history request.
type HistoryRequest struct {
	ChainID uint64
	User    common.Address
	Market  common.Address
	First   int
	Skip    int
}

// ExerciseHistory is one page of records and the block they reflect.
type ExerciseHistory struct {
	Records []ExerciseRecord
	Block   uint64
}

// ExerciseRecord is one past exercise (domain.md section 7).
type ExerciseRecord struct {
	// OptionID is additive: the ERC721 token id, decimal.
	OptionID      string      `json:"optionId"`
	Type          string      `json:"type"`
	Strike        float64     `json:"strike"`
	ExercisePrice float64     `json:"exercisePrice"`
	Premium       string      `json:"premium"`
	Profit        string      `json:"profit"`
	Size          string      `json:"size"`
	TTL           int64       `json:"ttl"`
	Timestamp     string      `json:"timestamp"`
	TxHash        string      `json:"txHash"`
	SizeToken     vocab.Token `json:"sizeToken"`
	ProfitToken   vocab.Token `json:"profitToken"`
	// Exerciser, Delegated and ProfitToOwner are additive: the account the
	// market paid the (gross) profit to, whether that was not the owner (a
	// delegate or an auto-exercise contract), and the owner's net profit:
	// what reached the owner in that transaction (after a keeper's fee; 0
	// when a delegate kept it), null when the subgraph could not tell.
	Exerciser     string  `json:"exerciser"`
	Delegated     bool    `json:"delegated"`
	ProfitToOwner *string `json:"profitToOwner"`
}

var txHashRE = regexp.MustCompile(`^0x[0-9a-f]{64}$`)

// ExerciseHistory returns a page of the user's exercises on a market, newest
// first. The subgraph query and the market read are independent and run in
// parallel; the market's immutables are cached, so a warm read costs one
// subgraph query.
func (s *Trade) ExerciseHistory(ctx context.Context, req HistoryRequest) (ExerciseHistory, error) {
	records, meta, err := userRecords(ctx, s, req, vocab.Subgraph.ExerciseHistory, func(e subgraph.Exercise, info *chain.MarketInfo, m clamm.Market) (ExerciseRecord, error) {
		r, err := exerciseRecord(e, info, m)
		if err != nil {
			return r, fmt.Errorf("exercise %s: %w", e.ID, err)
		}
		return r, nil
	})
	return ExerciseHistory{Records: records, Block: meta.Block}, err
}

// userRecords reads a market's immutables and one page of a user's
// entities from the subgraph in parallel, and builds a record from each
// entity; an entity that does not build is garbage from the subgraph. It
// returns the records and the page's _meta.
func userRecords[E, R any](ctx context.Context, s *Trade, req HistoryRequest,
	read func(vocab.Subgraph, context.Context, subgraph.HistoryQuery) ([]E, subgraph.Meta, error),
	build func(E, *chain.MarketInfo, clamm.Market) (R, error)) ([]R, subgraph.Meta, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return nil, subgraph.Meta{}, err
	}
	var (
		info *chain.MarketInfo
		list []E
		meta subgraph.Meta
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { info, err = up.Chain.Market(gctx, req.Market); return })
	g.Go(func() (err error) {
		list, meta, err = read(up.Subgraph, gctx, subgraph.HistoryQuery{User: req.User, Market: req.Market, First: req.First, Skip: req.Skip})
		return
	})
	if err := g.Wait(); err != nil {
		return nil, subgraph.Meta{}, err
	}
	tok0, tok1 := info.TokenByAddress(info.Token0), info.TokenByAddress(info.Token1)
	m := clamm.Market{Token0IsCall: info.Token0IsCall(), Decimals0: int(tok0.Decimals), Decimals1: int(tok1.Decimals)}
	records := make([]R, 0, len(list))
	for _, e := range list {
		r, err := build(e, info, m)
		if err != nil {
			return nil, subgraph.Meta{}, vocab.SubgraphGarbage(err)
		}
		records = append(records, r)
	}
	return records, meta, nil
}

func exerciseRecord(e subgraph.Exercise, info *chain.MarketInfo, m clamm.Market) (ExerciseRecord, error) {
	o := e.Option
	if o.TickLower >= o.TickUpper || o.TickLower < clamm.MinTick || o.TickUpper > clamm.MaxTick {
		return ExerciseRecord{}, fmt.Errorf("option ticks [%d, %d]", o.TickLower, o.TickUpper)
	}
	if !txHashRE.MatchString(e.TxHash) {
		return ExerciseRecord{}, fmt.Errorf("transaction hash %q", e.TxHash)
	}
	ttl := new(big.Int).Sub(o.Expiry.Int, o.MintTimestamp.Int)
	if !ttl.IsInt64() || ttl.Sign() < 0 {
		return ExerciseRecord{}, fmt.Errorf("expiry %s before mint %s", o.Expiry, o.MintTimestamp)
	}
	// The collateral (sizeToken) is the call asset for calls and the put
	// asset for puts; the profit comes in the other asset.
	r := ExerciseRecord{
		OptionID:      o.TokenID.String(),
		Type:          "put",
		Strike:        m.TickPrice(clamm.PutStrikeTick(o.TickLower, o.TickUpper)),
		ExercisePrice: m.SqrtPriceX96Price(e.SqrtPriceX96.Int),
		Premium:       o.Premium.String(),
		Profit:        e.TotalProfit.String(),
		Size:          e.TotalAssetRelocked.String(),
		TTL:           ttl.Int64(),
		Timestamp:     e.Timestamp.String(),
		TxHash:        e.TxHash,
		SizeToken:     vocab.TokenOf(info.PutAsset),
		ProfitToken:   vocab.TokenOf(info.CallAsset),
		Exerciser:     e.Exerciser,
		Delegated:     e.Delegated,
	}
	if e.ProfitToOwner != nil {
		s := e.ProfitToOwner.String()
		r.ProfitToOwner = &s
	}
	if o.IsCall {
		r.Type = "call"
		r.Strike = m.TickPrice(clamm.CallStrikeTick(o.TickLower, o.TickUpper))
		r.SizeToken, r.ProfitToken = vocab.TokenOf(info.CallAsset), vocab.TokenOf(info.PutAsset)
	}
	return r, nil
}
