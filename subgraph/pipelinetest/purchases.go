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
