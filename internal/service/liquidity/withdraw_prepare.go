package liquidity

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// WithdrawRequest asks to take the user's liquidity out of one range of a
// handler: Shares to burn, or nil for as many as can be burnt now.
type WithdrawRequest struct {
	ChainID                   uint64
	User, Handler, Pool, Hook common.Address
	TickLower, TickUpper      int
	Shares                    *big.Int
}

// PreparedWithdrawal is the user's position in the range, read at the
// answer's block, and the transactions that take out what can be taken
// now, in the order to send them (Order): withdrawReserved, then withdraw,
// then reserve. They are simulated from the user at the chain's head
// (SimulatedAt) one after another, each on the state the ones before it
// leave, and their figures are what each moved there: sent in that order,
// each once the one before is mined, every one does what it says (others'
// transactions in between aside). Why that order: reserveLiquidity
// restarts the cooldown of everything the user has reserved, so a matured
// withdrawReserved sent after it reverts for another reserveCooldown; and
// a reservation takes its liquidity off totalLiquidity, so a burn after it
// finds less free liquidity than it was sized for. A transaction the
// handler's rules allow that reverts after the ones before it (a
// reservation whose pool poke finds the handler's pool position emptied by
// the burn before it: NP) is left out and listed in Refused.
type PreparedWithdrawal struct {
	Handler         LPHandler        `json:"handler"`
	Pool            string           `json:"pool"`
	Hook            string           `json:"hook"`
	TickLower       int              `json:"tickLower"`
	TickUpper       int              `json:"tickUpper"`
	TokenID         string           `json:"tokenId"`
	PositionManager string           `json:"positionManager"`
	Position        WithdrawPosition `json:"position"`
	// Order names the transactions offered below (withdrawReserved,
	// withdraw, reserve), in the order to send them.
	Order []string `json:"order"`
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
	// Refused lists the reservation, reserved withdrawal or (after a
	// reserved withdrawal) burn that the state allows by the handler's
	// rules but that reverted when simulated (it is then null above),
	// with the contract's error; empty when none.
	Refused []Refusal `json:"refused"`
	// SimulatedAt is the head block the transactions were simulated at,
	// which may be newer than the answer's (asOf, where the position was
	// read).
	SimulatedAt *vocab.BlockRef `json:"simulatedAt"`
}

// Refusal is a transaction left out because its simulation reverted.
type Refusal struct {
	Transaction string `json:"transaction"` // withdraw, reserve or withdrawReserved
	Reason      string `json:"reason"`
	// After names the transactions of Order it was simulated after; it
	// reverted there, and on its own too when Alone is true.
	After []string `json:"after"`
	Alone bool     `json:"alone"`
}

// WithdrawPosition is the user's position at the answer's block, in
// shares and in liquidity units (L): the same figures the deposit
// positions show at that block.
type WithdrawPosition struct {
	Shares string `json:"shares"`
	// Liquidity is convertToAssets(shares) at the answer's block
	// (donation lock included).
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
	Shares    string              `json:"shares"`
	Liquidity string              `json:"liquidity"`
	Receive   []vocab.TokenAmount `json:"receive"`
	Tx        vocab.Tx            `json:"tx"`
	// RestartsCooldown (reserve only) is the user's reserved liquidity
	// still reserved when the reservation runs (after the transactions
	// before it): reserveLiquidity sets the user's one lastReserve, so
	// that liquidity too becomes withdrawable only reserveCooldown after
	// the reservation is mined. "0" when none.
	RestartsCooldown *string `json:"restartsCooldown,omitempty"`
}

// withdrawal is a withdrawal being prepared.
type withdrawal struct {
	req               WithdrawRequest
	up                *vocab.Upstreams
	head              *vocab.Early[chain.Head]
	st                *chain.LPState
	id                *big.Int
	pos               contracts.Position
	burn, lock, taken *big.Int // shares to burn, shares options hold, reserved liquidity to withdraw
	can               *big.Int // shares that can be burnt now
	reservable        *big.Int // reserved liquidity withdrawable now (taken may leave a unit of it)
}

// WithdrawPrepare reads the position (markets for the position manager,
// then the handler, the pool and the chain's head: two round trips) and
// builds burnPosition for the shares asked (or all that can be burnt now),
// and on V2 handlers reserveLiquidity for the shares options hold and
// withdrawReserveLiquidity once a reservation's cooldown has passed, all
// simulated from the user at the head in one more round trip.
func (s *Liquidity) WithdrawPrepare(ctx context.Context, req WithdrawRequest) (PreparedWithdrawal, error) {
	up, err := s.lpUpstreams(req.ChainID)
	if err != nil {
		return PreparedWithdrawal{}, err
	}
	w := &withdrawal{req: req, up: up, head: readHead(ctx, up)}
	defer w.head.End()
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
	w.lock, w.reservable, w.taken = new(big.Int), new(big.Int), new(big.Int)
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
		w.reservable = w.reservedNow()
		w.taken.Set(w.reservable)
	}
	if w.req.Shares == nil && w.lock.Sign() > 0 {
		w.leaveOneUnit()
	}
	if w.burn.Sign() == 0 && w.lock.Sign() == 0 && w.taken.Sign() == 0 {
		return problem.New(problem.WithdrawExceedsAllowed, "nothing can be withdrawn now: withdrawable 0 shares; reserved liquidity %s withdrawable from %d (unix seconds) once the range has it free",
			st.Reserved, st.LastReserve+st.Cooldown).On("shares")
	}
	return nil
}

// leaveOneUnit sizes a max withdrawal so that the reservation sent after
// it can run: reserveLiquidity first pokes the handler's pool position
// with burn(0), which the pool refuses on an empty position (NP), so the
// reserved withdrawal and the burn before it leave at least one unit of
// the position's liquidity (totalLiquidity + reservedLiquidity -
// liquidityUsed); and the reservation takes its liquidity off the
// totalLiquidity the burn left (a checked subtraction), so it is capped at
// the most shares that covers, counting the burn at its largest worth.
func (w *withdrawal) leaveOneUnit() {
	r := w.st.Range
	room := new(big.Int).Add(r.TotalLiquidity, r.ReservedLiquidity)
	room.Sub(room, r.LiquidityUsed)
	room.Sub(room, big.NewInt(1))
	if room.Sign() < 0 {
		return // the reservation reverts whatever is sent before it
	}
	if w.taken.Cmp(room) > 0 {
		w.taken.Set(room)
	}
	room.Sub(room, w.taken)
	if b := sharesFor(room, r); b.Cmp(w.burn) < 0 {
		w.burn = b
	}
	whole := clamm.ShareRange{TotalLiquidity: r.TotalLiquidity, TotalSupply: r.TotalSupply}
	after := clamm.ShareRange{TotalLiquidity: new(big.Int).Sub(r.TotalLiquidity, whole.ConvertToAssets(w.burn, 0)), TotalSupply: new(big.Int).Sub(r.TotalSupply, w.burn)}
	if most := after.SharesWithin(after.TotalLiquidity); w.lock.Cmp(most) > 0 {
		w.lock = most
	}
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

// planned is one transaction of a withdrawal, in the order to send it.
type planned struct {
	name   string // withdrawReserved, withdraw or reserve
	slot   **WithdrawTx
	step   chain.LPStep
	shares *big.Int // shares it burns (nil: a reserved withdrawal)
}

// steps are the planned transactions in the order to send them:
// withdrawReserved, withdraw (burn), reserve (PreparedWithdrawal says why).
func (w *withdrawal) steps(out *PreparedWithdrawal) ([]planned, error) {
	var plan []planned
	add := func(name string, slot **WithdrawTx, to common.Address, data []byte, err error, shares *big.Int) error {
		if err == nil {
			plan = append(plan, planned{name, slot, chain.LPStep{To: to, Data: data, AssetsOf: shares}, shares})
		}
		return err
	}
	if w.taken.Sign() > 0 {
		to, data, err := w.reservationCall("withdrawReserveLiquidity", w.taken)
		if err := add("withdrawReserved", &out.WithdrawReserved, to, data, err, nil); err != nil {
			return nil, err
		}
	}
	if w.burn.Sign() > 0 {
		data, err := w.pos.BurnCall(w.burn)
		if err := add("withdraw", &out.Withdraw, w.st.PositionManager, data, err, w.burn); err != nil {
			return nil, err
		}
	}
	if w.lock.Sign() > 0 {
		to, data, err := w.reservationCall("reserveLiquidity", w.lock)
		if err := add("reserve", &out.Reserve, to, data, err, w.lock); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// simulate runs the planned transactions from the user at the head, one
// after another and each on its own (one round trip), and builds the
// answer from what each moved after the ones before it.
func (w *withdrawal) simulate(ctx context.Context) (PreparedWithdrawal, error) {
	st := w.st
	out := w.response()
	plan, err := w.steps(&out)
	if err != nil {
		return PreparedWithdrawal{}, err
	}
	sim := chain.LPSimulation{Signer: w.req.User, Handler: w.req.Handler, TokenID: w.id, Tokens: []common.Address{st.Pool.Token0, st.Pool.Token1}, Alone: true}
	for _, p := range plan {
		sim.Steps = append(sim.Steps, p.step)
	}
	head, err := w.head.Wait(ctx)
	if err != nil {
		return PreparedWithdrawal{}, err
	}
	res, err := w.up.Chain.SimulateLP(ctx, head, sim)
	if err != nil {
		return PreparedWithdrawal{}, err
	}
	out.SimulatedAt = vocab.BlockRefOf(res.At)
	stillReserved := new(big.Int).Set(st.Reserved)
	skipped := false // a reserved withdrawal refused for taking shares
	for i, p := range plan {
		o, alone := res.Sequence[i], res.Alone[i]
		if skipped { // the refused one is not sent: what follows runs without it
			o = alone
		}
		if p.name == "withdrawReserved" && o.Revert == nil && o.ShareDelta.Sign() != 0 {
			out.Refused, skipped = append(out.Refused, sharesTakenRefusal(o)), true
			continue
		}
		if o.Revert != nil && p.name == "withdraw" && alone.Revert != nil {
			return PreparedWithdrawal{}, probeRevert(problem.WithdrawWouldRevert, "burnPosition", w.req.User, res.At.Number, alone.Revert)
		}
		if o.Revert != nil {
			out.Refused = append(out.Refused, Refusal{Transaction: p.name, Reason: o.Revert.Reason, After: append([]string{}, out.Order...), Alone: alone.Revert != nil})
			continue
		}
		tx := &WithdrawTx{Shares: new(big.Int).Neg(o.ShareDelta).String(), Liquidity: w.taken.String(), Receive: tokenAmounts(st.Tokens, o.TokenDeltas),
			Tx: vocab.Tx{To: p.step.To.Hex(), Data: hexutil.Encode(p.step.Data)}}
		switch p.name {
		case "withdrawReserved":
			stillReserved.Sub(stillReserved, w.taken)
		case "reserve":
			r := stillReserved.String()
			tx.RestartsCooldown = &r
		}
		if p.shares != nil {
			tx.Liquidity = o.Assets.String()
		}
		*p.slot = tx
		out.Order = append(out.Order, p.name)
	}
	if len(out.Order) == 0 {
		r := out.Refused[0]
		return PreparedWithdrawal{}, problem.New(problem.WithdrawWouldRevert, "%s reverts when simulated from %s at block %d: %s", r.Transaction, w.req.User.Hex(), res.At.Number, r.Reason)
	}
	return out, nil
}

func (w *withdrawal) response() PreparedWithdrawal {
	st := w.st
	at := uint64(0)
	if st.Reserved.Sign() > 0 {
		at = st.LastReserve + st.Cooldown
	}
	r := st.Range
	worth := clamm.ShareRange{TotalLiquidity: r.TotalLiquidity, TotalSupply: r.TotalSupply, DonatedLiquidity: r.DonatedLiquidity,
		LastDonation: r.LastDonation, LockedBlockDuration: st.LockedBlockDuration}.ConvertToAssets(st.Shares, st.Block)
	return PreparedWithdrawal{
		Handler: lpHandler(w.up, w.req.Handler, st), Pool: w.req.Pool.Hex(), Hook: w.req.Hook.Hex(), Order: []string{}, Refused: []Refusal{},
		TickLower: w.req.TickLower, TickUpper: w.req.TickUpper, TokenID: w.id.String(), PositionManager: st.PositionManager.Hex(),
		Position: WithdrawPosition{Shares: st.Shares.String(), Liquidity: worth.String(), WithdrawableShares: w.can.String(), FreeLiquidity: freeLiquidity(r).String(),
			Reserved: ReservedPosition{Liquidity: st.Reserved.String(), LastReserve: st.LastReserve, WithdrawableAt: at, Withdrawable: w.reservable.String()}},
	}
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
