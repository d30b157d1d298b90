package subgraph

import (
	"context"
	"fmt"
	"regexp"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// LPQuery selects a liquidity provider's page: User always, Pool and
// Handler only when non-nil.
type LPQuery struct {
	User          common.Address
	Pool, Handler *common.Address
	First, Skip   int
}

// where is the page's filter object: the LP entities' user, pool and
// handler fields, plus extra.
func (q LPQuery) where(extra map[string]any) map[string]any {
	w := map[string]any{"user": LowerHex(q.User)}
	if q.Pool != nil {
		w["pool"] = LowerHex(*q.Pool)
	}
	if q.Handler != nil {
		w["handler"] = LowerHex(*q.Handler)
	}
	for k, v := range extra {
		w[k] = v
	}
	return w
}

// LPRange is the handler range an LP entity is of.
type LPRange struct {
	Handler   Address `json:"handler"`
	TokenID   BigInt  `json:"tokenId"`
	Pool      Address `json:"pool"`
	Hook      Address `json:"hook"`
	TickLower int     `json:"tickLower"`
	TickUpper int     `json:"tickUpper"`
}

// LPRecord is a deposit or a withdrawal as the history pages list them.
type LPRecord struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // withdrawals only: Burn, Reserve or WithdrawReserved
	LPRange
	User         Address `json:"user"`
	Liquidity    BigInt  `json:"liquidity"`
	Shares       BigInt  `json:"shares"`
	SqrtPriceX96 BigInt  `json:"sqrtPriceX96"`
	BlockNumber  BigInt  `json:"blockNumber"`
	Timestamp    BigInt  `json:"timestamp"`
	TxHash       string  `json:"txHash"`
}

func (r LPRecord) entityID() string { return r.ID }

var lpTxHash = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)

func (r LPRecord) complete() error {
	if r.TokenID.Int == nil || r.Liquidity.Int == nil || r.Shares.Int == nil || r.SqrtPriceX96.Int == nil ||
		r.BlockNumber.Int == nil || r.Timestamp.Int == nil {
		return fmt.Errorf("LP record %s lacks fields", r.ID)
	}
	if !lpTxHash.MatchString(r.TxHash) {
		return fmt.Errorf("LP record %s: transaction hash %q", r.ID, r.TxHash)
	}
	return checkSqrtPrice("LP record "+r.ID, r.SqrtPriceX96.Int)
}

// LPDepositHistory runs one page of the user's deposits, newest first.
func (c *Client) LPDepositHistory(ctx context.Context, q LPQuery) ([]LPRecord, Meta, error) {
	return lpPage(ctx, c, lpList{list{queries.LPDepositHistory, "lpDeposits"}, nil}, q, LPRecord.complete)
}

// LPWithdrawKinds are the kinds of withdrawal records.
var LPWithdrawKinds = map[string]bool{"Burn": true, "Reserve": true, "WithdrawReserved": true}

// LPWithdrawHistory runs one page of the user's withdrawals, newest first.
func (c *Client) LPWithdrawHistory(ctx context.Context, q LPQuery) ([]LPRecord, Meta, error) {
	return lpPage(ctx, c, lpList{list{queries.LPWithdrawHistory, "lpWithdrawals"}, nil}, q, func(r LPRecord) error {
		if !LPWithdrawKinds[r.Kind] {
			return fmt.Errorf("LP withdrawal %s of kind %q", r.ID, r.Kind)
		}
		return r.complete()
	})
}

// LPHolding is one range a user holds shares or reserved liquidity of, as
// the subgraph last saw it.
type LPHolding struct {
	ID string `json:"id"`
	LPRange
	// Pool is null in the subgraph only inside the transaction of a
	// range's first mint; such a holding is refused as incomplete.
	Shares            BigInt `json:"shares"`
	Principal         BigInt `json:"principal"`
	ReservedLiquidity BigInt `json:"reservedLiquidity"`
	OpenedAt          BigInt `json:"openedAt"`
}

func (h LPHolding) entityID() string { return h.ID }

// LPPositions runs one page of the ranges the user holds, newest first.
func (c *Client) LPPositions(ctx context.Context, q LPQuery) ([]LPHolding, Meta, error) {
	return lpPage(ctx, c, lpList{list{queries.LPPositions, "lpPositions"}, map[string]any{"open": true}}, q, func(h LPHolding) error {
		if h.TokenID.Int == nil || h.Shares.Int == nil || h.Principal.Int == nil || h.ReservedLiquidity.Int == nil || h.OpenedAt.Int == nil {
			return fmt.Errorf("LP position %s lacks fields", h.ID)
		}
		if (h.Pool == Address{}) {
			return fmt.Errorf("LP position %s has no range", h.ID)
		}
		return nil
	})
}

// lpList is an LP page's document and list field, and the filters it
// adds to the query's own.
type lpList struct {
	list
	extra map[string]any
}

func lpPage[T identified](ctx context.Context, c *Client, l lpList, q LPQuery, complete func(T) error) ([]T, Meta, error) {
	if q.First < 1 || q.First > MaxFirst || q.Skip < 0 || q.Skip > MaxSkip {
		return nil, Meta{}, fmt.Errorf("%s: first %d / skip %d outside Graph Node's limits", l.doc, q.First, q.Skip)
	}
	vars := map[string]any{"where": q.where(l.extra), "first": q.First, "skip": q.Skip}
	return runPage(ctx, c, l.list, vars, complete)
}
