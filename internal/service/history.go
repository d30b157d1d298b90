package service

import (
	"context"
	"fmt"
	"math/big"
	"regexp"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
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
	OptionID      string  `json:"optionId"`
	Type          string  `json:"type"`
	Strike        float64 `json:"strike"`
	ExercisePrice float64 `json:"exercisePrice"`
	Premium       string  `json:"premium"`
	Profit        string  `json:"profit"`
	Size          string  `json:"size"`
	TTL           int64   `json:"ttl"`
	Timestamp     string  `json:"timestamp"`
	TxHash        string  `json:"txHash"`
	SizeToken     Token   `json:"sizeToken"`
	ProfitToken   Token   `json:"profitToken"`
}

var txHashRE = regexp.MustCompile(`^0x[0-9a-f]{64}$`)

// ExerciseHistory returns a page of the user's exercises on a market, newest
// first. The subgraph query and the market read are independent and run in
// parallel; the market's immutables are cached, so a warm read costs one
// subgraph query.
func (s *Service) ExerciseHistory(ctx context.Context, req HistoryRequest) (ExerciseHistory, error) {
	up, err := s.upstreams(req.ChainID, true)
	if err != nil {
		return ExerciseHistory{}, err
	}
	var (
		info *chain.MarketInfo
		exs  []subgraph.Exercise
		meta subgraph.Meta
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		info, err = up.Chain.Market(gctx, req.Market)
		return err
	})
	g.Go(func() error {
		var err error
		exs, meta, err = up.Subgraph.ExerciseHistory(gctx, subgraph.HistoryQuery{User: req.User, Market: req.Market, First: req.First, Skip: req.Skip})
		return err
	})
	if err := g.Wait(); err != nil {
		return ExerciseHistory{}, err
	}
	tok0, tok1 := info.TokenByAddress(info.Token0), info.TokenByAddress(info.Token1)
	m := clamm.Market{Token0IsCall: info.Token0IsCall(), Decimals0: int(tok0.Decimals), Decimals1: int(tok1.Decimals)}
	records := make([]ExerciseRecord, 0, len(exs))
	for _, e := range exs {
		r, err := exerciseRecord(e, info, m)
		if err != nil {
			return ExerciseHistory{}, subgraphGarbage(fmt.Errorf("exercise %s: %w", e.ID, err))
		}
		records = append(records, r)
	}
	return ExerciseHistory{Records: records, Block: meta.Block}, nil
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
		SizeToken:     tokenJSON(info.PutAsset),
		ProfitToken:   tokenJSON(info.CallAsset),
	}
	if o.IsCall {
		r.Type = "call"
		r.Strike = m.TickPrice(clamm.CallStrikeTick(o.TickLower, o.TickUpper))
		r.SizeToken, r.ProfitToken = tokenJSON(info.CallAsset), tokenJSON(info.PutAsset)
	}
	return r, nil
}
