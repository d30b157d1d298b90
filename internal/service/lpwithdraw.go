package service

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// WithdrawRequest asks to take the user's liquidity out of one range of a
// handler: Shares to burn, or nil for as many as can be burnt now.
type WithdrawRequest struct {
	ChainID                   uint64
	User, Handler, Pool, Hook common.Address
	TickLower, TickUpper      int
	Shares                    *big.Int
}

// PreparedWithdrawal is the user's position in the range and the
// transactions that take out what can be taken now, each simulated from
// the user on its own at the head. They are alternatives on today's state,
// not a sequence, and the order matters: burning all the free liquidity can
// empty the handler's pool position so a later reserveLiquidity reverts
// (NP), and a reservation leaves fewer shares to burn. Send one, then ask
// again.
type PreparedWithdrawal struct {
	Handler         LPHandler        `json:"handler"`
	Pool            string           `json:"pool"`
	Hook            string           `json:"hook"`
	TickLower       int              `json:"tickLower"`
	TickUpper       int              `json:"tickUpper"`
	TokenID         string           `json:"tokenId"`
	PositionManager string           `json:"positionManager"`
	Position        WithdrawPosition `json:"position"`
	// Withdraw burns shares through the position manager (burnPosition);
	// null when none can be burnt now.
	Withdraw *WithdrawTx `json:"withdraw"`
	// Reserve (V2 handlers) turns the shares options hold into reserved
	// liquidity (handler.reserveLiquidity, sent to the handler), which
	// becomes withdrawable reserveCooldown later once options free it;
	// null when options hold none of the user's shares, or on V1.
	Reserve *WithdrawTx `json:"reserve"`
	// WithdrawReserved (V2) withdraws the user's reserved liquidity
	// (handler.withdrawReserveLiquidity); null until its cooldown has
	// passed and the range has it free.
	WithdrawReserved *WithdrawTx `json:"withdrawReserved"`
	// Refused lists the reservation or reserved withdrawal that the state
	// allows by the handler's rules but that reverted when simulated (it
	// is then null above), with the contract's error; empty when none.
	Refused []Refusal `json:"refused"`
}

// Refusal is a transaction left out because its simulation reverted.
type Refusal struct {
	Transaction string `json:"transaction"` // reserve or withdrawReserved
	Reason      string `json:"reason"`
}

// WithdrawPosition is the user's position at the head, in shares and in
// liquidity units (L).
type WithdrawPosition struct {
	Shares string `json:"shares"`
	// Liquidity is convertToAssets(shares) (donation lock included).
	Liquidity string `json:"liquidity"`
	// WithdrawableShares can be burnt now: the most whose liquidity the
	// range has free (totalLiquidity - liquidityUsed), counted as if no
	// donation were still locked, so that it holds in any later block.
	WithdrawableShares string `json:"withdrawableShares"`
	// FreeLiquidity is the range's totalLiquidity - liquidityUsed, for
	// every holder of the range.
	FreeLiquidity string           `json:"freeLiquidity"`
	Reserved      ReservedPosition `json:"reserved"`
}

// ReservedPosition is the user's reserved liquidity (V2; zeros on V1).
type ReservedPosition struct {
	Liquidity   string `json:"liquidity"`
	LastReserve uint64 `json:"lastReserve"`
	// WithdrawableAt is lastReserve + reserveCooldown, unix seconds (0
	// when nothing is reserved); Withdrawable what can be withdrawn now.
	WithdrawableAt uint64 `json:"withdrawableAt"`
	Withdrawable   string `json:"withdrawable"`
}

// WithdrawTx is one prepared transaction and what it moves for the user,
// as simulated: Shares it burns, Liquidity it takes from the range
// (convertToAssets of the shares, or the reserved liquidity withdrawn),
// and the tokens the user receives (the pool's token0 and token1, fees
// included).
type WithdrawTx struct {
	Shares    string        `json:"shares"`
	Liquidity string        `json:"liquidity"`
	Receive   []TokenAmount `json:"receive"`
	Tx        Tx            `json:"tx"`
}

// withdrawal is a withdrawal being prepared.
type withdrawal struct {
	req               WithdrawRequest
	up                *Upstreams
	st                *chain.LPState
	id                *big.Int
	pos               contracts.Position
	burn, lock, taken *big.Int // shares to burn, shares options hold, reserved liquidity to withdraw
	can               *big.Int // shares that can be burnt now
}

// PrepareWithdraw reads the position (markets for the position manager,
// then the handler and the pool: two round trips) and builds burnPosition
// for the shares asked (or all that can be burnt now), and on V2 handlers
// reserveLiquidity for the shares options hold and withdrawReserveLiquidity
// once a reservation's cooldown has passed, all simulated from the user in
// one more round trip.
func (s *Service) PrepareWithdraw(ctx context.Context, req WithdrawRequest) (PreparedWithdrawal, error) {
	up, err := s.lpUpstreams(req.ChainID)
	if err != nil {
		return PreparedWithdrawal{}, err
	}
	w := &withdrawal{req: req, up: up}
	if err := w.read(ctx); err != nil {
		return PreparedWithdrawal{}, err
	}
	if err := w.plan(); err != nil {
		return PreparedWithdrawal{}, err
	}
	return w.simulate(ctx)
}

func (w *withdrawal) read(ctx context.Context) error {
	ms, err := marketsFor(ctx, w.up, w.req.Handler)
	if err != nil {
		return err
	}
	q := chain.LPQuery{Handler: w.req.Handler, Pool: w.req.Pool, User: w.req.User}
	// The range's id depends on the handler's generation, known after the
	// first read: ask V2's id, and again with V1's when it is a V1 handler.
	pos := contracts.Position{Handler: w.req.Handler, Pool: w.req.Pool, Hook: w.req.Hook, TickLower: w.req.TickLower, TickUpper: w.req.TickUpper}
	q.TokenID = pos.TokenID()
	st, err := lpState(ctx, w.up, q, ms.pms)
	if st == nil {
		return err
	}
	// herr, not err: err holds the first read's verdict (below).
	if herr := noHookOnV1(st.Format, w.req.Handler, w.req.Hook); herr != nil {
		return herr
	}
	if st.Format == chain.HandlerFormatV1 {
		pos.V1 = true
		q.TokenID = pos.TokenID()
		q.PositionManager = st.PositionManager
		// The re-read knows nothing of the position managers: keep the
		// first read's verdict on them (HandlerNotWhitelisted) in err.
		v1, rerr := w.up.Chain.LPState(ctx, q)
		if rerr != nil {
			return rerr
		}
		st = v1
	}
	w.st, w.id, w.pos = st, q.TokenID, pos
	if st.Shares.Sign() == 0 && st.Reserved.Sign() == 0 {
		return problem.New(problem.PositionNotFound, "%s holds no shares and no reserved liquidity in range [%d, %d] of handler %s on pool %s (hook %s)",
			w.req.User.Hex(), w.req.TickLower, w.req.TickUpper, w.req.Handler.Hex(), w.req.Pool.Hex(), w.req.Hook.Hex())
	}
	if st.Paused {
		return problem.New(problem.HandlerPaused, "handler %s is paused: burnPosition, reserveLiquidity and withdrawReserveLiquidity would revert (Pausable: paused)", w.req.Handler.Hex()).On("handler")
	}
	return err // HandlerNotWhitelisted, when no position manager takes the handler
}

// plan decides the shares to burn, to reserve and the reserved liquidity
// to withdraw.
func (w *withdrawal) plan() error {
	st, r := w.st, w.st.Range
	free := freeLiquidity(r)
	// convertToAssets(s) = ceil(s * (T + 1 - locked) / S) <= free holds
	// for any lock when s * (T + 1) <= free * S.
	can := sharesFor(free, r)
	if can.Cmp(st.Shares) > 0 {
		can.Set(st.Shares)
	}
	w.burn, w.can = can, can
	if w.req.Shares != nil {
		if w.req.Shares.Cmp(can) > 0 {
			return problem.New(problem.WithdrawExceedsAllowed, "%s shares asked; withdrawable now: %s shares of the %s the user holds (the range has %s liquidity free; options hold the rest)",
				w.req.Shares, can, st.Shares, free).On("shares")
		}
		w.burn = w.req.Shares
	}
	w.lock = new(big.Int)
	if !w.pos.V1 && r.LiquidityUsed.Sign() > 0 { // only options' holding is worth a reservation
		// reserveLiquidity takes convertToAssets(shares) off totalLiquidity
		// (checked): at most floor(T * S / (T + 1)) shares, so the range's
		// last holder keeps the share the +1 of convertToAssets rounds to.
		w.lock.Sub(st.Shares, can)
		if most := sharesFor(r.TotalLiquidity, r); w.lock.Cmp(most) > 0 {
			w.lock = most
		}
	}
	if !w.pos.V1 {
		w.taken = w.reservedNow()
	}
	if w.burn.Sign() == 0 && w.lock.Sign() == 0 && (w.taken == nil || w.taken.Sign() == 0) {
		return problem.New(problem.WithdrawExceedsAllowed, "nothing can be withdrawn now: withdrawable 0 shares; reserved liquidity %s withdrawable from %d (unix seconds) once the range has it free",
			st.Reserved, st.LastReserve+st.Cooldown).On("shares")
	}
	return nil
}

// sharesFor is the most shares whose convertToAssets is at most liquidity
// whatever donation is still locked (clamm.ShareRange.SharesWithin).
func sharesFor(liquidity *big.Int, r chain.RangeState) *big.Int {
	return clamm.ShareRange{TotalLiquidity: r.TotalLiquidity, TotalSupply: r.TotalSupply}.SharesWithin(liquidity)
}

// reservedNow is the reserved liquidity withdrawReserveLiquidity takes now:
// all of it once the cooldown has passed, as much as the range has free
// (totalLiquidity + reservedLiquidity - liquidityUsed); 0 before.
func (w *withdrawal) reservedNow() *big.Int {
	st, r := w.st, w.st.Range
	if st.Reserved.Sign() == 0 || st.LastReserve+st.Cooldown > st.Timestamp {
		return new(big.Int)
	}
	free := new(big.Int).Add(r.TotalLiquidity, r.ReservedLiquidity)
	free.Sub(free, r.LiquidityUsed)
	if free.Cmp(st.Reserved) < 0 {
		if free.Sign() < 0 {
			return new(big.Int)
		}
		return free
	}
	return new(big.Int).Set(st.Reserved)
}

// simulate runs the planned transactions from the user (one round trip,
// with convertToAssets of the shares involved) and builds the answer.
func (w *withdrawal) simulate(ctx context.Context) (PreparedWithdrawal, error) {
	st, h := w.st, w.req.Handler
	payload := func(amount *big.Int) []byte {
		p, _ := w.pos.Payload(amount)
		return p
	}
	type planned struct {
		slot   **WithdrawTx
		action chain.Action
		shares *big.Int
	}
	out := w.response()
	var plan []planned
	if w.burn.Sign() > 0 {
		plan = append(plan, planned{&out.Withdraw, chain.Action{To: st.PositionManager, Data: pack(contracts.PositionManagerLP, "burnPosition", h, payload(w.burn))}, w.burn})
	}
	if w.lock.Sign() > 0 {
		plan = append(plan, planned{&out.Reserve, reservation(st, h, "reserveLiquidity", payload(w.lock)), w.lock})
	}
	if w.taken != nil && w.taken.Sign() > 0 {
		plan = append(plan, planned{&out.WithdrawReserved, reservation(st, h, "withdrawReserveLiquidity", payload(w.taken)), nil})
	}
	actions := make([]chain.Action, len(plan))
	views := []chain.Call{{Target: h, Data: pack(contracts.HandlerLP, "convertToAssets", st.Shares, w.id)}}
	for i, p := range plan {
		p.action.ShareToken, p.action.ShareID = h, w.id
		actions[i] = p.action
		if p.shares != nil {
			views = append(views, chain.Call{Target: h, Data: pack(contracts.HandlerLP, "convertToAssets", p.shares, w.id)})
		}
	}
	outcomes, res, err := w.up.Chain.ProbeActions(ctx, chain.Probe{Signer: w.req.User, Block: st.Block + 1, Tokens: []common.Address{st.Pool.Token0, st.Pool.Token1}, Actions: actions, Views: views})
	if err != nil {
		return PreparedWithdrawal{}, err
	}
	out.Position.Liquidity = assetsOf(res[0]).String()
	v := 1
	for i, p := range plan {
		o := outcomes[i]
		if o.Revert != nil && p.slot == &out.Withdraw {
			return PreparedWithdrawal{}, probeRevert(problem.WithdrawWouldRevert, methodOf(p.action.Data), w.req.User, o.Revert)
		}
		if o.Revert != nil {
			name := map[bool]string{true: "reserve", false: "withdrawReserved"}[p.slot == &out.Reserve]
			out.Refused = append(out.Refused, Refusal{Transaction: name, Reason: o.Revert.Reason})
			if p.shares != nil {
				v++
			}
			continue
		}
		if p.slot == &out.WithdrawReserved && o.ShareDelta.Sign() != 0 {
			out.Refused = append(out.Refused, sharesTakenRefusal(o))
			continue
		}
		tx := &WithdrawTx{Shares: new(big.Int).Neg(o.ShareDelta).String(), Receive: tokenAmounts(st.Tokens, o.TokenDeltas),
			Tx: Tx{To: p.action.To.Hex(), Data: hexutil.Encode(p.action.Data)}}
		if p.shares != nil {
			tx.Liquidity = assetsOf(res[v]).String()
			v++
		} else {
			tx.Liquidity = w.taken.String()
		}
		*p.slot = tx
	}
	if out.Withdraw == nil && out.Reserve == nil && out.WithdrawReserved == nil {
		r := out.Refused[0]
		return PreparedWithdrawal{}, problem.New(problem.WithdrawWouldRevert, "%s reverts when simulated from %s: %s", r.Transaction, w.req.User.Hex(), r.Reason)
	}
	return out, nil
}

func (w *withdrawal) response() PreparedWithdrawal {
	st := w.st
	at := uint64(0)
	if st.Reserved.Sign() > 0 {
		at = st.LastReserve + st.Cooldown
	}
	taken := w.taken
	if taken == nil {
		taken = new(big.Int)
	}
	free := freeLiquidity(st.Range)
	return PreparedWithdrawal{
		Handler: lpHandler(w.up, w.req.Handler, st), Pool: w.req.Pool.Hex(), Hook: w.req.Hook.Hex(), Refused: []Refusal{},
		TickLower: w.req.TickLower, TickUpper: w.req.TickUpper, TokenID: w.id.String(), PositionManager: st.PositionManager.Hex(),
		Position: WithdrawPosition{Shares: st.Shares.String(), WithdrawableShares: w.can.String(), FreeLiquidity: free.String(),
			Reserved: ReservedPosition{Liquidity: st.Reserved.String(), LastReserve: st.LastReserve, WithdrawableAt: at, Withdrawable: taken.String()}},
	}
}

// assetsOf decodes a convertToAssets answer (0 when it failed).
func assetsOf(r chain.Result) *big.Int {
	if !r.OK || len(r.Data) < 32 {
		return new(big.Int)
	}
	return new(big.Int).SetBytes(r.Data[:32])
}

// methodOf names a prepared call by its selector.
func methodOf(data []byte) string {
	if string(contracts.PositionManagerLP.Methods["burnPosition"].ID) == string(data[:4]) {
		return "burnPosition"
	}
	for _, m := range []string{"reserveLiquidity", "withdrawReserveLiquidity"} {
		if string(contracts.HandlerLP.Methods[m].ID) == string(data[:4]) || string(contracts.PositionManagerV2Reserve.Methods[m].ID) == string(data[:4]) {
			return m
		}
	}
	return "the transaction"
}

// freeLiquidity is a range's liquidity not used by options now: what a
// burn can take (never below 0, however the handler's figures stand).
func freeLiquidity(r chain.RangeState) *big.Int {
	free := new(big.Int).Sub(r.TotalLiquidity, r.LiquidityUsed)
	if free.Sign() < 0 {
		free.SetInt64(0)
	}
	return free
}
