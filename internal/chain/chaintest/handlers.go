package chaintest

import (
	"bytes"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// PositionManager is a DopexV2PositionManager's whitelist: the keys
// keccak256(abi.encode(handler, app)) set to true (contracts.WhitelistKey).
type PositionManager struct {
	Whitelist map[common.Hash]bool
	// Handlers are those Allow paired with an app: whitelistedHandlers.
	Handlers map[common.Address]bool
}

// Allow whitelists handler for app (an option market).
func (pm *PositionManager) Allow(handler, app common.Address) {
	if pm.Whitelist == nil {
		pm.Whitelist = map[common.Hash]bool{}
	}
	pm.Whitelist[contracts.WhitelistKey(handler, app)] = true
	if pm.Handlers == nil {
		pm.Handlers = map[common.Address]bool{}
	}
	pm.Handlers[handler] = true
}

// Handler is a single-tick liquidity handler as the strikes chain sees it.
type Handler struct {
	// Version 1 answers tokenIds with V1's 12 words, else V2's 13.
	Version int
	Paused  bool
	// LP, when set, answers the liquidity providers' reads (holdings.go).
	LP *HandlerLP
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

// The getters the subgraph's discovery probes a handler's kind with:
// reserveCooldown() only on V2 handlers, lockedBlockDuration() on both
// (subgraph/src/manager.ts). Both return a uint64.
var (
	reserveCooldownID     = crypto.Keccak256([]byte("reserveCooldown()"))[:4]
	lockedBlockDurationID = crypto.Keccak256([]byte("lockedBlockDuration()"))[:4]
)

func handlerCall(h *Handler, data []byte) ([]byte, bool) {
	if ret, ok, answered := holdingsCall(h, data); answered {
		return ret, ok
	}
	if len(data) == 4 && (bytes.Equal(data, lockedBlockDurationID) || bytes.Equal(data, reserveCooldownID) && h.Version != 1) {
		return common.LeftPadBytes([]byte{1}, 32), true
	}
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

// hookCall answers a hook. onPositionUse also refuses hook data that is
// not what DopexV2OptionMarketV2.mintOption sends through a handler for
// one of the node's markets: abi.encode(app, ttl, isCall, pool, tickLower,
// tickUpper) with the market's prime pool and a range one tick spacing
// wide on the isCall side of the pool's current tick. A real bounded-TTL
// hook reads only (app, ttl); the rest is checked here so a probe that
// sends anything else fails a test.
func (n *Node) hookCall(h *Hook, data []byte) ([]byte, bool) {
	return dispatch(contracts.Hook, data, func(name string, args []any) ([]any, bool) {
		switch name {
		case "owner":
			return []any{h.Owner}, true
		case "onPositionUse":
			vals, err := hookDataArgs.Unpack(args[0].([]byte))
			if err != nil {
				return nil, false
			}
			app, ttl, isCall, pool := vals[0].(common.Address), vals[1].(*big.Int), vals[2].(bool), vals[3].(common.Address)
			lo, hi := int(vals[4].(*big.Int).Int64()), int(vals[5].(*big.Int).Int64())
			m, p := n.Markets[app], n.Pools[pool]
			if m == nil || p == nil || m.PrimePool != pool || hi-lo != p.TickSpacing {
				return nil, false
			}
			callIs0 := m.CallAsset == p.Token0
			if side := lo > p.Tick; (hi <= p.Tick) == side || side != (isCall == callIs0) {
				return nil, false // holds the current tick, or on the other side
			}
			return []any{}, h.Whitelist[app] && ttl.IsUint64() && ttl.Uint64() <= h.MaxTTL
		}
		return nil, false
	})
}

// hookDataArgs is the layout of the hook data a V2 market sends.
var hookDataArgs = func() abi.Arguments {
	var args abi.Arguments
	for _, s := range []string{"address", "uint256", "bool", "address", "int24", "int24"} {
		t, err := abi.NewType(s, "", nil)
		if err != nil {
			panic(err)
		}
		args = append(args, abi.Argument{Type: t})
	}
	return args
}()
