package contracts

import (
	"bytes"
	_ "embed"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// PositionManagerLP is what a liquidity provider sends to
// DopexV2PositionManager (and its V2, which has the same four): mint and
// burn handler shares, several in one multicall (OpenZeppelin Multicall:
// delegatecalls into itself, msg.sender kept), and the handler whitelist
// both check first.
var PositionManagerLP = mustABI(`[
 {"type":"function","name":"mintPosition","stateMutability":"nonpayable","inputs":[{"name":"_handler","type":"address"},{"name":"_mintPositionData","type":"bytes"}],"outputs":[{"name":"sharesMinted","type":"uint256"}]},
 {"type":"function","name":"burnPosition","stateMutability":"nonpayable","inputs":[{"name":"_handler","type":"address"},{"name":"_burnPositionData","type":"bytes"}],"outputs":[{"name":"sharesBurned","type":"uint256"}]},
 {"type":"function","name":"multicall","stateMutability":"nonpayable","inputs":[{"name":"data","type":"bytes[]"}],"outputs":[{"name":"results","type":"bytes[]"}]},
 {"type":"function","name":"whitelistedHandlers","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]}
]`)

// HandlerLP is the liquidity provider's side of a single-tick handler (V1
// and V2 share the getters; reserveLiquidity, withdrawReserveLiquidity,
// reservedLiquidityPerUser and reserveCooldown are V2's, called by the
// provider directly: the handler uses msg.sender).
var HandlerLP = mustABI(`[
 {"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"owner","type":"address"},{"name":"id","type":"uint256"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"convertToAssets","stateMutability":"view","inputs":[{"name":"shares","type":"uint128"},{"name":"tokenId","type":"uint256"}],"outputs":[{"name":"","type":"uint128"}]},
 {"type":"function","name":"convertToShares","stateMutability":"view","inputs":[{"name":"assets","type":"uint128"},{"name":"tokenId","type":"uint256"}],"outputs":[{"name":"","type":"uint128"}]},
 {"type":"function","name":"whitelistedApps","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"reserveCooldown","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint64"}]},
 {"type":"function","name":"reservedLiquidityPerUser","stateMutability":"view","inputs":[{"name":"","type":"uint256"},{"name":"","type":"address"}],"outputs":[{"name":"liquidity","type":"uint128"},{"name":"lastReserve","type":"uint64"}]},
 {"type":"function","name":"tokensToPullForMint","stateMutability":"view","inputs":[{"name":"_mintPositionData","type":"bytes"}],"outputs":[{"name":"","type":"address[]"},{"name":"","type":"uint256[]"}]},
 {"type":"function","name":"reserveLiquidity","stateMutability":"nonpayable","inputs":[{"name":"_reserveLiquidityParam","type":"bytes"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"withdrawReserveLiquidity","stateMutability":"nonpayable","inputs":[{"name":"_reserveLiquidityParam","type":"bytes"}],"outputs":[]}
]`)

// MarketPools is the option market's approvedPools(pool): mintOption
// refuses a leg on a pool it has not approved.
var MarketPools = mustABI(`[
 {"type":"function","name":"approvedPools","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]}
]`)

// ERC20Account is an ERC20's balance and allowance getters.
var ERC20Account = mustABI(`[
 {"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"allowance","stateMutability":"view","inputs":[{"name":"","type":"address"},{"name":"","type":"address"}],"outputs":[{"name":"","type":"uint256"}]}
]`)

// LPErrors are the custom errors a liquidity provider's transaction can
// revert with (position managers V1 and V2, handlers V1 and V2), for
// naming a simulated revert.
var LPErrors = mustABI(`[
 {"type":"error","name":"DopexV2PositionManager__NotWhitelistedApp","inputs":[]},
 {"type":"error","name":"DopexV2PositionManager__NotWhitelistedHandler","inputs":[]},
 {"type":"error","name":"DopexV2PositionManagerV2__NotWhitelistedApp","inputs":[]},
 {"type":"error","name":"DopexV2PositionManagerV2__NotWhitelistedHandler","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandler__NotWhitelisted","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandler__InRangeLP","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__NotWhitelisted","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__InRangeLP","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__InsufficientLiquidity","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__BeforeReserveCooldown","inputs":[]}
]`)

// ActionProbe is sol/ActionProbe.sol as compiled by the pinned solc: run as
// the code of the signer's own address (eth_call state override), it sends
// a sequence of transactions' calls as the signer and returns what each
// moved.
var ActionProbe = mustArtifact(actionProbeJSON)

//go:embed sol/ActionProbe.json
var actionProbeJSON []byte

// ProbeStep is one transaction of a probed sequence: its call, and the
// call (to the share token) whose first word is asked just before it
// (nil: none).
type ProbeStep struct {
	Target common.Address
	Data   []byte
	Quote  []byte
}

// ProbeCode is the code to place at the signer's address to run steps
// one after another and measure, around each, the signer's balances of
// tokens and its ERC-6909 balance of shareID on shareToken (zero: none).
func ProbeCode(steps []ProbeStep, tokens []common.Address, shareToken common.Address, shareID *big.Int) ([]byte, error) {
	if shareID == nil {
		shareID = new(big.Int)
	}
	in := make([]probeStep, len(steps))
	for i, s := range steps {
		in[i] = probeStep{Target: s.Target, Data: s.Data, Quote: s.Quote}
		if in[i].Data == nil {
			in[i].Data = []byte{}
		}
		if in[i].Quote == nil {
			in[i].Quote = []byte{}
		}
	}
	args, err := ActionProbe.ABI.Pack("", in, tokens, shareToken, shareID)
	if err != nil {
		return nil, fmt.Errorf("pack ActionProbe: %w", err)
	}
	return append(bytes.Clone(ActionProbe.Bytecode), args...), nil
}

// probeStep is ActionProbe.Step as go-ethereum packs a tuple.
type probeStep struct {
	Target common.Address
	Data   []byte
	Quote  []byte
}

// ProbeOutcome is what ActionProbe returned for one step: whether the
// call succeeded, its return (or revert) data, the signer's balance
// changes, and the quote's word asked before it.
type ProbeOutcome struct {
	OK          bool
	Return      []byte
	TokenDeltas []*big.Int
	ShareDelta  *big.Int
	Quoted      *big.Int
}

var probeOutputs = mustABI(`[{"type":"function","name":"outcomes","inputs":[],"outputs":[{"name":"","type":"tuple[]","components":[
 {"name":"ok","type":"bool"},{"name":"ret","type":"bytes"},{"name":"tokenDeltas","type":"int256[]"},{"name":"shareDelta","type":"int256"},{"name":"quoted","type":"uint256"}]}]}]`)

// UnpackProbe decodes what ActionProbe returned: one outcome per step.
func UnpackProbe(out []byte) ([]ProbeOutcome, error) {
	var raw []struct {
		Ok          bool
		Ret         []byte
		TokenDeltas []*big.Int
		ShareDelta  *big.Int
		Quoted      *big.Int
	}
	if err := probeOutputs.UnpackIntoInterface(&raw, "outcomes", out); err != nil {
		return nil, err
	}
	res := make([]ProbeOutcome, len(raw))
	for i, o := range raw {
		res[i] = ProbeOutcome{OK: o.Ok, Return: o.Ret, TokenDeltas: o.TokenDeltas, ShareDelta: o.ShareDelta, Quoted: o.Quoted}
	}
	return res, nil
}

// ProbeRun is what a probe's code asks: its steps, the tokens it
// measures and the share it follows.
type ProbeRun struct {
	Steps      []ProbeStep
	Tokens     []common.Address
	ShareToken common.Address
	ShareID    *big.Int
}

// UnpackProbeCode decodes code ProbeCode made (false for other code): for
// a fake node that answers the probe without an EVM.
func UnpackProbeCode(code []byte) (ProbeRun, bool) {
	if !bytes.HasPrefix(code, ActionProbe.Bytecode) {
		return ProbeRun{}, false
	}
	vals, err := ActionProbe.ABI.Constructor.Inputs.Unpack(code[len(ActionProbe.Bytecode):])
	if err != nil {
		return ProbeRun{}, false
	}
	raw := vals[0].([]struct {
		Target common.Address `json:"target"`
		Data   []byte         `json:"data"`
		Quote  []byte         `json:"quote"`
	})
	run := ProbeRun{Tokens: vals[1].([]common.Address), ShareToken: vals[2].(common.Address), ShareID: vals[3].(*big.Int)}
	for _, r := range raw {
		run.Steps = append(run.Steps, ProbeStep{Target: r.Target, Data: r.Data, Quote: r.Quote})
	}
	return run, true
}

// PackProbe encodes outcomes as ActionProbe returns them.
func PackProbe(outs []ProbeOutcome) ([]byte, error) {
	type outcome struct {
		Ok          bool
		Ret         []byte
		TokenDeltas []*big.Int
		ShareDelta  *big.Int
		Quoted      *big.Int
	}
	in := make([]outcome, len(outs))
	for i, o := range outs {
		in[i] = outcome{Ok: o.OK, Ret: o.Return, TokenDeltas: o.TokenDeltas, ShareDelta: o.ShareDelta, Quoted: o.Quoted}
		if in[i].Ret == nil {
			in[i].Ret = []byte{}
		}
		for _, x := range []**big.Int{&in[i].ShareDelta, &in[i].Quoted} {
			if *x == nil {
				*x = new(big.Int)
			}
		}
	}
	return probeOutputs.Methods["outcomes"].Outputs.Pack(in)
}

// Position names one range of a handler: V1 handlers' payloads and ids
// have no hook.
type Position struct {
	V1                   bool
	Handler, Pool, Hook  common.Address
	TickLower, TickUpper int
}

// Payload is the handler's position payload: V2's (pool, hook, tickLower,
// tickUpper, amount) or, for a V1 handler, (pool, tickLower, tickUpper,
// amount). amount is liquidity for a mint and a reserved withdrawal,
// shares for a burn and a reservation.
func (p Position) Payload(amount *big.Int) ([]byte, error) {
	// Pack would encode a larger amount mod 2^128: every LP transaction's
	// calldata passes through here, so the range is checked here
	if amount == nil || amount.Sign() < 0 || amount.BitLen() > 128 {
		return nil, &RangeError{Arg: "amount", Type: "uint128", Value: amount}
	}
	lo, hi := big.NewInt(int64(p.TickLower)), big.NewInt(int64(p.TickUpper))
	if p.V1 {
		return mustArgs("address", "int24", "int24", "uint128").Pack(p.Pool, lo, hi, amount)
	}
	return mustArgs("address", "address", "int24", "int24", "uint128").Pack(p.Pool, p.Hook, lo, hi, amount)
}

// TokenID is the handler's id of the range: keccak256(abi.encode(handler,
// pool, hook, tickLower, tickUpper)), without the hook for a V1 handler.
func (p Position) TokenID() *big.Int {
	lo, hi := big.NewInt(int64(p.TickLower)), big.NewInt(int64(p.TickUpper))
	var enc []byte
	if p.V1 {
		enc, _ = mustArgs("address", "address", "int24", "int24").Pack(p.Handler, p.Pool, lo, hi)
	} else {
		enc, _ = mustArgs("address", "address", "address", "int24", "int24").Pack(p.Handler, p.Pool, p.Hook, lo, hi)
	}
	return new(big.Int).SetBytes(crypto.Keccak256(enc))
}

// MintCall is the position manager's mintPosition(handler, payload) of
// liquidity in the range.
func (p Position) MintCall(liquidity *big.Int) ([]byte, error) {
	payload, err := p.Payload(liquidity)
	if err != nil {
		return nil, err
	}
	return PositionManagerLP.Pack("mintPosition", p.Handler, payload)
}

// BurnCall is the position manager's burnPosition(handler, payload) of
// shares of the range.
func (p Position) BurnCall(shares *big.Int) ([]byte, error) {
	payload, err := p.Payload(shares)
	if err != nil {
		return nil, err
	}
	return PositionManagerLP.Pack("burnPosition", p.Handler, payload)
}

// ReserveCall is the handler's reserveLiquidity(payload) of shares (sent
// to the handler: it reserves for msg.sender).
func (p Position) ReserveCall(shares *big.Int) ([]byte, error) {
	payload, err := p.Payload(shares)
	if err != nil {
		return nil, err
	}
	return HandlerLP.Pack("reserveLiquidity", payload)
}

// WithdrawReservedCall is the handler's withdrawReserveLiquidity(payload)
// of reserved liquidity.
func (p Position) WithdrawReservedCall(liquidity *big.Int) ([]byte, error) {
	payload, err := p.Payload(liquidity)
	if err != nil {
		return nil, err
	}
	return HandlerLP.Pack("withdrawReserveLiquidity", payload)
}

// ConvertToAssetsCall is the handler's convertToAssets(shares, tokenId).
func ConvertToAssetsCall(shares, tokenID *big.Int) ([]byte, error) {
	return HandlerLP.Pack("convertToAssets", shares, tokenID)
}

// TokensToPullCall is the handler's tokensToPullForMint(payload).
func TokensToPullCall(payload []byte) ([]byte, error) {
	return HandlerLP.Pack("tokensToPullForMint", payload)
}

// UnpackTokensToPull decodes tokensToPullForMint's answer: the amounts of
// the pool's token0 and token1 (the handlers answer both, in that order).
func UnpackTokensToPull(ret []byte) ([2]*big.Int, error) {
	vals, err := HandlerLP.Unpack("tokensToPullForMint", ret)
	if err != nil {
		return [2]*big.Int{}, err
	}
	amts := vals[1].([]*big.Int)
	if len(amts) != 2 {
		return [2]*big.Int{}, fmt.Errorf("tokensToPullForMint answered %d amounts", len(amts))
	}
	return [2]*big.Int{amts[0], amts[1]}, nil
}

// MulticallCall is the position manager's multicall(calls).
func MulticallCall(calls [][]byte) ([]byte, error) {
	return PositionManagerLP.Pack("multicall", calls)
}

// MintedShares decodes a multicall of mintPosition calls' answer: the
// shares each call minted.
func MintedShares(ret []byte) ([]*big.Int, error) {
	vals, err := PositionManagerLP.Unpack("multicall", ret)
	if err != nil {
		return nil, err
	}
	results := vals[0].([][]byte)
	out := make([]*big.Int, len(results))
	for i, r := range results {
		v, err := PositionManagerLP.Methods["mintPosition"].Outputs.Unpack(r)
		if err != nil {
			return nil, fmt.Errorf("mintPosition %d answered %d bytes: %w", i, len(r), err)
		}
		out[i] = v[0].(*big.Int)
	}
	return out, nil
}

// LPMethod names a liquidity provider's prepared call by its selector:
// burnPosition, reserveLiquidity, withdrawReserveLiquidity, mintPosition,
// multicall, or "the transaction".
func LPMethod(data []byte) string {
	if len(data) < 4 {
		return "the transaction"
	}
	for _, a := range []abi.ABI{PositionManagerLP, HandlerLP} {
		if m, err := a.MethodById(data[:4]); err == nil {
			return m.Name
		}
	}
	return "the transaction"
}
