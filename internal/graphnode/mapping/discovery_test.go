package mapping

import (
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// The position manager's whitelist events: a handler and a market the
// manifest lists are recorded with their manifest kind and get no second
// data source; a contract that answers none of the probes (every eth_call
// reverts) is recorded as Unreadable, gets no data source either, and the
// handler does not fail.
func TestWhitelistRecordsKnownAndUnreadable(t *testing.T) {
	var probed []string
	c := newChain(t, func(to common.Address, data []byte, _ uint64) ([]byte, bool, error) {
		probed = append(probed, strings.ToLower(to.Hex()))
		return nil, true, nil // no getter answers
	})
	pm := common.HexToAddress("0xE4bA6740aF4c666325D49B3112E4758371386aDc")
	const sig = "LogUpdateWhitelistHandlerWithApp(address,address,bool)"
	c.emit("PositionManager", "DopexV2PositionManager", sig, "handleWhitelistHandlerWithApp", pm, uniHandler, marketV2, true)
	stranger := common.HexToAddress("0x00000000000000000000000000000000000bad01")
	strangeApp := common.HexToAddress("0x00000000000000000000000000000000000bad02")
	c.emit("PositionManager", "DopexV2PositionManager", sig, "handleWhitelistHandlerWithApp", pm, stranger, strangeApp, true)
	// a status false names nothing new
	c.emit("PositionManager", "DopexV2PositionManager", sig, "handleWhitelistHandlerWithApp", pm,
		common.HexToAddress("0x00000000000000000000000000000000000bad03"), common.HexToAddress("0x00000000000000000000000000000000000bad04"), false)

	for addr, want := range map[common.Address]struct {
		kind               string
		handler, inManfest bool
	}{uniHandler: {"HandlerV2", true, true}, marketV2: {"MarketV2", false, true}, stranger: {"Unreadable", true, false}, strangeApp: {"Unreadable", false, false}} {
		d := c.store.Get("Deployment", strings.ToLower(addr.Hex()))
		if d == nil || d["kind"].Str != want.kind || d["handler"].Bool != want.handler || d["inManifest"].Bool != want.inManfest {
			t.Errorf("deployment %s: %v, want %+v", addr.Hex(), d, want)
		}
	}
	if n := len(c.store.All("Deployment")); n != 4 {
		t.Errorf("%d deployments, want 4", n)
	}
	if created := c.created["PositionManager"]; len(created) != 0 {
		t.Errorf("data sources created %v", created)
	}
	for _, a := range probed {
		if a == strings.ToLower(uniHandler.Hex()) || a == strings.ToLower(marketV2.Hex()) {
			t.Errorf("a listed contract %s was probed", a)
		}
	}
	if c.store.Get("Market", strings.ToLower(strangeApp.Hex())) != nil {
		t.Error("a Market was made of an unreadable contract")
	}
}
