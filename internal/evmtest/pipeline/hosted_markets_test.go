package pipeline

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/hostedtypes"
)

// The hosted API's paths on the pipeline (the test protocol on the
// simulated EVM, indexed by the compiled mappings, served by the live
// gateway): each answer conforms to its clients' own type
// (hostedtypes), and its figures are the chain's: the ticker from the
// tokens' symbol(), the mark price and tick from getCurrentPricePerCallAsset
// and slot0 at the answer's block, the periphery from the market's
// getters, the pools' IVs from its pricing's ttlToVol, the delegates'
// status from exerciseDelegator; the candles are /clamm/candles'.
func TestPipelineHostedPaths(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	ix := New(t, p)
	// IVs for two ttls of the hosted grid and one beyond it
	p.DeployPricing(pt.PricingConfig{IVs: map[uint64]uint64{3600: 50, 86400: 40, 604800: 30}})
	swapActivity(t, p)
	if _, err := p.Chain.Send(p.Users[1], p.Market, pt.MarketV2.ABI, "updateExerciseDelegate", p.AutoExercise, true); err != nil {
		t.Fatal(err)
	}
	multicall := p.DeployMulticall3()
	ix.Sync()
	// the chain's auto-exerciser and LimitOrders the test protocol's, so
	// the known delegates are contracts of this chain
	a := statsGateway(t, p, ix, multicall, true, func(ch *config.Chain) { ch.AutoExerciser, ch.LimitOrders = p.AutoExercise, p.LimitOrders })
	n := p.Chain.Client()
	head, err := n.BlockNumber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ticker := symbolAt(t, p, p.CallAsset, head) + "/" + symbolAt(t, p, p.PutAsset, head)
	hostedMarkets(t, p, a, ticker, head)
	hostedMarkPrice(t, p, a, ticker)
	hostedCandles(t, p, a, ticker)
	hostedPools(t, p, a, head)
	hostedDelegators(t, p, a)
}

// askHosted asks path, checks the answer against the client's type and
// returns its body and block (0 without X-Block-Number).
func askHosted(t *testing.T, a *app.App, path string, typ hostedtypes.Type) ([]byte, uint64) {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
	for _, problem := range hostedtypes.Check(rec.Body.Bytes(), typ) {
		t.Errorf("%s: %s", path, problem)
	}
	at, _ := strconv.ParseUint(rec.Header().Get("X-Block-Number"), 10, 64)
	return rec.Body.Bytes(), at
}

func symbolAt(t *testing.T, p *pt.Protocol, token common.Address, n uint64) string {
	t.Helper()
	return callAt(t, p, token, pt.Token.ABI, n, "symbol")[0].(string)
}

func hostedMarkets(t *testing.T, p *pt.Protocol, a *app.App, ticker string, n uint64) {
	t.Helper()
	body, _ := askHosted(t, a, gateway.PathHostedMarkets+"?chains=421614,42161", hostedtypes.OptionMarketsV2)
	var got []market.HostedMarket
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d markets: %s", len(got), body)
	}
	m := got[0]
	pricing := callAt(t, p, p.Market, pt.MarketV2.ABI, n, "optionPricing")[0].(common.Address)
	fetcher := callAt(t, p, p.Market, pt.MarketV2.ABI, n, "tokenURIFetcher")[0].(common.Address)
	if m.ChainID != 42161 || m.Address != p.Market.Hex() || m.Ticker != ticker || m.PairName != strings.Replace(ticker, "/", "-", 1) ||
		m.PrimePool != p.Pool.Hex() || m.OptionsPricing != pricing.Hex() || m.TokenURIFetcher != fetcher.Hex() ||
		m.FeeStrategy != (common.Address{}).Hex() || m.Deprecated || m.CallToken.Decimals != int(p.CallDecimals) || m.PutToken.Decimals != int(p.PutDecimals) {
		t.Errorf("market %+v; want %s %s, pricing %s, fetcher %s, no feeStrategy() on the test market", m, p.Market, ticker, pricing, fetcher)
	}
	if len(m.Pools) == 0 || m.Pools[0].Address != p.Pool.Hex() || m.Pools[0].Handler != p.Handler.Hex() || m.Pools[0].Name != "uniswap" {
		t.Errorf("pools %+v, want the prime pool %s with handler %s", m.Pools, p.Pool, p.Handler)
	}
}

func hostedMarkPrice(t *testing.T, p *pt.Protocol, a *app.App, ticker string) {
	t.Helper()
	for _, tk := range []string{ticker, strings.ToLower(ticker), strings.ToUpper(ticker)} {
		body, n := askHosted(t, a, gateway.PathTickerMarkPrice+"?chainId=42161&ticker="+tk, hostedtypes.PriceAndTick)
		var got struct {
			MarkPrice, MarkPriceUSD, QuoteAssetPriceUSD json.Number
			Tick                                        int64
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		price := callAt(t, p, p.Market, pt.MarketV2.ABI, n, "getCurrentPricePerCallAsset", p.Pool)[0].(*big.Int)
		want := clamm.FormatUnits(price, int(p.PutDecimals))
		if string(got.MarkPrice) != want || got.Tick != tickAt(t, p, n).Int64() || string(got.MarkPriceUSD) != want || got.QuoteAssetPriceUSD != "1" {
			t.Errorf("%s at %d: %+v, want price %s and slot0's tick %s", tk, n, got, want, tickAt(t, p, n))
		}
	}
	body, _ := askHosted(t, a, gateway.PathTickerLastPrice+"?ticker="+ticker, hostedtypes.LastPrice)
	if !strings.Contains(string(body), `"lastPrice":`) {
		t.Errorf("last price: %s", body)
	}
}

func hostedCandles(t *testing.T, p *pt.Protocol, a *app.App, ticker string) {
	t.Helper()
	now := int64(p.Chain.Now())
	from, to := now-2*86400, now+3600
	q := "?chainId=42161&interval=1h&from=" + strconv.FormatInt(from, 10) + "&to=" + strconv.FormatInt(to, 10)
	body, _ := askHosted(t, a, gateway.PathTickerCandles+q+"&ticker="+ticker, hostedtypes.Candles)
	var got []market.HostedCandle
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	var own market.Candles
	get(t, a, gateway.PathCandles+q+"&optionMarket="+p.Market.Hex(), &own)
	if len(got) != len(own.Candles) || len(got) == 0 {
		t.Fatalf("%d candles by ticker, %d by market", len(got), len(own.Candles))
	}
	for i, c := range own.Candles {
		h := got[i]
		if h.Time != c.Time || string(h.Open) != c.Open || string(h.High) != c.High || string(h.Low) != c.Low || string(h.Close) != c.Close {
			t.Errorf("candle %d: %+v, /clamm/candles %+v", i, h, c)
		}
	}
}

func hostedPools(t *testing.T, p *pt.Protocol, a *app.App, n uint64) {
	t.Helper()
	body, _ := askHosted(t, a, gateway.PathHostedPools+"?chainId=42161", hostedtypes.OptionsPools)
	var got []market.HostedOptionsPool
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].OptionsPoolAddress != p.Market.Hex() {
		t.Fatalf("%s", body)
	}
	pricing := callAt(t, p, p.Market, pt.MarketV2.ABI, n, "optionPricing")[0].(common.Address)
	var ttls, ivs []string
	sel := crypto.Keccak256([]byte("ttlToVol(uint256)"))[:4]
	for _, ttl := range market.HostedTTLs {
		data := append(append([]byte{}, sel...), common.LeftPadBytes(new(big.Int).SetUint64(ttl).Bytes(), 32)...)
		out, err := p.Chain.Client().CallContract(context.Background(), ethereum.CallMsg{To: &pricing, Data: data}, new(big.Int).SetUint64(n))
		if err != nil || len(out) != 32 {
			t.Fatalf("ttlToVol(%d): %v", ttl, err)
		}
		if v := new(big.Int).SetBytes(out); v.Sign() > 0 {
			ttls, ivs = append(ttls, strconv.FormatUint(ttl, 10)), append(ivs, v.String())
		}
	}
	if strings.Join(ttls, ",") != "3600,86400" || strings.Join(got[0].TTLs, ",") != strings.Join(ttls, ",") || strings.Join(got[0].IVs, ",") != strings.Join(ivs, ",") {
		t.Errorf("ttls %v ivs %v, the pricing's ttlToVol: %v %v", got[0].TTLs, got[0].IVs, ttls, ivs)
	}
}

func hostedDelegators(t *testing.T, p *pt.Protocol, a *app.App) {
	t.Helper()
	user := p.Users[1].Addr
	body, n := askHosted(t, a, gateway.PathHostedDelegators+"?chainId=42161&account="+user.Hex()+"&optionMarket="+p.Market.Hex(), hostedtypes.Delegators)
	var got []struct {
		Name          string `json:"name"`
		Approved      bool   `json:"approved"`
		ApproveTxData struct {
			TxData, To string
		} `json:"approveTxData"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].Name != "TIME-BASED" || !got[0].Approved {
		t.Fatalf("the auto-exerciser the user enabled is not first and approved: %s", body)
	}
	if n == 0 {
		t.Fatal("no X-Block-Number")
	}
	delegates := map[string]common.Address{"TIME-BASED": p.AutoExercise, "LIMIT-ORDERS": p.LimitOrders}
	for _, d := range got {
		addr, known := delegates[d.Name]
		enabled := known && callAt(t, p, p.Market, pt.MarketV2.ABI, n, "exerciseDelegator", user, addr)[0].(bool)
		if !known || d.Approved != enabled || d.ApproveTxData.To != p.Market.Hex() ||
			!strings.Contains(strings.ToLower(d.ApproveTxData.TxData), strings.ToLower(addr.Hex()[2:])) {
			t.Errorf("%s at %d: %+v (exerciseDelegator %v)", d.Name, n, d, enabled)
		}
	}
}
