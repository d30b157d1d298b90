package pipeline

import (
	"bytes"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// A handler and a market deployed and whitelisted after indexing started
// are found from the position manager's whitelist events and indexed from
// their templates, with no manifest change: the handler's range equals its
// getter, the market's immutables equal its getters, an option bought on it
// equals opData. An app the position manager whitelists that is no market
// (an account) is recorded as Unreadable and does not stop indexing.
func TestPipelineDiscoversLaterDeployments(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	ix := New(t, p)
	ix.Sync()
	kind := func(a common.Address) string {
		d := ix.Store.Get("Deployment", lower(a))
		if d == nil {
			return ""
		}
		return d["kind"].Str
	}
	if kind(p.Handler) != "HandlerV2" || kind(p.Market) != "MarketV2" {
		t.Fatalf("deployments at start: handler %q market %q", kind(p.Handler), kind(p.Market))
	}

	h2 := p.DeployHandler()
	m2 := p.DeployMarket()
	p.WhitelistApp(h2, m2, true)
	stranger := p.Users[3].Addr
	p.WhitelistApp(h2, stranger, true)
	for _, a := range p.Users {
		for _, tok := range []common.Address{p.CallAsset, p.PutAsset} {
			p.Chain.MustSend(a, tok, pt.Token.ABI, "approve", m2, new(big.Int).Lsh(big.NewInt(1), 255))
		}
	}
	_, tick := p.Slot0(p.Pool)
	base := tick - tick%p.TickSpacing
	r := pt.Range{Handler: h2, TickLower: base + 20*p.TickSpacing, TickUpper: base + 21*p.TickSpacing}
	_, l, err := p.Deposit(p.Users[0], r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	later := *p // the same protocol, buying on the new market
	later.Market = m2
	id, _, err := later.Buy(p.Users[1], pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: r, Liquidity: l}}})
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()

	if kind(h2) != "HandlerV2" || kind(m2) != "MarketV2" || kind(stranger) != "Unreadable" {
		t.Fatalf("discovered: handler %q market %q account %q", kind(h2), kind(m2), kind(stranger))
	}
	if d := ix.Store.Get("Deployment", lower(m2)); d["inManifest"].Bool || !bytes.Equal(d["positionManager"].Bytes, p.PositionManager.Bytes()) {
		t.Errorf("market deployment %v", d)
	}
	m := ix.Store.Get("Market", lower(m2))
	if m == nil || m["version"].Int != 2 || m["primePool"].Str != lower(p.Pool) ||
		!bytes.Equal(m["callAsset"].Bytes, p.Chain.Call(m2, pt.MarketV2.ABI, "callAsset")[0].(common.Address).Bytes()) ||
		!bytes.Equal(m["putAsset"].Bytes, p.Chain.Call(m2, pt.MarketV2.ABI, "putAsset")[0].(common.Address).Bytes()) || m["purchases"].Int != 1 {
		t.Errorf("discovered Market %v", m)
	}
	strike := ix.Store.Get("Strike", lower(h2)+"-"+lower(p.Pool)+"-"+lower(common.Address{})+"-"+big.NewInt(int64(r.TickLower)).String()+"-"+big.NewInt(int64(r.TickUpper)).String())
	info := later.RangeInfo(r)
	if strike == nil || strike["totalLiquidity"].Big.Cmp(info.TotalLiquidity) != 0 || strike["usedLiquidity"].Big.Cmp(info.LiquidityUsed) != 0 {
		t.Errorf("discovered handler's Strike %v, getter %+v", strike, info)
	}
	o := ix.Store.Get("Option", lower(m2)+"-"+id.String())
	d := later.OpData(id)
	if o == nil || o["tickLower"].Int != int64(d.TickLower) || o["expiry"].Big.Cmp(d.Expiry) != 0 || !bytes.Equal(o["owner"].Bytes, later.OwnerOf(id).Bytes()) {
		t.Errorf("option on the discovered market %v, opData %+v", o, d)
	}
	if !strings.HasPrefix(ix.String(), "Strike:1") {
		t.Errorf("store %s", ix)
	}
}
