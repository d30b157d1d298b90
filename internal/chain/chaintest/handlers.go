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
}

// Allow whitelists handler for app (an option market).
func (pm *PositionManager) Allow(handler, app common.Address) {
	if pm.Whitelist == nil {
		pm.Whitelist = map[common.Hash]bool{}
	}
	pm.Whitelist[contracts.WhitelistKey(handler, app)] = true
}

// Handler is a single-tick liquidity handler as the strikes chain and a
// liquidity provider's reads see it.
type Handler struct {
	// Version 1 answers tokenIds with V1's 12 words, else V2's 13.
	Version int
	Paused  bool
	// Positions answer tokenIds(id) (zeros for any other id); Shares answer
	// balanceOf(holder, id), the handler's ERC6909 (V2) or ERC1155 (V1)
	// share balances.
	Positions map[common.Hash]*Position
	Shares    map[common.Hash]map[common.Address]*big.Int
}

// Position is a range's TokenIdInfo as tokenIds answers it (fee growth
// and tokens owed are not modelled: zero).
type Position struct {
	TotalLiquidity, TotalSupply, LiquidityUsed *big.Int
	LastDonation                               uint64
	DonatedLiquidity, ReservedLiquidity        *big.Int
	Token0, Token1                             common.Address
	Fee                                        uint32
}

// The handlers' deployed defaults (stryke-xyz/clamm handlers V2:
// lockedBlockDuration = 100, reserveCooldown = 6 hours).
const (
	LockedBlockDuration = 100
	ReserveCooldown     = 6 * 3600
)

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

// Getters the handler ABI of internal/contracts lacks: reserveCooldown()
// only on V2 handlers and lockedBlockDuration() on both (the subgraph's
// discovery tells a handler's kind by them), the share balances, and a V2
// holder's reservation (none here).
var (
	reserveCooldownID     = crypto.Keccak256([]byte("reserveCooldown()"))[:4]
	lockedBlockDurationID = crypto.Keccak256([]byte("lockedBlockDuration()"))[:4]
	balanceOfID           = crypto.Keccak256([]byte("balanceOf(address,uint256)"))[:4]
	reservedPerUserID     = crypto.Keccak256([]byte("reservedLiquidityPerUser(uint256,address)"))[:4]
)

// extraHandlerCall answers the getters above.
func extraHandlerCall(h *Handler, data []byte) ([]byte, bool, bool) {
	word := func(v uint64) []byte { return common.LeftPadBytes(new(big.Int).SetUint64(v).Bytes(), 32) }
	switch {
	case len(data) == 4 && bytes.Equal(data, lockedBlockDurationID):
		return word(LockedBlockDuration), true, true
	case len(data) == 4 && bytes.Equal(data, reserveCooldownID) && h.Version != 1:
		return word(ReserveCooldown), true, true
	case len(data) == 68 && bytes.Equal(data[:4], balanceOfID):
		holder, id := common.BytesToAddress(data[4:36]), common.BytesToHash(data[36:68])
		bal := new(big.Int)
		if b := h.Shares[id][holder]; b != nil {
			bal = b
		}
		return common.LeftPadBytes(bal.Bytes(), 32), true, true
	case len(data) == 68 && bytes.Equal(data[:4], reservedPerUserID) && h.Version != 1:
		return make([]byte, 64), true, true
	}
	return nil, false, false
}

func handlerCall(h *Handler, data []byte) ([]byte, bool) {
	if ret, ok, answered := extraHandlerCall(h, data); answered {
		return ret, ok
	}
	ret, ok := dispatch(contracts.Handler, data, func(name string, args []any) ([]any, bool) {
		switch name {
		case "paused":
			return []any{h.Paused}, true
		case "tokenIds":
			z := new(big.Int)
			p := h.Positions[common.BigToHash(args[0].(*big.Int))]
			if p == nil {
				return []any{z, z, z, z, z, z, z, uint64(0), z, common.Address{}, common.Address{}, z, z}, true
			}
			return []any{p.TotalLiquidity, p.TotalSupply, p.LiquidityUsed, z, z, z, z, p.LastDonation, p.DonatedLiquidity,
				p.Token0, p.Token1, new(big.Int).SetUint64(uint64(p.Fee)), p.ReservedLiquidity}, true
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
