package contracts

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
)

// slot0Answer packs a slot0 answer with the outputs of signature, the
// pool's own interface: the words the pool returns.
func slot0Answer(t *testing.T, signature string, vals ...any) []byte {
	t.Helper()
	var outs abi.Arguments
	for _, typ := range strings.Split(signature, ",") {
		ty, err := abi.NewType(typ, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, abi.Argument{Type: ty})
	}
	raw, err := outs.Pack(vals...)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Each family's slot0, as its pools answer it, decodes through its own
// layout to the price and tick it carries; the layouts that describe
// another shape refuse it rather than read it; Slot0Leading reads the
// leading two words of any.
func TestDecodeSlot0EachLayout(t *testing.T) {
	t.Parallel()
	sqrt, _ := new(big.Int).SetString("1461446703485210103287273052203988822378723970341", 10) // near MAX_SQRT_RATIO
	tick := big.NewInt(-887000)
	u16 := func(v uint16) uint16 { return v }
	answers := map[Slot0Layout][]byte{
		// IUniswapV3PoolState (Uniswap, Sushi, Butter, Thruster, Equalizer V3)
		Slot0UniswapV3: slot0Answer(t, "uint160,int24,uint16,uint16,uint16,uint8,bool", sqrt, tick, u16(7), u16(100), u16(120), uint8(0x44), true),
		// IPancakeV3PoolState: feeProtocol two 16-bit fractions (here 3300 each) in a uint32
		Slot0PancakeV3: slot0Answer(t, "uint160,int24,uint16,uint16,uint16,uint32,bool", sqrt, tick, u16(7), u16(100), u16(120), uint32(3300<<16|3300), true),
		// Aerodrome Slipstream ICLPoolState: no feeProtocol
		Slot0AerodromeCL: slot0Answer(t, "uint160,int24,uint16,uint16,uint16,bool", sqrt, tick, u16(7), u16(100), u16(120), true),
	}
	for layout, raw := range answers {
		gotSqrt, gotTick, err := DecodeSlot0(layout, raw)
		if err != nil || gotSqrt.Cmp(sqrt) != 0 || gotTick != int(tick.Int64()) {
			t.Errorf("%s answer through its layout: %v %d %v", layout, gotSqrt, gotTick, err)
		}
		if s, tk, err := DecodeSlot0(Slot0Leading, raw); err != nil || s.Cmp(sqrt) != 0 || tk != int(tick.Int64()) {
			t.Errorf("%s answer through the leading words: %v %d %v", layout, s, tk, err)
		}
		for other := range answers {
			// the Uniswap and Pancake answers differ only in feeProtocol's
			// width: Pancake's layout takes a uint8 value as a uint32 one
			if other == layout || (layout == Slot0UniswapV3 && other == Slot0PancakeV3) {
				continue
			}
			if _, _, err := DecodeSlot0(other, raw); err == nil {
				t.Errorf("the %s layout read a %s answer", other, layout)
			}
		}
	}
	if got := Slot0Layouts(); len(got) != 3 || got[0] != Slot0AerodromeCL || got[1] != Slot0PancakeV3 || got[2] != Slot0UniswapV3 {
		t.Errorf("layouts %v", got)
	}
	if Slot0Leading.Known() || !Slot0AerodromeCL.Known() || Slot0Layout("algebra").Known() {
		t.Error("Known")
	}
}

// A named layout checks every word: an unlocked that is no bool, a word
// past the layout, a tick beyond TickMath's range are errors.
func TestDecodeSlot0RefusesMalformedAnswers(t *testing.T) {
	t.Parallel()
	good := slot0Answer(t, "uint160,int24,uint16,uint16,uint16,bool", big.NewInt(1<<40), big.NewInt(5), uint16(1), uint16(1), uint16(1), true)
	notBool := append([]byte{}, good...)
	notBool[len(notBool)-1] = 2
	long := append(append([]byte{}, good...), make([]byte, 32)...)
	farTick := slot0Answer(t, "uint160,int24,uint16,uint16,uint16,bool", big.NewInt(1<<40), big.NewInt(887273), uint16(1), uint16(1), uint16(1), true)
	dirtyTick := append([]byte{}, good...)
	dirtyTick[32] = 1 // an int24 word whose high bytes are not its sign extension
	for name, raw := range map[string][]byte{"unlocked 2": notBool, "seven words": long, "tick 887273": farTick, "dirty int24": dirtyTick} {
		if _, _, err := DecodeSlot0(Slot0AerodromeCL, raw); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, _, err := DecodeSlot0("algebra", good); err == nil {
		t.Error("an unknown layout decoded")
	}
}
