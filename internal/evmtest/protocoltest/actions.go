package protocoltest

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
)

func bi(v int) *big.Int { return big.NewInt(int64(v)) }

var (
	tAddress, _ = abi.NewType("address", "", nil)
	tInt24, _   = abi.NewType("int24", "", nil)
	tUint24, _  = abi.NewType("uint24", "", nil)
	tUint128, _ = abi.NewType("uint128", "", nil)
	tUint256, _ = abi.NewType("uint256", "", nil)
	tBytes, _   = abi.NewType("bytes", "", nil)
)

func args(ts ...abi.Type) abi.Arguments {
	out := make(abi.Arguments, len(ts))
	for i, t := range ts {
		out[i] = abi.Argument{Type: t}
	}
	return out
}

// Range names a handler position: tokenId = keccak256(abi.encode(handler,
// pool, hook, tickLower, tickUpper)).
type Range struct {
	Handler   common.Address // zero: the protocol's handler
	Pool      common.Address // zero: the prime pool
	Hook      common.Address
	TickLower int
	TickUpper int
}

func (p *Protocol) norm(r Range) Range { return p.fill(r, p.Handler) }

// fill sets a range's zero handler to `handler` and its zero pool to the prime pool.
func (p *Protocol) fill(r Range, handler common.Address) Range {
	if r.Handler == (common.Address{}) {
		r.Handler = handler
	}
	if r.Pool == (common.Address{}) {
		r.Pool = p.Pool
	}
	return r
}

// TokenID is the handler's id of the range.
func (p *Protocol) TokenID(r Range) *big.Int {
	r = p.norm(r)
	enc, _ := args(tAddress, tAddress, tAddress, tInt24, tInt24).Pack(r.Handler, r.Pool, r.Hook, bi(r.TickLower), bi(r.TickUpper))
	return new(big.Int).SetBytes(crypto.Keccak256(enc))
}

// positionData is the handler payload (pool, hook, tickLower, tickUpper, amount).
func positionData(r Range, amount *big.Int) []byte {
	enc, err := args(tAddress, tAddress, tInt24, tInt24, tUint128).Pack(r.Pool, r.Hook, bi(r.TickLower), bi(r.TickUpper), amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// Deposit mints handler liquidity for lp through the handler's position
// manager (mintPosition; the position manager V2 for the V3 handler); the
// range must be out of range at the pool's price. It returns the handler's
// token id and the shares minted.
func (p *Protocol) Deposit(lp *Account, r Range, liquidity *big.Int) (*big.Int, *big.Int, error) {
	r = p.norm(r)
	pm, a := p.ManagerOf(r.Handler)
	rc, err := p.Chain.Send(lp, pm, a.ABI, "mintPosition", r.Handler, positionData(r, liquidity))
	if err != nil {
		return nil, nil, err
	}
	ev := p.Find(rc, "LogMintPosition")
	if ev == nil {
		return p.TokenID(r), nil, nil
	}
	return ev.Args["tokenId"].(*big.Int), ev.Args["sharesMinted"].(*big.Int), nil
}

// Withdraw burns lp's shares of the range (burnPosition, through the
// handler's position manager).
func (p *Protocol) Withdraw(lp *Account, r Range, shares *big.Int) (*types.Receipt, error) {
	r = p.norm(r)
	pm, a := p.ManagerOf(r.Handler)
	return p.Chain.Send(lp, pm, a.ABI, "burnPosition", r.Handler, positionData(r, shares))
}

// Reserve turns lp's shares into reserved liquidity: a V2 handler's
// reserveLiquidity(data) sent to the handler, or for the V3 handler the
// position manager V2's reserveLiquidity(handler, data).
func (p *Protocol) Reserve(lp *Account, r Range, shares *big.Int) (*types.Receipt, error) {
	return p.reservation(lp, p.norm(r), "reserveLiquidity", shares)
}

// WithdrawReserved withdraws reserved liquidity (withdrawReserveLiquidity,
// routed as Reserve).
func (p *Protocol) WithdrawReserved(lp *Account, r Range, liquidity *big.Int) (*types.Receipt, error) {
	return p.reservation(lp, p.norm(r), "withdrawReserveLiquidity", liquidity)
}

func (p *Protocol) reservation(lp *Account, r Range, method string, amount *big.Int) (*types.Receipt, error) {
	if pm, a := p.ManagerOf(r.Handler); pm == p.V3.PositionManager {
		return p.Chain.Send(lp, pm, a.ABI, method, r.Handler, positionData(r, amount))
	}
	return p.Chain.Send(lp, r.Handler, HandlerV2.ABI, method, positionData(r, amount))
}

// Pause pauses (or unpauses) a handler (emergencyPause / emergencyUnpause).
func (p *Protocol) Pause(handler common.Address, paused bool) {
	m := "emergencyUnpause"
	if paused {
		m = "emergencyPause"
	}
	p.Chain.MustSend(p.Owner, handler, HandlerV2.ABI, m)
}

// DeployHandler deploys another handler V2, whitelisted on the position
// manager (for LP deposits) with the position manager as its app, but not
// paired with any market: call WhitelistApp for that.
func (p *Protocol) DeployHandler() common.Address {
	h := p.Chain.Deploy(HandlerV2, p.Factory, p.Router)
	p.register(h, HandlerV2.ABI)
	p.Chain.MustSend(p.Owner, p.PositionManager, PositionManager.ABI, "updateWhitelistHandler", h, true)
	p.Chain.MustSend(p.Owner, h, HandlerV2.ABI, "updateWhitelistedApps", p.PositionManager, true)
	return h
}

// UnuseDirect calls positionManager.unusePosition from app (which must be
// whitelisted with the handler, see WhitelistApp, and pays at the current
// price): liquidity re-added without an option, the way to reach the
// handler's branch where the re-minted L exceeds liquidityUsed.
func (p *Protocol) UnuseDirect(app *Account, r Range, liquidity *big.Int) (*types.Receipt, error) {
	r = p.norm(r)
	data, err := args(tAddress, tAddress, tInt24, tInt24, tUint256, tBytes).Pack(r.Pool, r.Hook, bi(r.TickLower), bi(r.TickUpper), liquidity, []byte{})
	if err != nil {
		panic(err)
	}
	return p.Chain.Send(app, p.PositionManager, PositionManager.ABI, "unusePosition", r.Handler, data)
}

// DonateDirect calls positionManager.donateToPosition from app (whitelisted
// with the handler), as the market does with premiums.
func (p *Protocol) DonateDirect(app *Account, r Range, liquidity *big.Int) (*types.Receipt, error) {
	r = p.norm(r)
	return p.Chain.Send(app, p.PositionManager, PositionManager.ABI, "donateToPosition", r.Handler, positionData(r, liquidity))
}

// Leg is one range an option uses.
type Leg struct {
	Range
	Liquidity *big.Int
}

// Option is what mintOption buys. TickLower/TickUpper are the option's
// strike ticks: a call's tickUpper and a put's tickLower must equal each
// leg's. MaxCost nil means no limit.
type Option struct {
	IsCall               bool
	TickLower, TickUpper int
	TTL                  uint64 // seconds
	Legs                 []Leg
	MaxCost              *big.Int
}

type optionTicks struct {
	Handler        common.Address
	Pool           common.Address
	Hook           common.Address
	TickLower      *big.Int
	TickUpper      *big.Int
	LiquidityToUse *big.Int
}

// Buy mints an option for buyer (mintOption) and returns its id.
func (p *Protocol) Buy(buyer *Account, o Option) (*big.Int, *types.Receipt, error) {
	ticks := make([]optionTicks, len(o.Legs))
	for i, l := range o.Legs {
		r := p.norm(l.Range)
		ticks[i] = optionTicks{r.Handler, r.Pool, r.Hook, bi(r.TickLower), bi(r.TickUpper), l.Liquidity}
	}
	return mintOption(p, buyer, p.Market, MarketV2.ABI, ticks, o)
}

// mintOption sends mintOption(OptionParams) with the legs in the market's
// OptionTicks shape (V1 or V2) and returns the new id from LogMintOption.
func mintOption[T any](p *Protocol, buyer *Account, market common.Address, a abi.ABI, ticks []T, o Option) (*big.Int, *types.Receipt, error) {
	maxCost := o.MaxCost
	if maxCost == nil {
		maxCost = maxUint
	}
	params := struct {
		OptionTicks      []T
		TickLower        *big.Int
		TickUpper        *big.Int
		Ttl              *big.Int
		IsCall           bool
		MaxCostAllowance *big.Int
	}{ticks, bi(o.TickLower), bi(o.TickUpper), new(big.Int).SetUint64(o.TTL), o.IsCall, maxCost}
	rc, err := p.Chain.Send(buyer, market, a, "mintOption", params)
	if err != nil || rc == nil {
		return nil, rc, err
	}
	ev := p.Find(rc, "LogMintOption")
	if ev == nil {
		return nil, rc, fmt.Errorf("no LogMintOption in the mint's receipt")
	}
	return ev.Args["tokenId"].(*big.Int), rc, nil
}

// ExerciseLeg is one leg's part of exerciseOption: its swapper, swapData
// and the liquidity to exercise (zero skips the leg).
type ExerciseLeg struct {
	Swapper   common.Address
	SwapData  []byte
	Liquidity *big.Int
}

// ExerciseParams is the market's ExerciseOptionParams tuple.
type ExerciseParams struct {
	OptionId            *big.Int
	Swapper             []common.Address
	SwapData            [][]byte
	LiquidityToExercise []*big.Int
}

// ExerciseArgs builds the ExerciseOptionParams tuple.
func ExerciseArgs(id *big.Int, legs []ExerciseLeg) ExerciseParams {
	ep := ExerciseParams{OptionId: id}
	for _, l := range legs {
		ep.Swapper = append(ep.Swapper, l.Swapper)
		ep.SwapData = append(ep.SwapData, l.SwapData)
		ep.LiquidityToExercise = append(ep.LiquidityToExercise, l.Liquidity)
	}
	return ep
}

// Exercise calls exerciseOption from sender (the owner or a delegate).
func (p *Protocol) Exercise(sender *Account, id *big.Int, legs []ExerciseLeg) (*types.Receipt, error) {
	return p.Chain.Send(sender, p.Market, MarketV2.ABI, "exerciseOption", ExerciseArgs(id, legs))
}

// AutoExerciseOption has the owner-approved AutoExerciseTimeBased exercise
// id keeping executorFee/1e6 of the profit for feeTo. The executor is the
// deployer: the first call grants it the role by grantRole, as the
// deployments' broadcasts grant a keeper key after creating the contract
// (granted here rather than by Deploy, which would move the address of
// every contract a test deploys later).
func (p *Protocol) AutoExerciseOption(id *big.Int, executorFee *big.Int, legs []ExerciseLeg) (*types.Receipt, error) {
	p.GrantExecutor()
	return p.Chain.Send(p.Owner, p.AutoExercise, AutoExercise.ABI, "autoExercise", p.Market, id, executorFee, ExerciseArgs(id, legs))
}

// GrantExecutor grants the deployer AutoExerciseTimeBased's executor role
// unless it holds it already.
func (p *Protocol) GrantExecutor() {
	if !p.Chain.Call(p.AutoExercise, AutoExercise.ABI, "hasRole", ExecutorRole, p.Owner.Addr)[0].(bool) {
		p.Chain.MustSend(p.Owner, p.AutoExercise, AutoExercise.ABI, "grantRole", ExecutorRole, p.Owner.Addr)
	}
}

// UniV3SwapData is SwapRouterSwapper's swapData: abi.encode(uint24 fee, uint256 amountOutMinimum).
func UniV3SwapData(fee uint32, minOut *big.Int) []byte {
	b, err := args(tUint24, tUint256).Pack(big.NewInt(int64(fee)), minOut)
	if err != nil {
		panic(err)
	}
	return b
}

// SwapDescription is AggregationRouterV5's SwapDescription.
type SwapDescription struct {
	SrcToken        common.Address
	DstToken        common.Address
	SrcReceiver     common.Address
	DstReceiver     common.Address
	Amount          *big.Int
	MinReturnAmount *big.Int
	Flags           *big.Int
}

// OneInchSwapData is router calldata for the fake AggregationRouterV5, as
// the 1inch API returns it for OneInchSwapper: swap(executor, desc, permit,
// data) delivering to dstReceiver (the market) at least minReturn, routed
// through the Uniswap pool of the given fee tier.
func OneInchSwapData(tokenIn, tokenOut common.Address, amount, minReturn *big.Int, dstReceiver common.Address, fee uint32) []byte {
	data, err := args(tUint24).Pack(big.NewInt(int64(fee)))
	if err != nil {
		panic(err)
	}
	desc := SwapDescription{tokenIn, tokenOut, common.Address{}, dstReceiver, amount, minReturn, new(big.Int)}
	b, err := OneInchRouter.ABI.Pack("swap", common.Address{}, desc, []byte{}, data)
	if err != nil {
		panic(err)
	}
	return b
}

// Split moves liquidity of each leg of id into a new option owned by to
// (positionSplitter) and returns the new id.
func (p *Protocol) Split(owner *Account, id *big.Int, to common.Address, liquidity []*big.Int) (*big.Int, *types.Receipt, error) {
	params := struct {
		OptionId         *big.Int
		To               common.Address
		LiquidityToSplit []*big.Int
	}{id, to, liquidity}
	rc, err := p.Chain.Send(owner, p.Market, MarketV2.ABI, "positionSplitter", params)
	if err != nil || rc == nil {
		return nil, rc, err
	}
	return p.Find(rc, "LogSplitOption").Args["newTokenId"].(*big.Int), rc, nil
}

// Transfer moves option id from owner to `to` (ERC721 transferFrom).
func (p *Protocol) Transfer(owner *Account, to common.Address, id *big.Int) (*types.Receipt, error) {
	return p.Chain.Send(owner, p.Market, MarketV2.ABI, "transferFrom", owner.Addr, to, id)
}

// Delegate sets exerciseDelegator[owner][delegate] (updateExerciseDelegate).
func (p *Protocol) Delegate(owner *Account, delegate common.Address, status bool) (*types.Receipt, error) {
	return p.Chain.Send(owner, p.Market, MarketV2.ABI, "updateExerciseDelegate", delegate, status)
}

// SetProtocolFee sets feeTo and the fee in millionths of the premium.
func (p *Protocol) SetProtocolFee(feeTo common.Address, feePercentage int64) {
	p.Chain.MustSend(p.Owner, p.Market, MarketV2.ABI, "updateFees", feeTo, big.NewInt(feePercentage))
}

// Swap swaps amountIn of tokenIn for the other asset through the SwapRouter
// in the pool of the given fee tier, moving its price.
func (p *Protocol) Swap(from *Account, tokenIn common.Address, amountIn *big.Int, fee uint32) (*types.Receipt, error) {
	params := ExactInputSingleParams{tokenIn, p.other(tokenIn), big.NewInt(int64(fee)), from.Addr, big.NewInt(1 << 40), amountIn, new(big.Int), new(big.Int)}
	return p.Chain.Send(from, p.Router, mustUni(p.Chain.T, "router").ABI, "exactInputSingle", params)
}

// ExactInputSingleParams is SwapRouter.exactInputSingle's argument.
type ExactInputSingleParams struct {
	TokenIn           common.Address
	TokenOut          common.Address
	Fee               *big.Int
	Recipient         common.Address
	Deadline          *big.Int
	AmountIn          *big.Int
	AmountOutMinimum  *big.Int
	SqrtPriceLimitX96 *big.Int
}

func (p *Protocol) other(token common.Address) common.Address {
	if token == p.CallAsset {
		return p.PutAsset
	}
	return p.CallAsset
}

// SwapToTick trades through the pool of the given fee tier until its price
// reaches the sqrt price of tick (from either side), spending whatever it
// takes from `from`.
func (p *Protocol) SwapToTick(from *Account, fee uint32, tick int) (*types.Receipt, error) {
	pool := p.Pool
	if fee != p.Fee {
		pool = p.Chain.Call(p.Factory, mustUni(p.Chain.T, "factory").ABI, "getPool", p.Token0, p.Token1, big.NewInt(int64(fee)))[0].(common.Address)
	}
	cur, _ := p.Slot0(pool)
	target, err := clamm.SqrtRatioAtTick(tick)
	if err != nil {
		p.Chain.T.Fatal(err)
	}
	tokenIn := p.Token1 // price up: token1 in
	if target.Cmp(cur) < 0 {
		tokenIn = p.Token0
	}
	amount := new(big.Int).Div(p.Balance(tokenIn, from.Addr), big.NewInt(2))
	params := ExactInputSingleParams{tokenIn, p.other(tokenIn), big.NewInt(int64(fee)), from.Addr, big.NewInt(1 << 40), amount, new(big.Int), target}
	return p.Chain.Send(from, p.Router, mustUni(p.Chain.T, "router").ABI, "exactInputSingle", params)
}

// SwapExactOut buys exactly amountOut of tokenOut through the pool of the
// given fee tier (SwapRouter.exactOutputSingle).
func (p *Protocol) SwapExactOut(from *Account, tokenOut common.Address, amountOut *big.Int, fee uint32) (*types.Receipt, error) {
	params := struct {
		TokenIn           common.Address
		TokenOut          common.Address
		Fee               *big.Int
		Recipient         common.Address
		Deadline          *big.Int
		AmountOut         *big.Int
		AmountInMaximum   *big.Int
		SqrtPriceLimitX96 *big.Int
	}{p.other(tokenOut), tokenOut, big.NewInt(int64(fee)), from.Addr, big.NewInt(1 << 40), amountOut, maxUint, new(big.Int)}
	return p.Chain.Send(from, p.Router, mustUni(p.Chain.T, "router").ABI, "exactOutputSingle", params)
}

// Quote is QuoterV2.quoteExactInputSingle at the latest state: the output
// and the pool's sqrt price after the swap.
func (p *Protocol) Quote(tokenIn common.Address, amountIn *big.Int, fee uint32) (amountOut, sqrtPriceAfter *big.Int) {
	params := struct {
		TokenIn           common.Address
		TokenOut          common.Address
		AmountIn          *big.Int
		Fee               *big.Int
		SqrtPriceLimitX96 *big.Int
	}{tokenIn, p.other(tokenIn), amountIn, big.NewInt(int64(fee)), new(big.Int)}
	v := p.Chain.Call(p.Quoter, mustUni(p.Chain.T, "quoter").ABI, "quoteExactInputSingle", params)
	return v[0].(*big.Int), v[1].(*big.Int)
}

// settleArgs is the market's SettleOptionParams tuple.
func settleArgs(id *big.Int, legs []ExerciseLeg) any {
	ep := ExerciseArgs(id, legs)
	return struct {
		OptionId          *big.Int
		Swapper           []common.Address
		SwapData          [][]byte
		LiquidityToSettle []*big.Int
	}{ep.OptionId, ep.Swapper, ep.SwapData, ep.LiquidityToExercise}
}

// OpenSettle settles an expired option through the open settlement
// contract (DeployOpenSettlement first), sent by caller, who receives what
// the settlement paid.
func (p *Protocol) OpenSettle(caller *Account, id *big.Int, legs []ExerciseLeg) (*types.Receipt, error) {
	return p.Chain.Send(caller, p.OpenSettlement, OpenSettlement.ABI, "openSettle", p.Market, id, settleArgs(id, legs))
}

// Settle settles an expired option from settler (made a settler first):
// settleOption with one swapper/swapData per leg (used only by legs whose
// range the price has crossed).
func (p *Protocol) Settle(settler *Account, id *big.Int, legs []ExerciseLeg) (*types.Receipt, error) {
	p.MakeSettler(settler.Addr, true)
	return p.Chain.Send(settler, p.Market, MarketV2.ABI, "settleOption", settleArgs(id, legs))
}
