package pipelinetest

import (
	"github.com/clamm-gateway/clamm-gateway/subgraph/mappinghosttest"
	"github.com/clamm-gateway/clamm-gateway/subgraph/subgraphtest"
)

// servePurchases adds the stored Purchase and Option entities to the fake
// Graph Node, as the purchase-history and positions documents select them.
func servePurchases(st *mappinghosttest.Store, s *subgraphtest.Server) {
	for _, id := range st.All("Purchase") {
		x := st.Get("Purchase", id)
		o := st.Get("Option", x["option"].Str)
		if o == nil {
			continue
		}
		s.Purchases = append(s.Purchases, subgraphtest.Purchase{
			ID: id, Market: hexOf(x["market"]), Buyer: hexOf(x["buyer"]), TxHash: hexOf(x["txHash"]),
			Timestamp: x["timestamp"].Big.String(), IsCall: x["isCall"].Bool,
			Premium: x["premium"].Big.String(), ProtocolFees: x["protocolFees"].Big.String(), TotalAssetWithdrawn: x["totalAssetWithdrawn"].Big.String(),
			Option: subgraphtest.PurchasedOption{
				TokenID: o["tokenId"].Big.String(), TickLower: int(o["tickLower"].Int), TickUpper: int(o["tickUpper"].Int),
				Expiry: o["expiry"].Big.String(), MintTimestamp: o["mintTimestamp"].Big.String(),
			},
		})
	}
	for _, id := range st.All("Option") {
		o := st.Get("Option", id)
		s.Options = append(s.Options, subgraphtest.Option{
			ID: id, Market: hexOf(o["market"]), Owner: hexOf(o["owner"]), State: o["state"].Str,
			TokenID: o["tokenId"].Big.String(), IsCall: o["isCall"].Bool, TickLower: int(o["tickLower"].Int), TickUpper: int(o["tickUpper"].Int),
			Expiry: o["expiry"].Big.String(), Premium: o["premium"].Big.String(), ProtocolFees: o["protocolFees"].Big.String(),
			TotalAssetWithdrawn: o["totalAssetWithdrawn"].Big.String(), MintTimestamp: o["mintTimestamp"].Big.String(), MintTxHash: hexOf(o["mintTxHash"]),
		})
	}
}

// serveMarkets adds the stored Market entities, each with its
// MarketDayData (dayData, derived from the days' market field).
func serveMarkets(st *mappinghosttest.Store, s *subgraphtest.Server) {
	sums := func(e mappinghosttest.Entity) subgraphtest.MarketSums {
		return subgraphtest.MarketSums{
			Purchases: int(e["purchases"].Int), Exercises: int(e["exercises"].Int),
			CallVolume: e["callVolume"].Big.String(), PutVolume: e["putVolume"].Big.String(),
			CallPremium: e["callPremium"].Big.String(), PutPremium: e["putPremium"].Big.String(),
			CallProtocolFees: e["callProtocolFees"].Big.String(), PutProtocolFees: e["putProtocolFees"].Big.String(),
		}
	}
	days := map[string][]subgraphtest.MarketDay{}
	for _, id := range st.All("MarketDayData") {
		d := st.Get("MarketDayData", id)
		days[d["market"].Str] = append(days[d["market"].Str], subgraphtest.MarketDay{Start: d["start"].Int, MarketSums: sums(d)})
	}
	for _, id := range st.All("Market") {
		m := st.Get("Market", id)
		s.Markets = append(s.Markets, subgraphtest.Market{
			ID: id, Version: int(m["version"].Int), CallAsset: hexOf(m["callAsset"]), PutAsset: hexOf(m["putAsset"]),
			PrimePool: subgraphtest.EntityRef{ID: m["primePool"].Str}, DayData: days[id], MarketSums: sums(m),
		})
	}
}
