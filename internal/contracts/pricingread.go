package contracts

import (
	"bytes"
	_ "embed"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// PricingRead is sol/PricingRead.sol as compiled by the pinned solc: its
// creation code reads, at one block, what an option market would charge
// for each ask (the market's and its pricing contract's own functions) and
// the buyer's balances and allowances. Never deployed: PricingReadCode is
// sent as an eth_call without `to`, from the buyer (tx.origin matters to
// OptionPricingLinearV2_1's discount).
var PricingRead = mustArtifact(pricingReadJSON)

//go:embed sol/PricingRead.json
var pricingReadJSON []byte

// PricingAsk is one question: the option side, its strike tick (a call's
// upper tick, a put's lower tick), its ttl in seconds and the collateral
// total its legs would withdraw (0: price per call-asset unit only).
type PricingAsk struct {
	IsPut      bool
	StrikeTick *big.Int
	Ttl        *big.Int
	Total      *big.Int
}

// PricingHead is what the read learnt once: the block, the prime pool and
// its price per call asset (put-asset base units), the pricing contract
// (zero: the market has no optionPricing()), the put asset's decimals, the
// assets, the user's allowance to the market and balance of the call
// asset then the put asset, and where the market sends its protocol fee
// (feeTo(); FeeToRead false when the market does not answer it).
type PricingHead struct {
	BlockNumber *big.Int
	Timestamp   *big.Int
	Pool        common.Address
	LastPrice   *big.Int
	Pricing     common.Address
	PutDecimals *big.Int
	CallAsset   common.Address
	PutAsset    common.Address
	Account     [4]*big.Int
	FeeTo       common.Address
	FeeToRead   bool
}

// VolSource says which of the pricing contract's volatility functions
// gave an answer's Vol: the IV the option is priced at.
type VolSource uint8

const (
	// VolNone: neither answered; the priced IV is not known (Vol is 0).
	VolNone VolSource = iota
	// Vol4: getVolatility(strike, lastPrice, ttlToVol, ttl), as
	// OptionPricingLinearV2_1 has (skew per ttl, xSYK discount).
	Vol4
	// Vol3: getVolatility(strike, lastPrice, ttlToVol), as
	// OptionPricingLinearV2 has (one skew).
	Vol3
	// VolTable: ttlToVol(ttl) itself, for a pricing with no volatility
	// function that answers OptionPricingV2's volatilityCap():
	// OptionPricingV2's getOptionPrice prices at the ttl's table IV and
	// nothing else (clamm src/pricing/OptionPricingV2.sol).
	VolTable
)

// PricingAnswer is one ask's answer; each Ok flag says whether that call
// succeeded. PriceErr is getOptionPrice's revert data when it failed,
// PremiumErr getPremiumAmount's (both the read's one err field).
type PricingAnswer struct {
	Strike  *big.Int // put-asset base units per call asset
	VolOk   bool
	BaseVol *big.Int // ttlToVol(ttl), percent
	// VolFrom is the volatility function that answered Vol (VolNone: none did).
	VolFrom     VolSource
	Vol         *big.Int // the IV the strike is priced at, percent
	PriceOk     bool
	OptionPrice *big.Int // getOptionPrice: put-asset base units per call asset
	PriceErr    []byte
	PremiumOk   bool
	Premium     *big.Int // getPremiumAmount, base units of the collateral
	PremiumErr  []byte
	// FeeOk: the fee mintOption would charge is known: getFee(total,
	// premium) answered, or NoFee (the market's feeTo is zero, so it
	// charges none and getFee was not asked; Fee is 0).
	FeeOk bool
	NoFee bool
	Fee   *big.Int
}

// pricingAnswerABI is an answer as PricingRead encodes it (flags bit 0
// ttlToVol, 1 getVolatility of 4 arguments, 2 getOptionPrice, 3
// getPremiumAmount, 4 the fee known, 5 getVolatility of 3 arguments, 6 no
// fee charged, 7 OptionPricingV2: priced at ttlToVol).
type pricingAnswerABI struct {
	Strike, Flags, BaseVol, Vol, OptionPrice, Premium, Fee *big.Int
	Err                                                    []byte
}

func (a pricingAnswerABI) answer() PricingAnswer {
	f := a.Flags.Uint64()
	out := PricingAnswer{Strike: a.Strike, VolOk: f&1 != 0, BaseVol: a.BaseVol, Vol: a.Vol,
		PriceOk: f&4 != 0, OptionPrice: a.OptionPrice, PremiumOk: f&8 != 0, Premium: a.Premium, FeeOk: f&16 != 0, NoFee: f&64 != 0, Fee: a.Fee}
	switch {
	case f&2 != 0:
		out.VolFrom = Vol4
	case f&32 != 0:
		out.VolFrom = Vol3
	case f&128 != 0:
		out.VolFrom = VolTable
	}
	if !out.PriceOk {
		out.PriceErr = a.Err
	}
	if !out.PremiumOk {
		out.PremiumErr = a.Err
	}
	return out
}

func answerABI(a PricingAnswer) pricingAnswerABI {
	var f uint64
	for i, ok := range []bool{a.VolOk, a.VolFrom == Vol4, a.PriceOk, a.PremiumOk, a.FeeOk, a.VolFrom == Vol3, a.NoFee, a.VolFrom == VolTable} {
		if ok {
			f |= 1 << i
		}
	}
	err := a.PremiumErr
	if !a.PriceOk && len(err) == 0 {
		err = a.PriceErr
	}
	z := func(v *big.Int) *big.Int {
		if v == nil {
			return new(big.Int)
		}
		return v
	}
	return pricingAnswerABI{z(a.Strike), new(big.Int).SetUint64(f), z(a.BaseVol), z(a.Vol), z(a.OptionPrice), z(a.Premium), z(a.Fee), err}
}

var pricingReadOutputs = mustABI(`[{"type":"function","name":"read","inputs":[],"outputs":[
 {"name":"h","type":"tuple","components":[
  {"name":"blockNumber","type":"uint256"},{"name":"timestamp","type":"uint256"},{"name":"pool","type":"address"},
  {"name":"lastPrice","type":"uint256"},{"name":"pricing","type":"address"},{"name":"putDecimals","type":"uint256"},
  {"name":"callAsset","type":"address"},{"name":"putAsset","type":"address"},{"name":"account","type":"uint256[4]"},
  {"name":"feeTo","type":"address"},{"name":"feeToRead","type":"bool"}]},
 {"name":"out","type":"tuple[]","components":[
  {"name":"strike","type":"uint256"},{"name":"flags","type":"uint256"},{"name":"baseVol","type":"uint256"},
  {"name":"vol","type":"uint256"},{"name":"optionPrice","type":"uint256"},{"name":"premium","type":"uint256"},
  {"name":"fee","type":"uint256"},{"name":"err","type":"bytes"}]}]}]`)

// PricingReadMaxAsks is how many asks one PricingRead answers within the
// 24 KiB a constructor may return (EIP-170 applies to eth_call too): an
// answer is ten words plus its revert data, so 48 fit with an
// Error(string) of a hundred bytes in every one.
const PricingReadMaxAsks = 48

// PricingReadCode is the eth_call data that asks the market the asks.
func PricingReadCode(market, user common.Address, asks []PricingAsk) ([]byte, error) {
	args, err := PricingRead.ABI.Pack("", market, user, asks)
	if err != nil {
		return nil, fmt.Errorf("pack PricingRead: %w", err)
	}
	return append(bytes.Clone(PricingRead.Bytecode), args...), nil
}

// UnpackPricingRead decodes what the constructor returned.
func UnpackPricingRead(out []byte) (PricingHead, []PricingAnswer, error) {
	vals, err := pricingReadOutputs.Unpack("read", out)
	if err != nil {
		return PricingHead{}, nil, err
	}
	h := *abi.ConvertType(vals[0], new(PricingHead)).(*PricingHead)
	raw := *abi.ConvertType(vals[1], new([]pricingAnswerABI)).(*[]pricingAnswerABI)
	answers := make([]PricingAnswer, len(raw))
	for i, a := range raw {
		answers[i] = a.answer()
	}
	return h, answers, nil
}

// UnpackPricingReadCode recovers a PricingRead's arguments from its
// eth_call data, or reports that data is not one (for fakes).
func UnpackPricingReadCode(data []byte) (market, user common.Address, asks []PricingAsk, ok bool) {
	if !bytes.HasPrefix(data, PricingRead.Bytecode) {
		return market, user, nil, false
	}
	vals, err := PricingRead.ABI.Constructor.Inputs.Unpack(data[len(PricingRead.Bytecode):])
	if err != nil {
		return market, user, nil, false
	}
	asks = *abi.ConvertType(vals[2], new([]PricingAsk)).(*[]PricingAsk)
	return vals[0].(common.Address), vals[1].(common.Address), asks, true
}

// PackPricingReadOutput encodes a PricingRead's output (for fakes that
// answer it without an EVM).
func PackPricingReadOutput(h PricingHead, answers []PricingAnswer) ([]byte, error) {
	raw := make([]pricingAnswerABI, len(answers))
	for i, a := range answers {
		raw[i] = answerABI(a)
	}
	out, err := pricingReadOutputs.Methods["read"].Outputs.Pack(h, raw)
	if err != nil {
		return nil, err
	}
	return out, nil
}
