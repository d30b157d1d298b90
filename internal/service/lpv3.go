package service

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// What the V3 handlers (stryke-xyz/clamm 80766cc, reached through
// DopexV2PositionManagerV2) change for a liquidity provider. The
// generation is the chain's answer (LPState.V3: the handler answers
// whitelistedPools), never inferred from an address or a name.

// v3PoolListed refuses a deposit into a pool a V3 handler does not list
// in whitelistedPools: its mintPositionHandler reverts (NotWhitelistedPool)
// for any other pool, and a deposit answered with approvals and no
// simulation would not show it.
func v3PoolListed(st *chain.LPState, handler, pool common.Address) error {
	if !st.V3 || st.PoolWhitelisted {
		return nil
	}
	return problem.New(problem.PoolNotWhitelisted, "V3 handler %s does not take deposits into pool %s (whitelistedPools is false): mintPosition would revert", handler.Hex(), pool.Hex()).On("pool")
}

// reservation is a reserveLiquidity or withdrawReserveLiquidity (method)
// of payload: sent to a V2 handler itself (which acts for msg.sender), to
// a V3 handler's position manager V2 otherwise, as method(handler,
// payload): the V3 handler takes it from a whitelisted app only, with the
// account the app names (the position manager names its caller).
func reservation(st *chain.LPState, handler common.Address, method string, payload []byte) chain.Action {
	if st.V3 {
		data, _ := contracts.ViaPositionManagerV2(method, handler, payload) // a known method of a fixed ABI
		return chain.Action{To: st.PositionManager, Data: data}
	}
	return chain.Action{To: handler, Data: pack(contracts.HandlerLP, method, payload)}
}

// sharesTakenRefusal refuses a reserved withdrawal whose simulation took
// shares from the user: a reserved withdrawal burns none. The position
// manager V2 as stryke-xyz/clamm 80766cc wrote it (January 2025; corrected
// in 5c270f8) forwards withdrawReserveLiquidity to the handler's
// reserveLiquidity, which would reserve that many more of the user's
// shares and restart the cooldown of all of it; its ABI is the corrected
// one's, so only what the transaction does tells them apart.
func sharesTakenRefusal(o chain.ActionOutcome) Refusal {
	return Refusal{Transaction: "withdrawReserved", Reason: fmt.Sprintf(
		"the simulated withdrawReserveLiquidity took %s shares instead of paying out reserved liquidity: this position manager reserves on it (DopexV2PositionManagerV2 before its April 2025 correction)",
		new(big.Int).Neg(o.ShareDelta))}
}
