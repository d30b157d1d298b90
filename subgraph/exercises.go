package subgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/queries"
)

// Exercise is one exercise with the option fields a history record needs.
type Exercise struct {
	ID                 string `json:"id"`
	TxHash             string `json:"txHash"`
	Timestamp          BigInt `json:"timestamp"`
	BlockNumber        BigInt `json:"blockNumber"`
	TotalProfit        BigInt `json:"totalProfit"`
	TotalAssetRelocked BigInt `json:"totalAssetRelocked"`
	SqrtPriceX96       BigInt `json:"sqrtPriceX96"`
	// Exerciser is the account the market paid; Delegated is true when
	// that is not the owner; ProfitToOwner is what reached the owner in the
	// transaction (nil when the subgraph could not tell).
	Exerciser     string          `json:"exerciser"`
	Delegated     bool            `json:"delegated"`
	ProfitToOwner *BigInt         `json:"profitToOwner"`
	Option        ExercisedOption `json:"option"`
}

// ExercisedOption is the option an exercise belongs to.
type ExercisedOption struct {
	TokenID       BigInt `json:"tokenId"`
	IsCall        bool   `json:"isCall"`
	TickLower     int    `json:"tickLower"`
	TickUpper     int    `json:"tickUpper"`
	Expiry        BigInt `json:"expiry"`
	Premium       BigInt `json:"premium"`
	MintTimestamp BigInt `json:"mintTimestamp"`
}

// addressRE is an address as Graph Node serves Bytes: lowercase 0x-hex.
var addressRE = regexp.MustCompile(`^0x[0-9a-f]{40}$`)

// HistoryQuery selects one page of a user's exercises on a market.
type HistoryQuery struct {
	User   common.Address
	Market common.Address
	First  int
	Skip   int
}

// ExerciseHistory runs one query with first and skip passed through.
func (c *Client) ExerciseHistory(ctx context.Context, q HistoryQuery) ([]Exercise, Meta, error) {
	return userPage(ctx, c, list{queries.ExerciseHistory, "exercises"}, q, func(e Exercise) error {
		if e.Timestamp.Int == nil || e.TotalProfit.Int == nil || e.TotalAssetRelocked.Int == nil || e.SqrtPriceX96.Int == nil ||
			e.Option.Expiry.Int == nil || e.Option.Premium.Int == nil || e.Option.MintTimestamp.Int == nil || e.Option.TokenID.Int == nil {
			return fmt.Errorf("exercise %s lacks fields", e.ID)
		}
		if !addressRE.MatchString(e.Exerciser) || (e.ProfitToOwner != nil && (e.ProfitToOwner.Int == nil || e.ProfitToOwner.Sign() < 0)) {
			return fmt.Errorf("exercise %s: exerciser %q / profitToOwner", e.ID, e.Exerciser)
		}
		return checkSqrtPrice("exercise "+e.ID, e.SqrtPriceX96.Int)
	})
}

// list names a query's document and the field its entities come under.
type list struct{ doc, field string }

// userPage runs one of the queries that page through a user's entities on
// a market (userVars), the list under field decoded and each entity
// checked by complete (a failure is garbage from the subgraph).
func userPage[T any](ctx context.Context, c *Client, l list, q HistoryQuery, complete func(T) error) ([]T, Meta, error) {
	vars, err := userVars(l.doc, q)
	if err != nil {
		return nil, Meta{}, err
	}
	return runPage(ctx, c, l, vars, complete)
}

// userVars are the variables of a user's page on a market: Graph Node's
// limits checked here, first and skip passed through.
func userVars(doc string, q HistoryQuery) (map[string]any, error) {
	if q.First < 1 || q.First > MaxFirst || q.Skip < 0 || q.Skip > MaxSkip {
		return nil, fmt.Errorf("%s: first %d / skip %d outside Graph Node's limits", doc, q.First, q.Skip)
	}
	return map[string]any{"user": LowerHex(q.User), "market": LowerHex(q.Market), "first": q.First, "skip": q.Skip}, nil
}

// runPage runs one page's document with vars (whose "first" is the page's
// int length) and decodes the list field (decodeList) and _meta.
func runPage[T any](ctx context.Context, c *Client, l list, vars map[string]any, complete func(T) error) ([]T, Meta, error) {
	first, _ := vars["first"].(int)
	out, meta, err := execFields(ctx, c, l.doc, vars)
	if err != nil {
		return nil, Meta{}, err
	}
	list, err := decodeList(l, out[l.field], first, complete)
	if err != nil {
		return nil, Meta{}, err
	}
	return list, answerMeta(ctx, meta), nil
}

// execFields runs doc with vars and returns the answer's fields, its
// _meta decoded (what a document reads beside its list is the caller's).
func execFields(ctx context.Context, c *Client, doc string, vars map[string]any) (map[string]json.RawMessage, metaJSON, error) {
	var out map[string]json.RawMessage
	var meta metaJSON
	if err := c.exec(ctx, doc, vars, &out); err != nil {
		return nil, meta, err
	}
	if err := json.Unmarshal(out["_meta"], &meta); err != nil {
		return nil, meta, garbage(fmt.Errorf("%s: _meta: %w", doc, err))
	}
	return out, meta, nil
}

// decodeList decodes the list l.field of l.doc's answer, refusing a list
// longer than first, an incomplete entity or one listed twice.
func decodeList[T any](l list, raw json.RawMessage, first int, complete func(T) error) ([]T, error) {
	doc, field := l.doc, l.field
	var list []T
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		return nil, garbage(fmt.Errorf("%s: %s: %v", doc, field, err))
	}
	if len(list) > first {
		// Graph Node never answers more than first: a page this long is
		// not the page asked for, and would make the caller read (and the
		// gateway cache) more than the client asked.
		return nil, garbage(fmt.Errorf("%s: %d %s for first %d", doc, len(list), field, first))
	}
	seen := make(map[string]bool, len(list))
	for _, e := range list {
		if err := complete(e); err != nil {
			return nil, asGarbage(err)
		}
		if id := any(e).(identified).entityID(); seen[id] {
			return nil, garbage(fmt.Errorf("%s: %s %s listed twice", doc, field, id))
		} else {
			seen[id] = true
		}
	}
	return list, nil
}

// asGarbage is err as the subgraph's garbage, unless it is already a
// problem of its own class.
func asGarbage(err error) error {
	if pe := (*problem.Error)(nil); !errors.As(err, &pe) {
		return garbage(err)
	}
	return err
}

// identified is an entity with its Graph Node id: an id appears once in
// an answer (entities are keyed by it), so a repeated one is a broken or
// hostile subgraph, refused rather than de-duplicated: which copy to
// believe is not known, and nothing from such an answer is cached.
type identified interface{ entityID() string }

func (e Exercise) entityID() string   { return e.ID }
func (p Purchase) entityID() string   { return p.ID }
func (o HeldOption) entityID() string { return o.ID }
