package trade

import (
	"context"
	"fmt"
	"math/big"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// PurchaseHistory is one page of purchase records and the block they reflect.
type PurchaseHistory struct {
	Records []PurchaseRecord
	Block   uint64
}

// PurchaseRecord is one past purchase (a LogMintOption whose caller was the
// user). Amounts are raw base units: size, premium and protocolFees are all
// in the collateral (sizeToken: the call asset for calls, the put asset for
// puts), which is the token mintOption charges the premium and fees in.
type PurchaseRecord struct {
	OptionID     string  `json:"optionId"`
	Type         string  `json:"type"`
	Strike       float64 `json:"strike"`
	Size         string  `json:"size"`
	Premium      string  `json:"premium"`
	ProtocolFees string  `json:"protocolFees"`
	TTL          int64   `json:"ttl"`
	Expiry       string  `json:"expiry"`
	Timestamp    string  `json:"timestamp"`
	TxHash       string  `json:"txHash"`
	// Caller called mintOption: the buyer itself, or the router or
	// limit-order contract that bought for it; nil when the subgraph's
	// document does not give it.
	Caller       *string     `json:"caller"`
	SizeToken    vocab.Token `json:"sizeToken"`
	PremiumToken vocab.Token `json:"premiumToken"`
	// Outcome is what became of the option by the answer's block: open,
	// exercised (by whom), expired, settled or expired worthless.
	Outcome Outcome `json:"outcome"`
	// option is the option as indexed, for its outcome once the answer's
	// block time is known.
	option subgraph.PurchasedOption
}

// PurchaseHistory returns a page of the options the user bought on a
// market, newest first. The buyer is the account holding the option when
// the purchase transaction ended (the subgraph's Purchase.buyer: the
// receiver when a router or limit order bought for it, not the router);
// an option bought and then transferred stays in its buyer's history (the
// positions endpoint follows ownership). Reads run as for ExerciseHistory.
func (s *Trade) PurchaseHistory(ctx context.Context, req HistoryRequest) (PurchaseHistory, error) {
	records, meta, err := userRecords(ctx, s, req, vocab.Subgraph.PurchaseHistory, func(p subgraph.Purchase, info *chain.MarketInfo, m clamm.Market) (PurchaseRecord, error) {
		r, err := purchaseRecord(p, info, m)
		if err != nil {
			return r, fmt.Errorf("purchase %s: %w", p.ID, err)
		}
		return r, nil
	})
	if err != nil {
		return PurchaseHistory{}, err
	}
	now := meta.Timestamp
	if now == 0 && len(records) > 0 { // a page asked by number names no time: the chain's at that block
		up, _ := s.chains.Of(req.ChainID, true)
		if now, err = up.Chain.BlockTime(ctx); err != nil {
			return PurchaseHistory{}, err
		}
	}
	for i := range records {
		o := records[i].option
		records[i].Outcome = outcomeOf(o.Fate, o.LastSettlement, o.Expiry.Int, now)
	}
	return PurchaseHistory{Records: records, Block: meta.Block}, err
}

func purchaseRecord(p subgraph.Purchase, info *chain.MarketInfo, m clamm.Market) (PurchaseRecord, error) {
	o := p.Option
	if o.TickLower >= o.TickUpper || o.TickLower < clamm.MinTick || o.TickUpper > clamm.MaxTick {
		return PurchaseRecord{}, fmt.Errorf("option ticks [%d, %d]", o.TickLower, o.TickUpper)
	}
	if !txHashRE.MatchString(p.TxHash) {
		return PurchaseRecord{}, fmt.Errorf("transaction hash %q", p.TxHash)
	}
	ttl := new(big.Int).Sub(o.Expiry.Int, o.MintTimestamp.Int)
	if !ttl.IsInt64() || ttl.Sign() < 0 {
		return PurchaseRecord{}, fmt.Errorf("expiry %s before mint %s", o.Expiry, o.MintTimestamp)
	}
	r := PurchaseRecord{
		OptionID:     o.TokenID.String(),
		Type:         "put",
		Strike:       m.TickPrice(clamm.PutStrikeTick(o.TickLower, o.TickUpper)),
		Size:         p.TotalAssetWithdrawn.String(),
		Premium:      p.Premium.String(),
		ProtocolFees: p.ProtocolFees.String(),
		TTL:          ttl.Int64(),
		Expiry:       o.Expiry.String(),
		Timestamp:    p.Timestamp.String(),
		TxHash:       p.TxHash,
		SizeToken:    vocab.TokenOf(info.PutAsset),
		option:       o,
	}
	if p.Caller != nil {
		r.Caller = vocab.Ptr(p.Caller.Addr().Hex())
	}
	if p.IsCall {
		r.Type = "call"
		r.Strike = m.TickPrice(clamm.CallStrikeTick(o.TickLower, o.TickUpper))
		r.SizeToken = vocab.TokenOf(info.CallAsset)
	}
	r.PremiumToken = r.SizeToken
	return r, nil
}
