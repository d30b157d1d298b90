package chaintest

import (
	"bytes"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// PositionManager is a DopexV2PositionManager's whitelist: the keys
// keccak256(abi.encode(handler, app)) set to true (contracts.WhitelistKey).
type PositionManager struct {
	Whitelist map[common.Hash]bool
}

// Allow whitelists handler for app (an option market).
func (pm *PositionManager) Allow(handler, app common.Address) {
	if pm.Whitelist == nil {
		pm.Whitelist = map[common.Hash]bool{}
	}
	pm.Whitelist[contracts.WhitelistKey(handler, app)] = true
}

// Handler is a single-tick liquidity handler as the strikes chain sees it.
type Handler struct {
	// Version 1 answers tokenIds with V1's 12 words, else V2's 13.
	Version int
	Paused  bool
}

// positionManagerOf answers an option market's positionManager().
func positionManagerOf(m *Market, data []byte) ([]byte, bool, bool) {
	if !bytes.Equal(data[:4], contracts.MarketPositionManager.Methods["positionManager"].ID) {
		return nil, false, false
	}
	if m.PositionManager == (common.Address{}) {
		return nil, false, true // a market without the getter reverts
	}
	return common.LeftPadBytes(m.PositionManager[:], 32), true, true
}

func positionManagerCall(pm *PositionManager, data []byte) ([]byte, bool) {
	return dispatch(contracts.PositionManager, data, func(name string, args []any) ([]any, bool) {
		if name != "whitelistedHandlersWithApp" {
			return nil, false
		}
		key := args[0].([32]byte)
		return []any{pm.Whitelist[key]}, true
	})
}

func handlerCall(h *Handler, data []byte) ([]byte, bool) {
	ret, ok := dispatch(contracts.Handler, data, func(name string, _ []any) ([]any, bool) {
		switch name {
		case "paused":
			return []any{h.Paused}, true
		case "tokenIds":
			z := new(big.Int)
			return []any{z, z, z, z, z, z, z, uint64(0), z, common.Address{}, common.Address{}, z, z}, true
		}
		return nil, false
	})
	if ok && h.Version == 1 && bytes.Equal(data[:4], contracts.Handler.Methods["tokenIds"].ID) {
		ret = ret[:contracts.HandlerV1Words*32] // V1's TokenIdInfo has no reservedLiquidity
	}
	return ret, ok
}
