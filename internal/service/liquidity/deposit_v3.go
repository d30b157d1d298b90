package liquidity

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

// reservationCall is a reserveLiquidity or withdrawReserveLiquidity
// (method) of amount and where to send it: to a V2 handler itself (which
// acts for msg.sender), to a V3 handler's position manager V2 otherwise,
// as method(handler, payload): the V3 handler takes it from a whitelisted
// app only, with the account the app names (the position manager names
// its caller).
func (w *withdrawal) reservationCall(method string, amount *big.Int) (common.Address, []byte, error) {
	if !w.st.V3 {
		if method == "reserveLiquidity" {
			data, err := w.pos.ReserveCall(amount)
			return w.req.Handler, data, err
		}
		data, err := w.pos.WithdrawReservedCall(amount)
		return w.req.Handler, data, err
	}
	payload, err := w.pos.Payload(amount)
	if err != nil {
		return common.Address{}, nil, err
	}
	data, err := contracts.ViaPositionManagerV2(method, w.req.Handler, payload)
	return w.st.PositionManager, data, err
}

// sharesTakenRefusal refuses a reserved withdrawal whose simulation took
// shares from the user: a reserved withdrawal burns none. The position
// manager V2 as stryke-xyz/clamm 80766cc wrote it (January 2025; corrected
// in 5c270f8) forwards withdrawReserveLiquidity to the handler's
// reserveLiquidity, which would reserve that many more of the user's
// shares and restart the cooldown of all of it; its ABI is the corrected
// one's, so only what the transaction does tells them apart.
func sharesTakenRefusal(o chain.StepOutcome) Refusal {
	return Refusal{Transaction: "withdrawReserved", After: []string{}, Reason: fmt.Sprintf(
		"the simulated withdrawReserveLiquidity took %s shares instead of paying out reserved liquidity: this position manager reserves on it (DopexV2PositionManagerV2 before its April 2025 correction)",
		new(big.Int).Neg(o.ShareDelta))}
}
