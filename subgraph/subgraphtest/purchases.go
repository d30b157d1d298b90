package subgraphtest

import (
	"fmt"
	"math/big"
	"sort"
)

// Purchase is a Purchase entity with its option, as PurchaseHistory selects it.
type Purchase struct {
	ID                  string          `json:"id"`
	Market              string          `json:"-"`
	Buyer               string          `json:"-"`
	TxHash              string          `json:"txHash"`
	Timestamp           string          `json:"timestamp"`
	IsCall              bool            `json:"isCall"`
	Premium             string          `json:"premium"`
	ProtocolFees        string          `json:"protocolFees"`
	TotalAssetWithdrawn string          `json:"totalAssetWithdrawn"`
	Option              PurchasedOption `json:"option"`
}

// PurchasedOption is the nested option of a Purchase.
type PurchasedOption struct {
	TokenID       string `json:"tokenId"`
	TickLower     int    `json:"tickLower"`
	TickUpper     int    `json:"tickUpper"`
	Expiry        string `json:"expiry"`
	MintTimestamp string `json:"mintTimestamp"`
}

// pageArgs reads first and skip and applies Graph Node's limits to them.
func pageArgs(v map[string]any) (first, skip int, err error) {
	if first, err = firstVar(v); err != nil {
		return 0, 0, err
	}
	if skip, err = intVar(v, "skip"); err != nil {
		return 0, 0, err
	}
	if skip < 0 || skip > 5000 {
		return 0, 0, fmt.Errorf("The `skip` argument must be between 0 and 5000, but is %d", skip)
	}
	return first, skip, nil
}

// page applies skip then first.
func page[T any](out []T, first, skip int) []T {
	if skip >= len(out) {
		return out[:0]
	}
	out = out[skip:]
	if len(out) > first {
		out = out[:first]
	}
	return out
}

// newestFirst orders by a decimal timestamp descending, then id ascending
// (Graph Node's tie-break on orderBy is the id).
func newestFirst(ts func(i int) string, id func(i int) string) func(i, j int) bool {
	return func(i, j int) bool {
		ti, _ := new(big.Int).SetString(ts(i), 10)
		tj, _ := new(big.Int).SetString(ts(j), 10)
		if c := ti.Cmp(tj); c != 0 {
			return c > 0
		}
		return id(i) < id(j)
	}
}

func (s *Server) purchaseHistory(v map[string]any) (map[string]any, error) {
	list, err := userPage(v, s.Purchases, func(p Purchase) (string, string, string, string) { return p.Buyer, p.Market, p.Timestamp, p.ID })
	return map[string]any{"purchases": list}, err
}

// userPage answers the documents that page through one user's entities on
// one market: user and market compared exactly (Graph Node compares Bytes
// exactly, so a mixed-case variable matches nothing), newest first by the
// entity's decimal order key (ties by id), then skip and first. key gives
// an entity's user, market, order key and id.
func userPage[T any](v map[string]any, all []T, key func(T) (user, market, order, id string)) ([]T, error) {
	first, skip, err := pageArgs(v)
	if err != nil {
		return nil, err
	}
	user, _ := v["user"].(string)
	market, _ := v["market"].(string)
	out := []T{}
	for _, e := range all {
		if u, m, _, _ := key(e); u == user && m == market {
			out = append(out, e)
		}
	}
	order := func(i int) string { _, _, o, _ := key(out[i]); return o }
	id := func(i int) string { _, _, _, x := key(out[i]); return x }
	sort.SliceStable(out, newestFirst(order, id))
	return page(out, first, skip), nil
}

// Option is an Option entity as PurchasePositions selects it.
type Option struct {
	ID                  string `json:"id"`
	Market              string `json:"-"`
	Owner               string `json:"-"`
	State               string `json:"-"` // Open, Exercised or Settled
	TokenID             string `json:"tokenId"`
	IsCall              bool   `json:"isCall"`
	TickLower           int    `json:"tickLower"`
	TickUpper           int    `json:"tickUpper"`
	Expiry              string `json:"expiry"`
	Premium             string `json:"premium"`
	ProtocolFees        string `json:"protocolFees"`
	TotalAssetWithdrawn string `json:"totalAssetWithdrawn"`
	MintTimestamp       string `json:"mintTimestamp"`
	MintTxHash          string `json:"mintTxHash"`
}

func (s *Server) purchasePositions(v map[string]any) (map[string]any, error) {
	var open []Option
	for _, o := range s.Options {
		if o.State != "Settled" {
			open = append(open, o)
		}
	}
	list, err := userPage(v, open, func(o Option) (string, string, string, string) { return o.Owner, o.Market, o.MintTimestamp, o.ID })
	return map[string]any{"options": list}, err
}
