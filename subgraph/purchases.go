package subgraph

import (
	"context"
	"fmt"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// Purchase is one LogMintOption with the option fields a history record needs.
type Purchase struct {
	ID                  string `json:"id"`
	TxHash              string `json:"txHash"`
	Timestamp           BigInt `json:"timestamp"`
	IsCall              bool   `json:"isCall"`
	Premium             BigInt `json:"premium"`
	ProtocolFees        BigInt `json:"protocolFees"`
	TotalAssetWithdrawn BigInt `json:"totalAssetWithdrawn"`
	// Caller is mintOption's msg.sender (LogMintOption.user); nil when a
	// replacement document does not ask for it.
	Caller *Address        `json:"caller"`
	Option PurchasedOption `json:"option"`
}

// PurchasedOption is the option a purchase minted.
type PurchasedOption struct {
	TokenID       BigInt `json:"tokenId"`
	TickLower     int    `json:"tickLower"`
	TickUpper     int    `json:"tickUpper"`
	Expiry        BigInt `json:"expiry"`
	MintTimestamp BigInt `json:"mintTimestamp"`
	Fate
	// LastSettlement is the option's latest settlement, nil until settled.
	LastSettlement *LastSettlement `json:"lastSettlement"`
}

// Fate is what has happened to an option since its mint: how often it
// was exercised and the latest exercise (nil until exercised).
type Fate struct {
	ExerciseCount int           `json:"exerciseCount"`
	LastExercise  *LastExercise `json:"lastExercise"`
}

// LastExercise is an option's latest exercise: the account the market
// paid, whether that was not the owner, when and in which transaction.
type LastExercise struct {
	Exerciser Address `json:"exerciser"`
	Delegated bool    `json:"delegated"`
	Timestamp BigInt  `json:"timestamp"`
	TxHash    string  `json:"txHash"`
}

// LastSettlement is an option's latest settlement: who settled it and
// what it kept (Settlement's settlerProfit and settlerCollateral).
type LastSettlement struct {
	Settler           Address `json:"settler"`
	SettlerProfit     BigInt  `json:"settlerProfit"`
	SettlerCollateral BigInt  `json:"settlerCollateral"`
	Timestamp         BigInt  `json:"timestamp"`
	TxHash            string  `json:"txHash"`
}

// complete refuses a fate whose exercise or settlement lacks fields.
func (f Fate) complete(id string, s *LastSettlement) error {
	if f.ExerciseCount < 0 || (f.LastExercise != nil && f.LastExercise.Timestamp.Int == nil) || (f.ExerciseCount > 0) != (f.LastExercise != nil) {
		return fmt.Errorf("option %s: %d exercises, latest %v", id, f.ExerciseCount, f.LastExercise)
	}
	if s != nil && (s.SettlerProfit.Int == nil || s.SettlerCollateral.Int == nil || s.Timestamp.Int == nil) {
		return fmt.Errorf("option %s: settlement lacks fields", id)
	}
	return nil
}

// PurchaseHistory runs one query of a user's purchases on a market with
// first and skip passed through.
func (c *Client) PurchaseHistory(ctx context.Context, q HistoryQuery) ([]Purchase, Meta, error) {
	return userPage(ctx, c, list{queries.PurchaseHistory, "purchases"}, q, func(p Purchase) error {
		if p.Timestamp.Int == nil || p.Premium.Int == nil || p.ProtocolFees.Int == nil || p.TotalAssetWithdrawn.Int == nil ||
			p.Option.TokenID.Int == nil || p.Option.Expiry.Int == nil || p.Option.MintTimestamp.Int == nil {
			return fmt.Errorf("purchase %s lacks fields", p.ID)
		}
		return p.Option.Fate.complete(p.ID, p.Option.LastSettlement)
	})
}

// HeldOption is an option as PurchasePositions selects it.
type HeldOption struct {
	ID                  string `json:"id"`
	TokenID             BigInt `json:"tokenId"`
	IsCall              bool   `json:"isCall"`
	TickLower           int    `json:"tickLower"`
	TickUpper           int    `json:"tickUpper"`
	Expiry              BigInt `json:"expiry"`
	Premium             BigInt `json:"premium"`
	ProtocolFees        BigInt `json:"protocolFees"`
	TotalAssetWithdrawn BigInt `json:"totalAssetWithdrawn"`
	MintTimestamp       BigInt `json:"mintTimestamp"`
	MintTxHash          string `json:"mintTxHash"`
	Fate
}

func (o HeldOption) complete() error {
	if o.TokenID.Int == nil || o.Expiry.Int == nil || o.Premium.Int == nil || o.ProtocolFees.Int == nil ||
		o.TotalAssetWithdrawn.Int == nil || o.MintTimestamp.Int == nil {
		return fmt.Errorf("option %s lacks fields", o.ID)
	}
	return o.Fate.complete(o.ID, nil)
}

// HeldPage is one page of the options a user owns on a market and, read
// by the same document at the same block, the user's enabled exercise
// delegates on the market (what ExerciseDelegates reads for that owner).
type HeldPage struct {
	Options []HeldOption
	// Delegates are known only when DelegatesRead: a document from the
	// queries directory may leave the field out, and its reader then asks
	// ExerciseDelegates.
	Delegates     []ExerciseDelegate
	DelegatesRead bool
}

// PurchasePositions runs one query of the options a user owns on a market,
// not settled, newest first, with first and skip passed through, and of
// the user's enabled delegates on the market when the document asks.
func (c *Client) PurchasePositions(ctx context.Context, q HistoryQuery) (HeldPage, Meta, error) {
	doc := queries.PurchasePositions
	vars, err := userVars(doc, q)
	if err != nil {
		return HeldPage{}, Meta{}, err
	}
	out, meta, err := execFields(ctx, c, doc, vars)
	if err != nil {
		return HeldPage{}, Meta{}, err
	}
	var page HeldPage
	if page.Options, err = decodeList(list{doc, "options"}, out["options"], q.First, HeldOption.complete); err != nil {
		return HeldPage{}, Meta{}, err
	}
	if raw, ok := out["exerciseDelegates"]; ok {
		page.Delegates, err = decodeList(list{doc, "exerciseDelegates"}, raw, MaxFirst, func(d ExerciseDelegate) error {
			if d.Owner.Addr() != q.User {
				return fmt.Errorf("exercise delegate %s of owner %s, not the user's", d.ID, d.Owner.Addr().Hex())
			}
			return d.complete()
		})
		if err != nil {
			return HeldPage{}, Meta{}, err
		}
		page.DelegatesRead = true
	}
	return page, answerMeta(ctx, meta), nil
}
