package pipelinetest

import (
	"encoding/hex"
	"math/big"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/subgraph/mappinghosttest"
	"github.com/clamm-gateway/clamm-gateway/subgraph/subgraphtest"
)

// Serve loads the indexed store into a fake Graph Node (subgraphtest), which
// answers the gateway's own query documents from it: each Strike with its
// daily records, each Exercise with its Option, _meta at the last indexed
// block.
func (ix *Indexer) Serve() *subgraphtest.Server {
	ix.t.Helper()
	st := ix.Store
	s := &subgraphtest.Server{Block: ix.next - 1}
	// _meta names the last indexed block and its time, as Graph Node does:
	// a chain moved on since the last Sync is not what the store holds.
	h, err := ix.chain.Client().HeaderByNumber(ix.t.Context(), new(big.Int).SetUint64(ix.next-1))
	if err != nil {
		ix.t.Fatalf("header of the last indexed block %d: %v", ix.next-1, err)
	}
	s.Timestamp = int64(h.Time)
	donations := map[string][]subgraphtest.DailyDonation{}
	for _, id := range st.All("DailyDonation") {
		d := st.Get("DailyDonation", id)
		donations[d["strike"].Str] = append(donations[d["strike"].Str], subgraphtest.DailyDonation{
			Donation: d["donation"].Big.String(), SqrtPriceX96: d["sqrtPriceX96"].Big.String(), Start: d["start"].Int})
	}
	compounds := map[string][]subgraphtest.DailyCompound{}
	for _, id := range st.All("DailyFeeCompound") {
		d := st.Get("DailyFeeCompound", id)
		compounds[d["strike"].Str] = append(compounds[d["strike"].Str], subgraphtest.DailyCompound{
			Compound: d["compound"].Big.String(), SqrtPriceX96: d["sqrtPriceX96"].Big.String(), Start: d["start"].Int})
	}
	for _, id := range st.All("Strike") {
		e := st.Get("Strike", id)
		s.Strikes = append(s.Strikes, subgraphtest.Strike{
			ID: id, Handler: hexOf(e["handler"]), Pool: hexOf(e["pool"]), Hook: hexOf(e["hook"]),
			TickLower: int(e["tickLower"].Int), TickUpper: int(e["tickUpper"].Int),
			TotalLiquidity: e["totalLiquidity"].Big.String(), UsedLiquidity: e["usedLiquidity"].Big.String(),
			DailyDonations: donations[id], DailyFeeCompounds: compounds[id],
		})
	}
	for _, id := range st.All("Exercise") {
		x := st.Get("Exercise", id)
		o := st.Get("Option", x["option"].Str)
		if o == nil {
			ix.t.Fatalf("Exercise %s names no stored Option %s: Graph Node would fail the query", id, x["option"].Str)
		}
		s.Exercises = append(s.Exercises, subgraphtest.Exercise{
			ID: id, Market: hexOf(x["market"]), User: hexOf(x["user"]), TxHash: hexOf(x["txHash"]),
			Timestamp: x["timestamp"].Big.String(), BlockNumber: x["blockNumber"].Big.String(),
			TotalProfit: x["totalProfit"].Big.String(), TotalAssetRelocked: x["totalAssetRelocked"].Big.String(),
			SqrtPriceX96: x["sqrtPriceX96"].Big.String(),
			Exerciser:    hexOf(x["exerciser"]), Delegated: x["delegated"].Bool, ProfitToOwner: optionalBig(x["profitToOwner"]),
			Option: subgraphtest.ExercisedOption{
				TokenID: o["tokenId"].Big.String(), IsCall: o["isCall"].Bool,
				TickLower: int(o["tickLower"].Int), TickUpper: int(o["tickUpper"].Int),
				Expiry: o["expiry"].Big.String(), Premium: o["premium"].Big.String(), MintTimestamp: o["mintTimestamp"].Big.String(),
			},
		})
	}
	servePurchases(st, s)
	serveMarkets(st, s)
	return s
}

// hexOf is a Bytes field as Graph Node serves it: lowercase 0x-hex.
func hexOf(v mappinghosttest.Value) string {
	return "0x" + strings.ToLower(hex.EncodeToString(v.Bytes))
}

// optionalBig is a nullable BigInt field as Graph Node serves it: a decimal
// string, or null when unset.
func optionalBig(v mappinghosttest.Value) *string {
	if v.Big == nil {
		return nil
	}
	s := v.Big.String()
	return &s
}
