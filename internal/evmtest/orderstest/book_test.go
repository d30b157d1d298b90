package orderstest

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

const chainID = pt.ChainID

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

// world is a deployed protocol with a LimitOrders contract, alice holding
// a one-leg call above the price, and the orders side over a fresh book.
type world struct {
	p                  *pt.Protocol
	svc                *orders.Orders
	repo               orders.Repository
	alice, bob, filler *pt.Account
	id                 *big.Int
	tick               int
	r                  pt.Range
	ctx                context.Context
	swapperID          string
	chains             vocab.Chains
	multicall          common.Address
}

func newWorld(t *testing.T) *world {
	p := pt.Deploy(t, pt.Config{})
	p.DeployLimitOrders()
	mc := p.DeployMulticall3()
	_, tick := p.Slot0(p.Pool)
	w := &world{p: p, alice: p.Users[1], bob: p.Users[0], filler: p.Users[2], tick: tick, ctx: context.Background(), swapperID: "uni-v3", multicall: mc}
	w.r = pt.Range{TickLower: tick + 100, TickUpper: tick + 110}
	_, shares, err := p.Deposit(w.bob, w.r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	if w.id, _, err = p.Buy(w.alice, pt.Option{IsCall: true, TickLower: w.r.TickLower, TickUpper: w.r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: w.r, Liquidity: shares}}}); err != nil {
		t.Fatal(err)
	}
	rc := p.Chain.RPC()
	ch := &config.Chain{ID: chainID, LimitOrders: p.LimitOrders, Swappers: map[string]*config.Swapper{
		"uni-v3": {Kind: "uniswap-v3", Address: p.Swapper, Quoter: p.Quoter}}}
	w.repo, err = orders.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "orders.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.repo.Shutdown() })
	up := &vocab.Upstreams{Config: ch, Chain: testenv.NewReader(t, rc, mc), Quoters: map[string]swap.Quoter{
		"uni-v3": &swap.UniV3{RPC: rc, Quoter: p.Quoter, Timeout: config.Default().UpstreamTimeout.D(), Contracts: swap.Contracts{Address: p.Swapper}}}}
	w.chains = vocab.Chains{chainID: up}
	w.svc = orders.New(w.chains, w.repo, orders.Limits{PerMaker: 3})
	return w
}

// sign has a key sign prepared typed data as a wallet does: the JSON the
// gateway answers, read by go-ethereum's own EIP-712 encoder.
func sign(t *testing.T, a *pt.Account, td orders.TypedData) string {
	t.Helper()
	raw, err := json.Marshal(td)
	if err != nil {
		t.Fatal(err)
	}
	var wallet apitypes.TypedData
	if err := json.Unmarshal(raw, &wallet); err != nil {
		t.Fatal(err)
	}
	sig, err := pt.SignTyped(a, wallet)
	if err != nil {
		t.Fatal(err)
	}
	return hexutil.Encode(sig.Bytes())
}

// takeProfit prepares alice's take-profit, sends the steps it names and
// returns the order signed by signer.
func (w *world) takeProfit(t *testing.T, minProfit *big.Int, signer *pt.Account) orders.SignedOrder {
	t.Helper()
	prep, err := w.svc.Prepare(w.ctx, orders.PrepareRequest{ChainID: chainID, Kind: orders.KindExercise, User: w.alice.Addr,
		Market: w.p.Market, TokenID: w.id, MinProfit: minProfit})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range prep.Before {
		if _, err := w.p.Chain.SendRaw(w.alice, common.HexToAddress(st.Tx.To), hexutil.MustDecode(st.Tx.Data), "step"); err != nil {
			t.Fatal(err)
		}
	}
	so := prep.Order
	so.Signature = sign(t, signer, prep.TypedData)
	return so
}

func code(err error) string {
	var p *problem.Error
	if errors.As(err, &p) && p.Code != nil {
		return p.Code.Name()
	}
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func (w *world) status(t *testing.T, hash string) orders.View {
	t.Helper()
	vs, err := w.svc.List(w.ctx, orders.ListRequest{ChainID: chainID, User: &w.alice.Addr})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Hash == hash {
			return v
		}
	}
	t.Fatalf("order %s not in the book", hash)
	return orders.View{}
}

// TestPreparedTakeProfitIsAcceptedAndFollowsTheChain: alice signs the
// prepared typed data (the delegate transaction first); the order is
// accepted once, a duplicate changes nothing; the contract agrees with the
// book's digest; a transfer moves it out of open at the next block.
func TestPreparedTakeProfitIsAcceptedAndFollowsTheChain(t *testing.T) {
	w := newWorld(t)
	so := w.takeProfit(t, big.NewInt(50_000_000), w.alice)
	v, created, err := w.svc.Submit(w.ctx, so)
	if err != nil || !created || v.Status != orders.StatusOpen {
		t.Fatalf("submit: %v created=%v %+v", err, created, v)
	}
	// The contract's own digest rule: getOrderSigner recovers alice.
	o := pt.LimitOrder{CreatedAt: so.CreatedAt.Int, Deadline: so.Deadline.Int, Maker: w.alice.Addr, Flags: uint32(so.Flags.Uint64()), Data: hexutil.MustDecode(so.Data)}
	if h := w.p.Chain.Call(w.p.LimitOrders, pt.LimitOrdersC.ABI, "getOrderStructHash", o)[0].([32]byte); common.Hash(h).Hex() != v.Hash {
		t.Fatalf("book hash %s, contract's %x", v.Hash, h)
	}
	again, created, err := w.svc.Submit(w.ctx, so)
	if err != nil || created || again.Hash != v.Hash {
		t.Fatalf("duplicate: %v created=%v", err, created)
	}
	if n, _ := w.repo.Count(w.ctx); n != 1 {
		t.Fatalf("book holds %d orders after a duplicate", n)
	}
	if _, err := w.p.Transfer(w.alice, w.bob.Addr, w.id); err != nil {
		t.Fatal(err)
	}
	if got := w.status(t, v.Hash); got.Status != orders.StatusInvalid {
		t.Fatalf("after a transfer: %+v", got)
	}
}

// TestRevokedDelegateAndCancelLeaveOpen: a revoked delegation makes the
// order invalid at the next block; a cancel on chain makes it cancelled,
// found in the contract's event, and the hosted delete is then accepted.
func TestRevokedDelegateAndCancelLeaveOpen(t *testing.T) {
	w := newWorld(t)
	so := w.takeProfit(t, big.NewInt(10), w.alice)
	v, _, err := w.svc.Submit(w.ctx, so)
	if err != nil {
		t.Fatal(err)
	}
	del := orders.DeleteRequest{ChainID: chainID, TokenID: orders.Uint{Int: w.id}, OptionMarket: w.p.Market.Hex()}
	if _, err := w.svc.Delete(w.ctx, del); code(err) != "ORDER_NOT_CANCELLED" {
		t.Fatalf("delete before the cancel: %v", err)
	}
	if _, err := w.p.Delegate(w.alice, w.p.LimitOrders, false); err != nil {
		t.Fatal(err)
	}
	if got := w.status(t, v.Hash); got.Status != orders.StatusInvalid {
		t.Fatalf("after revoking: %+v", got)
	}
	if _, err := w.p.Delegate(w.alice, w.p.LimitOrders, true); err != nil {
		t.Fatal(err)
	}
	if got := w.status(t, v.Hash); got.Status != orders.StatusOpen {
		t.Fatalf("after delegating again: %+v", got)
	}
	cp, err := w.svc.CancelPrepare(w.ctx, chainID, common.HexToHash(v.Hash))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.p.Chain.SendRaw(w.alice, common.HexToAddress(cp.Tx.To), hexutil.MustDecode(cp.Tx.Data), "cancel"); err != nil {
		t.Fatal(err)
	}
	got := w.status(t, v.Hash)
	if got.Status != orders.StatusCancelled || got.Closed == nil || got.Closed.Event != "LogOrderCancelled" {
		t.Fatalf("after the cancel: %+v", got)
	}
	if _, err := w.svc.Delete(w.ctx, del); err != nil {
		t.Fatalf("delete after the cancel: %v", err)
	}
	if _, _, err := w.svc.Submit(w.ctx, so); err != nil {
		t.Fatalf("a duplicate of a cancelled order is answered with the stored one: %v", err)
	}
}

// TestBadOrdersAreRefusedAndNothingStored: each bad input is a 4xx code
// and leaves the book empty.
func TestBadOrdersAreRefusedAndNothingStored(t *testing.T) {
	w := newWorld(t)
	good := w.takeProfit(t, big.NewInt(10), w.alice)
	mutate := func(f func(*orders.SignedOrder)) orders.SignedOrder {
		so := good
		f(&so)
		return so
	}
	otherKey := w.takeProfit(t, big.NewInt(11), w.bob)
	wrongChain := mutate(func(so *orders.SignedOrder) { so.ChainID = 42161 })
	// A wrong domain: signed for the mainnet contract's address.
	wrongDomain := mutate(func(so *orders.SignedOrder) { so.Signature = otherDomainSig(t, w, *so) })
	flags := mutate(func(so *orders.SignedOrder) { so.Flags = orders.Uint{Int: big.NewInt(0x111)} })
	past := w.signed(t, w.alice, func(so *orders.SignedOrder) { so.Deadline = orders.Uint{Int: big.NewInt(int64(w.p.Chain.Now()) - 10)} })
	afterExpiry := w.signed(t, w.alice, func(so *orders.SignedOrder) {
		so.Deadline = orders.Uint{Int: big.NewInt(int64(w.p.Chain.Now()) + 7200)}
	})
	notOwner := w.signed(t, w.bob, func(so *orders.SignedOrder) { so.Maker = w.bob.Addr.Hex() })
	cases := []struct {
		name string
		so   orders.SignedOrder
		want string
	}{
		{"another key's signature", otherKey, "INVALID_PARAMETER"},
		{"wrong chain", wrongChain, "INVALID_PARAMETER"},
		{"wrong domain", wrongDomain, "INVALID_PARAMETER"},
		{"unknown flags", flags, "INVALID_PARAMETER"},
		{"past deadline", past, "INVALID_PARAMETER"},
		{"deadline after expiry", afterExpiry, "INVALID_PARAMETER"},
		{"maker without the option", notOwner, "ORDER_NOT_FILLABLE"},
	}
	for _, c := range cases {
		if _, _, err := w.svc.Submit(w.ctx, c.so); code(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	// Replayed: an order the contract already marks used (cancelled
	// before it reached the book).
	replayed := w.signed(t, w.alice, func(so *orders.SignedOrder) { so.CreatedAt = orders.Uint{Int: big.NewInt(1)} })
	o, sig := toContract(t, replayed)
	if _, err := w.p.CancelOrder(w.alice, o, sig); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.svc.Submit(w.ctx, replayed); code(err) != "ORDER_NOT_FILLABLE" {
		t.Errorf("replayed: %v", err)
	}
	if n, _ := w.repo.Count(w.ctx); n != 0 {
		t.Fatalf("the book holds %d orders after only bad ones", n)
	}
	// A flood over the per-maker bound (3 here).
	for i := 0; i < 4; i++ {
		so := w.signed(t, w.alice, func(so *orders.SignedOrder) { so.CreatedAt = orders.Uint{Int: big.NewInt(int64(100 + i))} })
		_, _, err := w.svc.Submit(w.ctx, so)
		if (i < 3) != (err == nil) || (i == 3 && code(err) != "ORDER_BOOK_FULL") {
			t.Fatalf("order %d: %v", i, err)
		}
	}
	if n, _ := w.repo.Count(w.ctx); n != 3 {
		t.Fatalf("the book holds %d orders, want the bound 3", n)
	}
}

// signed is the good take-profit changed by f and signed by a over the
// chain's real domain.
func (w *world) signed(t *testing.T, a *pt.Account, f func(*orders.SignedOrder)) orders.SignedOrder {
	t.Helper()
	so := w.takeProfit(t, big.NewInt(10), w.alice)
	f(&so)
	o, _ := toContract(t, so)
	so.Signature = hexutil.Encode(w.p.SignOrder(a, o).Bytes())
	return so
}

func toContract(t *testing.T, so orders.SignedOrder) (pt.LimitOrder, pt.LimitSig) {
	t.Helper()
	o := pt.LimitOrder{CreatedAt: so.CreatedAt.Int, Deadline: so.Deadline.Int, Maker: common.HexToAddress(so.Maker),
		Flags: uint32(so.Flags.Uint64()), Data: hexutil.MustDecode(so.Data)}
	var sig pt.LimitSig
	if so.Signature != "" {
		b := hexutil.MustDecode(so.Signature)
		copy(sig.R[:], b[:32])
		copy(sig.S[:], b[32:64])
		sig.V = b[64]
	}
	return o, sig
}

// otherDomainSig is alice's signature of the order for Arbitrum's
// LimitOrders: a valid signature over another domain.
func otherDomainSig(t *testing.T, w *world, so orders.SignedOrder) string {
	o, _ := toContract(t, so)
	td := w.p.LimitTypedData(o)
	td.Domain.VerifyingContract = "0x91e45D19861049f98bD9520042283Be9C7F960B5"
	sig, err := pt.SignTyped(w.alice, td)
	if err != nil {
		t.Fatal(err)
	}
	return hexutil.Encode(sig.Bytes())
}
