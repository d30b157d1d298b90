package orders

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// A limit purchase whose maxCostAllowance is 0 could never fill (the
// market charges a premium and a fee for any option): refused as the
// client's mistake, naming data, before any chain read, though its
// signature is good.
func TestZeroCostPurchaseIsRefused(t *testing.T) {
	lo := common.HexToAddress("0x91e45D19861049f98bD9520042283Be9C7F960B5")
	// A chain that panics if read: the refusal comes before any read.
	s := New(vocab.Chains{42161: {Config: &config.Chain{ID: 42161, LimitOrders: lo}, Chain: struct{ vocab.Chain }{}}}, nil, Limits{})
	key, _ := crypto.GenerateKey()
	maker := crypto.PubkeyToAddress(key.PublicKey)
	for _, cost := range []int64{0, 1} {
		data, err := contracts.EncodePurchaseData(contracts.PurchaseOrderData{MaxCostAllowance: big.NewInt(cost), TTL: big.NewInt(3600),
			Market: common.Address{8}, Liquidity: big.NewInt(1e6), Commission: new(big.Int), TTLThreshold: new(big.Int), TickLower: -10, TickUpper: 10, IsCall: true})
		if err != nil {
			t.Fatal(err)
		}
		o := contracts.LimitOrder{CreatedAt: big.NewInt(1), Deadline: big.NewInt(1 << 40), Maker: maker, Flags: FlagsPurchase, Data: data}
		d := Digest(42161, lo, o)
		sig, err := crypto.Sign(d[:], key)
		if err != nil {
			t.Fatal(err)
		}
		so := SignedOrder{ChainID: 42161, CreatedAt: Uint{o.CreatedAt}, Deadline: Uint{o.Deadline}, Maker: maker.Hex(),
			Flags: Uint{big.NewInt(int64(FlagsPurchase))}, Data: hexutil.Encode(data), Signature: hexutil.Encode(sig)}
		_, err = s.check(so)
		if p := problem.As(err); cost == 0 && (p.Code != problem.InvalidParameter || p.Param != "data") {
			t.Fatalf("maxCostAllowance 0: %v", err)
		}
		if cost == 1 && err != nil {
			t.Fatalf("maxCostAllowance 1: %v", err)
		}
	}
}
