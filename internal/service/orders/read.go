package orders

import (
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

// An order's status, as the chain has it when the book is read.
const (
	StatusOpen      = "open"      // it would pass the contract's checks now (profit aside)
	StatusFilled    = "filled"    // a fill event of the contract names it
	StatusCancelled = "cancelled" // a cancel event names it
	StatusExpired   = "expired"   // its deadline (or the option's expiry) has passed
	StatusInvalid   = "invalid"   // the chain moved under it: reason says how
)

// Statuses lists the statuses a client may filter by.
var Statuses = []string{StatusOpen, StatusFilled, StatusCancelled, StatusExpired, StatusInvalid}

// Closure is how the chain closed an order: its fill or cancel event
// (Event, Tx and Block always set), or, for an order the contract marks
// used whose event lies below the blocks any read of the book reaches
// (chain.Reader.OrderLogReach), what is known without it: status invalid, Reason, and the blocks read
// (SearchedFrom to SearchedTo) where the event was not. The used mark is
// final on chain, so such an order is kept closed like a filled one and
// costs later reads nothing, rather than reading those blocks again on
// every list.
type Closure struct {
	Status       string `json:"status"`
	Event        string `json:"event,omitempty"`
	Tx           string `json:"tx,omitempty"`
	Block        uint64 `json:"block,omitempty"`
	Commission   string `json:"commission,omitempty"`
	Executor     string `json:"executor,omitempty"`
	Reason       string `json:"reason,omitempty"`
	SearchedFrom uint64 `json:"searchedFrom,omitempty"`
	SearchedTo   uint64 `json:"searchedTo,omitempty"`
}

// View is an order as the book shows it.
type View struct {
	ChainID      uint64      `json:"chainId"`
	Hash         string      `json:"hash"`
	Kind         Kind        `json:"kind"`
	Status       string      `json:"status"`
	Reason       string      `json:"reason,omitempty"`
	Maker        string      `json:"maker"`
	OptionMarket string      `json:"optionMarket"`
	TokenID      string      `json:"tokenId,omitempty"`
	MinProfit    string      `json:"minProfit,omitempty"`
	Order        SignedOrder `json:"order"`
	V            uint8       `json:"v"`
	R            string      `json:"r"`
	S            string      `json:"s"`
	AcceptedAt   int64       `json:"acceptedAt"`
	Closed       *Closure    `json:"closed,omitempty"`
}

// viewOf renders a record; live is the chain's verdict on an order the
// chain has not closed (nil: open as far as the book knows).
func (s *Orders) viewOf(rec Record, live *verdict) View {
	var so SignedOrder
	_ = json.Unmarshal(rec.Body, &so) // written by record(): it decodes
	v := View{ChainID: rec.ChainID, Hash: rec.Hash.Hex(), Kind: rec.Kind, Status: StatusOpen, Maker: rec.Maker.Hex(),
		OptionMarket: rec.Market.Hex(), TokenID: rec.TokenID, Order: so, AcceptedAt: rec.AcceptedAt}
	if sig, err := ParseSignature(so.Signature); err == nil {
		v.V, v.R, v.S = sig.V, hexutil.Encode(sig.R[:]), hexutil.Encode(sig.S[:])
	}
	if rec.Kind == KindExercise {
		if data, err := hexutil.Decode(so.Data); err == nil {
			if minProfit, _, _, err := contracts.DecodeExerciseData(data); err == nil {
				v.MinProfit = minProfit.String()
			}
		}
	}
	if rec.Closed != nil {
		var c Closure
		if json.Unmarshal(rec.Closed, &c) == nil {
			v.Closed, v.Status, v.Reason = &c, c.Status, c.Reason
		}
		return v
	}
	if live != nil {
		v.Status, v.Reason = live.status, live.reason
	}
	return v
}

type verdict struct{ status, reason string }

// ListRequest selects a chain's orders: a maker's or a market's, and of
// one status when Status is set.
type ListRequest struct {
	ChainID uint64
	User    *common.Address
	Market  *common.Address
	TokenID string
	Status  string
}

// List reads the book and judges each order the chain has not closed at
// the answer's block: a fill or cancel is found in the contract's events
// (and kept, so it is looked for once); a transfer of the option, a
// revoked delegate or allowance, a passed deadline move an order out of
// open at the first block that shows it.
func (s *Orders) List(ctx context.Context, req ListRequest) ([]View, error) {
	up, err := s.contractOf(req.ChainID)
	if err != nil {
		return nil, err
	}
	recs, err := s.repo.List(ctx, Filter{ChainID: req.ChainID, Maker: req.User, Market: req.Market, TokenID: req.TokenID})
	if err != nil {
		return nil, storeErr(err)
	}
	verdicts, err := s.judge(ctx, up.Config.LimitOrders, recs)
	if err != nil {
		return nil, err
	}
	out := []View{}
	for i, rec := range recs {
		v := s.viewOf(rec, verdicts[i])
		if req.Status == "" || v.Status == req.Status {
			out = append(out, v)
		}
	}
	return out, nil
}

// judge reads the chain state of every record not closed (one aggregate3)
// and, for those the contract marks used, finds their closing events. An
// order the book cannot judge for a fault of its own (a body that does not
// parse, a market or token that does not answer its calls) is invalid,
// with why; it never fails the others' answer. An upstream's outage does.
func (s *Orders) judge(ctx context.Context, contract common.Address, recs []Record) ([]*verdict, error) {
	out := make([]*verdict, len(recs))
	var qs []chain.OrderQuery
	var idx []int
	var ords []Order
	for i, rec := range recs {
		if rec.Closed != nil || rec.Contract != contract {
			continue
		}
		q, o, err := s.queryOf(ctx, rec)
		if err != nil {
			if out[i], err = faulty(err); err != nil {
				return nil, err
			}
			continue
		}
		qs, idx, ords = append(qs, q), append(idx, i), append(ords, o)
	}
	if len(qs) == 0 {
		return out, nil
	}
	up := s.chains[recs[0].ChainID]
	now, states, err := up.Chain.OrderStates(ctx, qs)
	if err != nil {
		return nil, err
	}
	var used []int
	for j, st := range states {
		switch {
		case st.Err != nil:
			if out[idx[j]], err = faulty(st.Err); err != nil {
				return nil, err
			}
		case st.Used:
			used = append(used, idx[j])
		default:
			out[idx[j]] = liveVerdict(recs[idx[j]], ords[j], now, st)
		}
	}
	if err := s.closeUsed(ctx, contract, recs, used, out); err != nil {
		return nil, err
	}
	return out, nil
}

// faulty is the invalid verdict of an order whose own reads failed (a
// revert, an answer that does not decode, a market that is not one), or
// err itself when it is not the order's fault but an upstream's (a node
// unreachable, timed out, or answering with an error) or the gateway's own
// (internal) or the request's end: those fail the answer, as they would
// any other order's.
func faulty(err error) (*verdict, error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	p := problem.As(err)
	switch p.Kind() {
	case problem.KindUpstreamUnavailable, problem.KindUpstreamTimeout, problem.KindClientClosed, problem.KindInternal:
		return nil, err
	case problem.KindUpstreamError:
		if !errors.Is(err, chain.ErrUndecodable) {
			return nil, err
		}
	}
	return &verdict{StatusInvalid, "the book cannot judge this order: " + p.Message}, nil
}

// queryOf is the chain question of a stored order.
func (s *Orders) queryOf(ctx context.Context, rec Record) (chain.OrderQuery, Order, error) {
	var so SignedOrder
	if err := json.Unmarshal(rec.Body, &so); err != nil {
		return chain.OrderQuery{}, Order{}, problem.Wrap(problem.InvalidParameter, err, "its stored body does not parse")
	}
	o, err := orderFields(so)
	if err != nil {
		return chain.OrderQuery{}, Order{}, err
	}
	q := chain.OrderQuery{Contract: rec.Contract, StructHash: rec.Hash, Maker: rec.Maker, Market: rec.Market}
	if rec.Kind == KindExercise {
		q.TokenID, _ = new(big.Int).SetString(rec.TokenID, 10)
		return q, o, nil
	}
	p, err := contracts.DecodePurchaseData(o.Data)
	if err != nil {
		return chain.OrderQuery{}, Order{}, problem.Wrap(problem.InvalidParameter, err, "its data does not decode as a limit purchase")
	}
	info, err := s.chains[rec.ChainID].Chain.Market(ctx, rec.Market)
	if err != nil {
		return chain.OrderQuery{}, Order{}, err
	}
	q.Premium = info.PutAsset.Address
	if p.IsCall {
		q.Premium = info.CallAsset.Address
	}
	return q, o, nil
}

// liveVerdict judges an order the contract does not mark used.
func liveVerdict(rec Record, o Order, now int64, st chain.OrderState) *verdict {
	if o.Deadline.Cmp(big.NewInt(now)) < 0 {
		return &verdict{StatusExpired, "the deadline has passed"}
	}
	if rec.Kind == KindPurchase {
		p, _ := contracts.DecodePurchaseData(o.Data)
		need := new(big.Int).Add(p.MaxCostAllowance, p.Commission)
		if st.Allowance.Cmp(need) < 0 {
			return &verdict{StatusInvalid, "the maker's allowance to LimitOrders is below maxCostAllowance + comission"}
		}
		if st.Balance.Cmp(need) < 0 {
			return &verdict{StatusInvalid, "the maker's balance of the premium token is below maxCostAllowance + comission"}
		}
		return &verdict{StatusOpen, ""}
	}
	switch {
	case st.Owner == (common.Address{}):
		return &verdict{StatusInvalid, "the option no longer exists (exercised whole or burnt)"}
	case st.Owner != rec.Maker:
		return &verdict{StatusInvalid, "the option was transferred: its owner is " + st.Owner.Hex()}
	case st.Expiry < now:
		return &verdict{StatusExpired, "the option has expired"}
	case !st.Delegated:
		return &verdict{StatusInvalid, "the maker revoked LimitOrders as its exercise delegate on the market"}
	}
	return &verdict{StatusOpen, ""}
}

// closeUsed finds the fill or cancel event of each used order and keeps
// it. The events are read back from the head to the earliest acceptance
// block among them, stopping once every used order's is found. Where the
// read's bound stops it first, an order accepted below the blocks read
// reads invalid (missing), and is kept closed so only when no read
// could reach its blocks; one the read covered whole without finding its
// event (a node behind) is not kept.
func (s *Orders) closeUsed(ctx context.Context, contract common.Address, recs []Record, used []int, out []*verdict) error {
	if len(used) == 0 {
		return nil
	}
	up := s.chains[recs[used[0]].ChainID]
	from := recs[used[0]].AcceptedBlock
	want := map[common.Hash]bool{}
	for _, i := range used {
		from = min(from, recs[i].AcceptedBlock)
		want[recs[i].Hash] = true
	}
	head, err := up.Chain.BlockNumber(ctx)
	if err != nil {
		return err
	}
	byHash := map[common.Hash]chain.OrderEvent{}
	seen := 0
	enough := func(evs []chain.OrderEvent) bool {
		for _, ev := range evs[seen:] {
			if h := StructHash(ev.Order); want[h] {
				byHash[h] = ev
			}
		}
		seen = len(evs)
		return len(byHash) == len(want)
	}
	evs, reached, err := up.Chain.OrderEvents(ctx, contract, from, head, enough)
	if err != nil {
		return err
	}
	enough(evs)
	reach := up.Chain.OrderLogReach(head)
	for _, i := range used {
		c, found := byHash[recs[i].Hash]
		closure := closureOf(c)
		if !found {
			var v *verdict
			if v, closure = missing(recs[i], reached, head, reach); v != nil {
				out[i] = v
				continue
			}
		}
		if err := s.keep(ctx, &recs[i], closure); err != nil {
			return err
		}
	}
	return nil
}

// keep records how the chain closed rec, in the store and in rec.
func (s *Orders) keep(ctx context.Context, rec *Record, c Closure) error {
	raw, _ := json.Marshal(c)
	if err := s.repo.Close(ctx, rec.ChainID, rec.Hash, raw); err != nil {
		return storeErr(err)
	}
	rec.Closed = raw
	return nil
}

// missing judges a used order whose event the read did not find: the
// verdict when it is not to be kept, else the closure to keep.
//
// When the read covered the order's blocks whole (reached: the lowest
// block read), the node may be behind and a later read may find the
// event: not kept. When the read stopped above the order's acceptance
// block, the event lies below the blocks read; the order is kept closed
// as invalid only when it was accepted below reach (the reader's
// OrderLogReach) too. How deep one read gets depends on the node during
// it (each window it refuses as too wide or too full is halved at the
// cost of a round trip), so an order above reach may be reached by the
// next read, which finds its fill and the filler's commission rather than
// losing them to a closure kept for good. Below reach no read under the
// same limits gets, whatever the node does, so keeping it there costs
// later reads nothing and loses nothing they could find.
func missing(rec Record, reached, head, reach uint64) (*verdict, Closure) {
	if rec.AcceptedBlock >= reached {
		return &verdict{StatusInvalid, "the contract marks the order used, but no fill or cancel event was found since it was accepted"}, Closure{}
	}
	why := fmt.Sprintf("the contract marks the order used (filled or cancelled), but its event was not found in the blocks read back from the head (%d) to block %d, and the order was accepted at block %d", head, reached, rec.AcceptedBlock)
	if rec.AcceptedBlock >= reach {
		return &verdict{StatusInvalid, why + ": a later read looks for it again"}, Closure{}
	}
	return nil, Closure{Status: StatusInvalid, SearchedFrom: reached, SearchedTo: head,
		Reason: why + ": the book keeps it closed and does not look for the event again"}
}

func closureOf(ev chain.OrderEvent) Closure {
	c := Closure{Status: StatusFilled, Event: ev.Event, Tx: ev.Tx.Hex(), Block: ev.Block}
	if ev.Event == "LogOrderCancelled" {
		c.Status = StatusCancelled
		return c
	}
	if ev.Commission != nil {
		c.Commission = ev.Commission.String()
	}
	c.Executor = ev.Executor.Hex()
	return c
}

// SellOrders is each option's take-profit as a position shows it
// (vocab.SellOrder): of the book's orders on the market by owner that the
// book has not seen closed, the newest accepted limit exercise of each
// option asked. It reads the store only, so a positions page costs no
// chain round trip for it; the order's status at the head is
// GET /clamm/orders' (a cancel or a fill shows there first).
func (s *Orders) SellOrders(ctx context.Context, chainID uint64, market, owner common.Address, tokenIDs []string) (map[string]*vocab.SellOrder, error) {
	out := map[string]*vocab.SellOrder{}
	if len(tokenIDs) == 0 {
		return out, nil
	}
	recs, err := s.repo.List(ctx, Filter{ChainID: chainID, Maker: &owner, Market: &market, OpenOnly: true})
	if err != nil {
		return nil, storeErr(err)
	}
	want := map[string]bool{}
	for _, id := range tokenIDs {
		want[id] = true
	}
	for _, rec := range recs { // newest accepted first
		if rec.Kind != KindExercise || !want[rec.TokenID] || out[rec.TokenID] != nil {
			continue
		}
		v := s.viewOf(rec, nil)
		out[rec.TokenID] = &vocab.SellOrder{Hash: v.Hash, CreatedAt: v.Order.CreatedAt.String(), Deadline: v.Order.Deadline.String(),
			Maker: v.Maker, Validator: v.Order.Validator, Flags: FlagsExercise, Data: v.Order.Data, Payment: v.MinProfit,
			Signature: v.Order.Signature, V: v.V, R: v.R, S: v.S}
	}
	return out, nil
}
