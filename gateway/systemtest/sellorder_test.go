package systemtest

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// bookOrder is a take-profit on option id by maker as the book keeps it,
// signed over Arbitrum's LimitOrders domain by key.
func bookOrder(t *testing.T, key string, maker common.Address, id, minProfit int64, createdAt int64) orders.Record {
	t.Helper()
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte(key)))
	if err != nil {
		t.Fatal(err)
	}
	market := common.HexToAddress(wethUSDC)
	data, err := contracts.EncodeExerciseData(big.NewInt(minProfit), big.NewInt(id), market)
	if err != nil {
		t.Fatal(err)
	}
	lo := config.Default().Chains[42161].LimitOrders
	o := contracts.LimitOrder{CreatedAt: big.NewInt(createdAt), Deadline: big.NewInt(1763812800), Maker: maker, Flags: orders.FlagsExercise, Data: data}
	d := orders.Digest(42161, lo, o)
	sig, err := crypto.Sign(d[:], k)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	so := orders.SignedOrder{ChainID: 42161, CreatedAt: orders.Uint{Int: o.CreatedAt}, Deadline: orders.Uint{Int: o.Deadline}, Maker: maker.Hex(),
		Validator: common.Address{}.Hex(), Flags: orders.Uint{Int: big.NewInt(int64(o.Flags))}, Data: hexutil.Encode(data), Signature: hexutil.Encode(sig)}
	body, _ := json.Marshal(so)
	return orders.Record{ChainID: 42161, Hash: orders.StructHash(o), Contract: lo, Kind: orders.KindExercise, Maker: maker, Market: market,
		TokenID: big.NewInt(id).String(), Body: body, AcceptedAt: createdAt, AcceptedBlock: 1, Deadline: o.Deadline.Int64()}
}

// Each position shows the take-profit the book holds on it by its owner,
// as the hosted API's sellOrder (payment = minProfit; the newest when
// there are several; none once the chain closed it); null elsewhere. A
// gateway whose book was never created shows null everywhere and creates
// no store for the read.
func TestPositionsShowTheirSellOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "orders.sqlite")
	alice, bob := common.HexToAddress(alice), common.HexToAddress("0xB0B0000000000000000000000000000000000002")
	newest := bookOrder(t, "a", alice, 110, 50_000_000, 3)
	closed := bookOrder(t, "a", alice, 111, 7, 4)
	repo, err := orders.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []orders.Record{bookOrder(t, "a", alice, 110, 40_000_000, 1), newest, closed, bookOrder(t, "b", bob, 114, 9, 2), bookOrder(t, "b", bob, 110, 9, 5)} {
		if _, _, err := repo.Insert(context.Background(), r, 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := repo.Close(context.Background(), 42161, closed.Hash, []byte(`{"status":"cancelled"}`)); err != nil {
		t.Fatal(err)
	}
	_ = repo.Shutdown()

	sellOrders := func(cfg *config.Config, user string) map[string]json.RawMessage {
		f := scenario.NewFakes(t, demoScenario(t))
		a, err := app.New(app.Options{Config: cfg, Transports: onFakes(f)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		rec := get(t, a.Server, gateway.PathPurchasePositions+"?chainId=42161&optionMarket="+wethUSDC+"&user="+user+"&first=100&skip=0")
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &items); err != nil || rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		out := map[string]json.RawMessage{}
		for _, it := range items {
			var id string
			_ = json.Unmarshal(it["optionId"], &id)
			out[id] = it["sellOrder"]
		}
		return out
	}
	cfg := config.Default()
	cfg.OrdersPath = path
	got := sellOrders(cfg, alice.Hex())
	var so struct {
		Hash, Payment, Data, CreatedAt, Maker string
		Flags                                 int
		V                                     int
	}
	if err := json.Unmarshal(got["110"], &so); err != nil || so.Hash != newest.Hash.Hex() || so.Payment != "50000000" || so.Flags != 272 ||
		so.CreatedAt != "3" || so.Maker != alice.Hex() || (so.V != 27 && so.V != 28) {
		t.Fatalf("110's sellOrder %s (%v)", got["110"], err)
	}
	for id, raw := range got {
		if id != "110" && string(raw) != "null" {
			t.Errorf("option %s: sellOrder %s", id, raw)
		}
	}
	if b := sellOrders(cfg, bob.Hex()); string(b["114"]) == "null" || len(b) != 1 {
		t.Errorf("bob's positions: %v", b)
	}

	none := config.Default()
	none.OrdersPath = filepath.Join(dir, "never.sqlite")
	for id, raw := range sellOrders(none, alice.Hex()) {
		if string(raw) != "null" {
			t.Errorf("without a book, option %s: %s", id, raw)
		}
	}
	if _, err := os.Stat(none.OrdersPath); !os.IsNotExist(err) {
		t.Errorf("a positions read created the store: %v", err)
	}
}
