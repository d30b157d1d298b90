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
}

// PurchaseHistory runs one query of a user's purchases on a market with
// first and skip passed through.
func (c *Client) PurchaseHistory(ctx context.Context, q HistoryQuery) ([]Purchase, Meta, error) {
	return userPage(ctx, c, list{queries.PurchaseHistory, "purchases"}, q, func(p Purchase) error {
		if p.Timestamp.Int == nil || p.Premium.Int == nil || p.ProtocolFees.Int == nil || p.TotalAssetWithdrawn.Int == nil ||
			p.Option.TokenID.Int == nil || p.Option.Expiry.Int == nil || p.Option.MintTimestamp.Int == nil {
			return fmt.Errorf("purchase %s lacks fields", p.ID)
		}
		return nil
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
}

// PurchasePositions runs one query of the options a user owns on a market,
// not settled, newest first, with first and skip passed through.
func (c *Client) PurchasePositions(ctx context.Context, q HistoryQuery) ([]HeldOption, Meta, error) {
	return userPage(ctx, c, list{queries.PurchasePositions, "options"}, q, func(o HeldOption) error {
		if o.TokenID.Int == nil || o.Expiry.Int == nil || o.Premium.Int == nil || o.ProtocolFees.Int == nil ||
			o.TotalAssetWithdrawn.Int == nil || o.MintTimestamp.Int == nil {
			return fmt.Errorf("option %s lacks fields", o.ID)
		}
		return nil
	})
}
