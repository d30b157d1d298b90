package orders

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// SignedOrder is an order as clients send it (the hosted API's
// /clamm/orders/create body): the contract's six fields, the chain and the
// wallet's 65-byte signature. Integers may be decimal strings, 0x-hex
// strings or JSON numbers.
type SignedOrder struct {
	ChainID   uint64 `json:"chainId"`
	CreatedAt Uint   `json:"createdAt"`
	Deadline  Uint   `json:"deadline"`
	Maker     string `json:"maker"`
	Validator string `json:"validator"`
	Flags     Uint   `json:"flags"`
	Data      string `json:"data"`
	Signature string `json:"signature"`
}

// checked is a signed order that parsed and whose signature recovers to
// its maker under the chain's domain.
type checked struct {
	up       *vocab.Upstreams
	order    Order
	hash     common.Hash
	kind     Kind
	market   common.Address
	tokenID  *big.Int
	purchase contracts.PurchaseOrderData
	premium  common.Address // the token a limit purchase pulls
}

// ParseSignedOrder reads a body as a SignedOrder; a malformed one is the
// client's mistake, named by field.
func ParseSignedOrder(body []byte) (SignedOrder, error) {
	var so SignedOrder
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&so); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return so, problem.InvalidParam(ute.Field, "%s: %v", ute.Field, err)
		}
		return so, problem.InvalidParam("body", "the body is not a signed order: %v", err)
	}
	if dec.More() {
		return so, problem.InvalidParam("body", "the body holds more than one JSON value")
	}
	for name, v := range map[string]*big.Int{"createdAt": so.CreatedAt.Int, "deadline": so.Deadline.Int, "flags": so.Flags.Int} {
		if v == nil {
			return so, problem.InvalidParam(name, "%s is required", name)
		}
	}
	return so, nil
}

// check parses the order's fields and verifies its signature with the
// contract's own digest rule (domain: this chain and its LimitOrders).
func (s *Orders) check(so SignedOrder) (checked, error) {
	up, err := s.contractOf(so.ChainID)
	if err != nil {
		return checked{}, err
	}
	c, err := verify(so, up.Config.LimitOrders)
	c.up = up
	return c, err
}

// verify is check without the chain's upstreams: what an order shows by
// itself against the chain's LimitOrders.
func verify(so SignedOrder, contract common.Address) (checked, error) {
	var c checked
	var err error
	if c.order, err = orderFields(so); err != nil {
		return checked{}, err
	}
	if err := c.decodeData(); err != nil {
		return checked{}, err
	}
	digest := Digest(so.ChainID, contract, c.order.Contract())
	signer, err := Signer(digest, c.order.Sig)
	if err != nil {
		return checked{}, problem.InvalidParam("signature", "the signature does not recover: %v", err)
	}
	if signer != c.order.Maker {
		return checked{}, problem.InvalidParam("signature", "the signature recovers to %s, not the maker %s, over this order's EIP-712 digest (domain %q version %q, chainId %d, verifyingContract %s): another key signed it, or it was signed for another domain or chain",
			signer.Hex(), c.order.Maker.Hex(), DomainName, DomainVersion, so.ChainID, contract.Hex())
	}
	c.hash = StructHash(c.order.Contract())
	return c, nil
}

func orderFields(so SignedOrder) (Order, error) {
	var o Order
	if !common.IsHexAddress(so.Maker) || common.HexToAddress(so.Maker) == (common.Address{}) {
		return o, problem.InvalidParam("maker", "want the maker's 0x address")
	}
	if so.Validator != "" && (!common.IsHexAddress(so.Validator) || common.HexToAddress(so.Validator) != (common.Address{})) {
		return o, problem.InvalidParam("validator", "only the zero address: no validator contract is deployed, and the book cannot tell whether another would let a fill pass")
	}
	if !so.Flags.IsUint64() || (so.Flags.Uint64() != uint64(FlagsExercise) && so.Flags.Uint64() != uint64(FlagsPurchase)) {
		return o, problem.InvalidParam("flags", "flags %s is not a kind the book keeps: 0x00000110 (limit exercise) or 0x00000210 (limit purchase)", so.Flags.Text(16))
	}
	data, err := hexutil.Decode(so.Data)
	if err != nil {
		return o, problem.InvalidParam("data", "want the order's data as 0x-hex")
	}
	sig, err := ParseSignature(so.Signature)
	if err != nil {
		return o, err
	}
	return Order{LimitOrder: contracts.LimitOrder{CreatedAt: so.CreatedAt.Int, Deadline: so.Deadline.Int, Maker: common.HexToAddress(so.Maker),
		Flags: uint32(so.Flags.Uint64()), Data: data}, Sig: sig}, nil
}

// decodeData reads data as the kind its flags name, as the contract's
// abi.decode would.
func (c *checked) decodeData() error {
	if c.order.Flags == FlagsExercise {
		c.kind = KindExercise
		_, id, market, err := contracts.DecodeExerciseData(c.order.Data)
		if err != nil {
			return problem.InvalidParam("data", "a limit exercise's data is abi.encode(uint256 minProfit, uint256 tokenId, address optionMarket): %v", err)
		}
		c.tokenID, c.market = id, market
		return nil
	}
	c.kind = KindPurchase
	p, err := contracts.DecodePurchaseData(c.order.Data)
	if err != nil {
		return problem.InvalidParam("data", "a limit purchase's data is abi.encode of PurchaseOrder's nine fields: %v", err)
	}
	if p.Liquidity.Sign() == 0 || p.TTL.Sign() == 0 {
		return problem.InvalidParam("data", "a limit purchase needs liquidity and a ttl above zero")
	}
	if p.MaxCostAllowance.Sign() == 0 {
		// The market charges premium + fee > 0 for any liquidity, and a
		// fill reverts when that passes maxCostAllowance: such an order
		// can never fill, so the book does not keep it.
		return problem.InvalidParam("data", "a limit purchase's maxCostAllowance is 0: the market charges a premium and a fee for any option, so the order could never fill")
	}
	c.purchase, c.market = p, p.Market
	return nil
}

// Submit checks a signed order against the chain and keeps it: the
// signature, the deadline (in the future, not past the option's expiry),
// the maker's ownership and delegation (exercise) or balance and allowance
// (purchase), and the contract's used mark. A duplicate of an order the
// book holds is answered with the stored one and false, nothing stored.
func (s *Orders) Submit(ctx context.Context, so SignedOrder) (View, bool, error) {
	c, err := s.check(so)
	if err != nil {
		return View{}, false, err
	}
	if rec, ok, err := s.repo.Get(ctx, so.ChainID, c.hash); err != nil {
		return View{}, false, storeErr(err)
	} else if ok {
		return s.viewOf(rec, nil), false, nil
	}
	// The block the book states is read before the state it checked, so
	// it is never newer than that state: fills and cancels are looked for
	// from it on, and none between the two reads can be missed.
	head, err := c.up.Chain.BlockNumber(ctx)
	if err != nil {
		return View{}, false, err
	}
	if err := s.knownMarket(ctx, c); err != nil {
		return View{}, false, err
	}
	now, st, err := s.chainState(ctx, &c)
	if err != nil {
		return View{}, false, err
	}
	if err := c.fillable(now, st); err != nil {
		return View{}, false, err
	}
	rec, err := c.record(so, now, head)
	if err != nil {
		return View{}, false, err
	}
	stored, created, err := s.repo.Insert(ctx, rec, s.limits.PerMaker)
	if errors.Is(err, ErrMakerFull) {
		return View{}, false, problem.New(problem.OrderBookFull, "maker %s keeps %d open orders on chain %d, the book's bound per maker: cancel one or let one close first", c.order.Maker.Hex(), s.limits.PerMaker, so.ChainID)
	}
	if err != nil {
		return View{}, false, storeErr(err)
	}
	v := s.viewOf(stored, nil)
	if created {
		v.Status, v.Reason = StatusOpen, ""
	}
	return v, created, nil
}

func storeErr(err error) error {
	return problem.Wrap(problem.OrderBookUnavailable, err, "the order book's store failed; nothing was changed")
}

// knownMarket refuses an order on an address that is not an option
// market the chain serves: one whose market reads fail, or (where the
// chain has a subgraph) one the subgraph does not index. The contract
// would fill an order of any contract answering the market's calls; the
// book keeps only those of the markets it reads.
func (s *Orders) knownMarket(ctx context.Context, c checked) error {
	if _, err := c.up.Chain.Market(ctx, c.market); err != nil {
		return err
	}
	if c.up.Subgraph == nil {
		return nil
	}
	markets, _, err := c.up.Subgraph.OptionMarkets(ctx)
	if err != nil {
		return err
	}
	for _, m := range markets {
		if m.ID.Addr() == c.market {
			return nil
		}
	}
	return problem.New(problem.MarketNotFound, "%s is not an option market the chain's subgraph indexes: the book keeps orders of the markets it serves", c.market.Hex()).On("optionMarket")
}

// chainState reads the order's state at the head (and, for a limit
// purchase, which token it pulls into c.premium).
func (s *Orders) chainState(ctx context.Context, c *checked) (int64, chain.OrderState, error) {
	q := chain.OrderQuery{Contract: c.up.Config.LimitOrders, StructHash: c.hash, Maker: c.order.Maker, Market: c.market, TokenID: c.tokenID}
	if c.kind == KindPurchase {
		info, err := c.up.Chain.Market(ctx, c.market)
		if err != nil {
			return 0, chain.OrderState{}, err
		}
		q.Premium = info.PutAsset.Address
		if c.purchase.IsCall {
			q.Premium = info.CallAsset.Address
		}
		c.premium = q.Premium
	}
	now, st, err := c.up.Chain.OrderStates(ctx, []chain.OrderQuery{q})
	if err != nil {
		return 0, chain.OrderState{}, err
	}
	return now, st[0], st[0].Err
}

// fillable refuses an order the chain says could not be filled now.
func (c checked) fillable(now int64, st chain.OrderState) error {
	if c.order.Deadline.Cmp(big.NewInt(now)) < 0 {
		return problem.InvalidParam("deadline", "the deadline %s is before the chain's time %d: the contract refuses the fill (OrderExpired)", c.order.Deadline, now)
	}
	if st.Used {
		return problem.New(problem.OrderNotFillable, "the contract marks this order used (isOrderCancelled): it was filled or cancelled on chain, and cannot be filled again")
	}
	if c.kind == KindPurchase {
		need := new(big.Int).Add(c.purchase.MaxCostAllowance, c.purchase.Commission)
		if st.Allowance.Cmp(need) < 0 || st.Balance.Cmp(need) < 0 {
			return problem.New(problem.OrderNotFillable, "a fill pulls maxCostAllowance + comission = %s of the premium token from the maker; its allowance to LimitOrders is %s and its balance %s", need, st.Allowance, st.Balance)
		}
		return nil
	}
	if st.Owner != c.order.Maker {
		return problem.New(problem.OrderNotFillable, "the maker %s does not own option %s of market %s (its owner is %s)", c.order.Maker.Hex(), c.tokenID, c.market.Hex(), ownerText(st.Owner))
	}
	if c.order.Deadline.Cmp(big.NewInt(st.Expiry)) > 0 {
		return problem.InvalidParam("deadline", "the deadline %s is after the option's expiry %d: the market refuses an exercise after it", c.order.Deadline, st.Expiry)
	}
	if !st.Delegated {
		return problem.New(problem.OrderNotFillable, "LimitOrders %s is not the maker's exercise delegate on market %s: send updateExerciseDelegate first (GET /clamm/orders/prepare gives it)", c.up.Config.LimitOrders.Hex(), c.market.Hex())
	}
	return nil
}

func ownerText(a common.Address) string {
	if a == (common.Address{}) {
		return "nobody: it was never minted or was burnt"
	}
	return a.Hex()
}

// record is the accepted order as the book stores it.
func (c checked) record(so SignedOrder, now int64, head uint64) (Record, error) {
	so.Maker = c.order.Maker.Hex()
	so.Validator = common.Address{}.Hex()
	so.Data = hexutil.Encode(c.order.Data)
	so.Signature = hexutil.Encode(c.order.Sig.Bytes())
	body, err := json.Marshal(so)
	if err != nil {
		return Record{}, fmt.Errorf("orders: encode: %w", err)
	}
	rec := Record{ChainID: so.ChainID, Hash: c.hash, Contract: c.up.Config.LimitOrders, Kind: c.kind, Maker: c.order.Maker,
		Market: c.market, Body: body, AcceptedAt: now, AcceptedBlock: head, Deadline: clampDeadline(c.order.Deadline)}
	if c.tokenID != nil {
		rec.TokenID = c.tokenID.String()
	}
	return rec, nil
}
