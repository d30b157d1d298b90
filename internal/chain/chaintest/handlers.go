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

// Hook is a bounded-TTL hook (stryke-xyz/clamm BoundedTTLHook_0Day/_1Week):
// onPositionUse decodes (app, ttl) from the start of its data and reverts
// unless the app is whitelisted and the ttl at most MaxTTL.
type Hook struct {
	Owner     common.Address
	MaxTTL    uint64
	Whitelist map[common.Address]bool
}

// Allow whitelists app (an option market), as updateWhitelistedAppsStatus.
func (h *Hook) Allow(app common.Address) {
	if h.Whitelist == nil {
		h.Whitelist = map[common.Address]bool{}
	}
	h.Whitelist[app] = true
}

func hookCall(h *Hook, data []byte) ([]byte, bool) {
	return dispatch(contracts.Hook, data, func(name string, args []any) ([]any, bool) {
		switch name {
		case "owner":
			return []any{h.Owner}, true
		case "onPositionUse":
			d := args[0].([]byte)
			if len(d) < 64 {
				return nil, false
			}
			app := common.BytesToAddress(d[12:32])
			ttl := new(big.Int).SetBytes(d[32:64])
			return []any{}, h.Whitelist[app] && ttl.IsUint64() && ttl.Uint64() <= h.MaxTTL
		}
		return nil, false
	})
}
