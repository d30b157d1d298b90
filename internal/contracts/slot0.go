package contracts

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/accounts/abi"
)

// Slot0Layout names the shape of slot0() in a family of Uniswap-V3-style
// pools. The families agree on the two leading outputs (sqrtPriceX96,
// tick) and differ after them, so a pool is read through the layout of the
// DEX of the handler that serves it (the configuration's), never through
// whichever decode happens to succeed.
type Slot0Layout string

const (
	// Slot0UniswapV3 is Uniswap V3's slot0, seven words ending in a uint8
	// feeProtocol and unlocked; Sushi V3, Butter, Thruster and Equalizer
	// V3 (per the interface stryke-xyz/clamm's Equalizer handler is
	// compiled against and tested on a Sonic fork with) share it.
	Slot0UniswapV3 Slot0Layout = "uniswap-v3"
	// Slot0PancakeV3 is PancakeSwap V3's: seven words, feeProtocol a
	// uint32 (two 16-bit fractions); Agni, FusionX, BulletX and Kodiak
	// share it.
	Slot0PancakeV3 Slot0Layout = "pancake-v3"
	// Slot0AerodromeCL is Aerodrome Slipstream's CLPool (Velodrome's
	// Slipstream): six words, no feeProtocol at all.
	Slot0AerodromeCL Slot0Layout = "aerodrome-cl"
	// Slot0Leading is the layout of a pool whose DEX the configuration does
	// not name: only the two leading words every family shares are read,
	// and the words after them are not checked.
	Slot0Leading Slot0Layout = ""
)

// slot0Outputs are each named layout's outputs, written from the pools'
// own interfaces.
var slot0Outputs = func() map[Slot0Layout]abi.Arguments {
	lead := `{"name":"sqrtPriceX96","type":"uint160"},{"name":"tick","type":"int24"},{"name":"observationIndex","type":"uint16"},` +
		`{"name":"observationCardinality","type":"uint16"},{"name":"observationCardinalityNext","type":"uint16"}`
	outputs := func(tail string) abi.Arguments {
		a := mustABI(`[{"type":"function","name":"slot0","stateMutability":"view","inputs":[],"outputs":[` + lead + tail + `]}]`)
		return a.Methods["slot0"].Outputs
	}
	return map[Slot0Layout]abi.Arguments{
		Slot0UniswapV3:   outputs(`,{"name":"feeProtocol","type":"uint8"},{"name":"unlocked","type":"bool"}`),
		Slot0PancakeV3:   outputs(`,{"name":"feeProtocol","type":"uint32"},{"name":"unlocked","type":"bool"}`),
		Slot0AerodromeCL: outputs(`,{"name":"unlocked","type":"bool"}`),
	}
}()

// Slot0Layouts are the named layouts, for configuration checks and docs.
func Slot0Layouts() []Slot0Layout {
	out := make([]Slot0Layout, 0, len(slot0Outputs))
	for l := range slot0Outputs {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// Known reports whether l is a named layout (Slot0Leading is not one).
func (l Slot0Layout) Known() bool {
	_, ok := slot0Outputs[l]
	return ok
}

// maxTick bounds a Uniswap-V3-style tick (TickMath.MAX_TICK).
const maxTick = 887272

// DecodeSlot0 reads sqrtPriceX96 and tick from a pool's slot0 answer
// through layout. A named layout takes exactly its words, each the
// canonical encoding of its type (an answer of another family's length, a
// uint8 above 255, a bool neither 0 nor 1 is an error, not a price);
// Slot0Leading takes the two leading words and checks only them.
func DecodeSlot0(layout Slot0Layout, raw []byte) (sqrtPriceX96 *big.Int, tick int, err error) {
	if layout == Slot0Leading {
		return decodeSlot0Leading(raw)
	}
	outs, ok := slot0Outputs[layout]
	if !ok {
		return nil, 0, fmt.Errorf("slot0: unknown layout %q", layout)
	}
	if len(raw) != 32*len(outs) {
		return nil, 0, fmt.Errorf("slot0: %d bytes, the %s layout has %d words", len(raw), layout, len(outs))
	}
	vals, err := outs.Unpack(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("slot0 (%s): %w", layout, err)
	}
	// go-ethereum reads an int24 or uint160 word whole: a value outside its
	// type packs back to the same bytes, so the width is checked here
	for i, v := range vals {
		if b, ok := v.(*big.Int); ok && !fits(b, outs[i].Type) {
			return nil, 0, fmt.Errorf("slot0: %s %s does not fit a %s", outs[i].Name, b, outs[i].Type)
		}
	}
	if again, err := outs.Pack(vals...); err != nil || !bytes.Equal(again, raw) {
		return nil, 0, fmt.Errorf("slot0: a word is not a canonical %s value", layout)
	}
	sqrt, t := vals[0].(*big.Int), vals[1].(*big.Int)
	if t.Int64() < -maxTick || t.Int64() > maxTick {
		return nil, 0, fmt.Errorf("slot0: tick %s out of range", t)
	}
	return sqrt, int(t.Int64()), nil
}

// fits reports whether v is within the range of the integer type typ.
func fits(v *big.Int, typ abi.Type) bool {
	if typ.T == abi.UintTy {
		return v.Sign() >= 0 && v.BitLen() <= typ.Size
	}
	bound := new(big.Int).Lsh(big.NewInt(1), uint(typ.Size-1))
	return v.Cmp(new(big.Int).Neg(bound)) >= 0 && v.Cmp(bound) < 0
}

// decodeSlot0Leading reads the first two words: sqrtPriceX96 (uint160) and
// tick (int24, two's complement in 256 bits).
func decodeSlot0Leading(raw []byte) (*big.Int, int, error) {
	if len(raw) < 64 {
		return nil, 0, fmt.Errorf("slot0: %d bytes", len(raw))
	}
	sqrt := new(big.Int).SetBytes(raw[:32])
	tick := new(big.Int).SetBytes(raw[32:64])
	if tick.Bit(255) == 1 {
		tick.Sub(tick, new(big.Int).Lsh(big.NewInt(1), 256))
	}
	if sqrt.BitLen() > 160 || !tick.IsInt64() || tick.Int64() < -maxTick || tick.Int64() > maxTick {
		return nil, 0, fmt.Errorf("slot0 out of range")
	}
	return sqrt, int(tick.Int64()), nil
}
