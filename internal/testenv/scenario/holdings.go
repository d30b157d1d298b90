package scenario

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// The handlers' defaults (stryke-xyz/clamm): the donation lock and the
// reserve cooldown the demo's handlers answer.
const (
	lockedBlockDuration = 100
	reserveCooldown     = 6 * 3600
)

// populateHoldings gives the node's handlers the liquidity providers'
// state the scenario's history left: each range's liquidity (the Strike
// entities) and each holder's shares and reservation (LpPosition), the
// range's supply their sum. It reads the indexed store because that is the
// one place the history's outcome is kept (the store is cached across
// fakes; the node is not). The history's donations are days before its
// head, so nothing is locked.
func populateHoldings(node *chaintest.Node, st *graphnode.Store) {
	node.Lock()
	defer node.Unlock()
	lp := func(handler common.Address) *chaintest.HandlerLP {
		h := node.Handlers[handler]
		if h == nil {
			return nil
		}
		if h.LP == nil {
			h.LP = &chaintest.HandlerLP{LockedBlockDuration: lockedBlockDuration}
			if h.Version != 1 {
				h.LP.ReserveCooldown = reserveCooldown
			}
		}
		return h.LP
	}
	for _, id := range st.All("Strike") {
		e := st.Get("Strike", id)
		l := lp(common.BytesToAddress(e["handler"].Bytes))
		if l == nil {
			continue
		}
		r := l.Range(e["tokenId"].Big)
		r.TotalLiquidity.Set(e["totalLiquidity"].Big)
		r.LiquidityUsed.Set(e["usedLiquidity"].Big)
		r.ReservedLiquidity.Set(e["reservedLiquidity"].Big)
	}
	for _, id := range st.All("LpPosition") {
		e := st.Get("LpPosition", id)
		l := lp(common.BytesToAddress(e["handler"].Bytes))
		if l == nil {
			continue
		}
		r, user := l.Range(e["tokenId"].Big), common.BytesToAddress(e["user"].Bytes)
		r.Shares[user] = new(big.Int).Set(e["shares"].Big)
		r.TotalSupply.Add(r.TotalSupply, e["shares"].Big)
		if res := e["reservedLiquidity"].Big; res.Sign() > 0 {
			r.Reserved[user] = chaintest.Reservation{Liquidity: new(big.Int).Set(res), LastReserve: uint64(e["updatedAt"].Big.Int64())}
		}
	}
}
