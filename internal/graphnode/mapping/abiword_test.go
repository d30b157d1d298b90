package mapping

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// refSignedLE is num-bigint's to_signed_bytes_le computed the slow way,
// independently of the host's: |x| in big-endian, 2^(8n)+x for a negative
// x in the fewest n bytes whose top bit is the sign, reversed.
func refSignedLE(x *big.Int) []byte {
	for n := 1; ; n++ {
		lim := new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)) // 2^(8n-1)
		if x.Cmp(lim) >= 0 || x.Cmp(new(big.Int).Neg(lim)) < 0 {
			continue
		}
		v := new(big.Int).Set(x)
		if v.Sign() < 0 {
			v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
		}
		be := v.FillBytes(make([]byte, n))
		le := make([]byte, n)
		for i := range be {
			le[i] = be[n-1-i]
		}
		return le
	}
}

// testNumbers are integers around every byte and word boundary, both
// signs, and random ones of every size up to 300 bits.
func testNumbers(r *rand.Rand) []*big.Int {
	var xs []*big.Int
	for bits := 0; bits <= 300; bits++ {
		p := new(big.Int).Lsh(big.NewInt(1), uint(bits))
		for _, d := range []int64{-1, 0, 1} {
			v := new(big.Int).Add(p, big.NewInt(d))
			xs = append(xs, v, new(big.Int).Neg(v))
		}
		buf := make([]byte, (bits+7)/8)
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		v := new(big.Int).SetBytes(buf)
		xs = append(xs, v, new(big.Int).Neg(v))
	}
	return xs
}

func TestSignedLEAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, x := range testNumbers(r) {
		want := refSignedLE(x)
		if got := signedLE(x); !bytes.Equal(got, want) {
			t.Fatalf("signedLE(%s) = %x, want %x", x, got, want)
		}
		if got := appendSignedLE([]byte{9, 9}, x); !bytes.Equal(got[2:], want) || got[0] != 9 || got[1] != 9 {
			t.Fatalf("appendSignedLE(9 9, %s) = %x", x, got)
		}
		if back := fromSignedLE(want); back.Cmp(x) != 0 {
			t.Fatalf("fromSignedLE(%x) = %s, want %s", want, back, x)
		}
		// redundant sign bytes (a mapping may hold them) read the same
		ext := byte(0)
		if x.Sign() < 0 {
			ext = 0xff
		}
		padded := append(append([]byte{}, want...), ext, ext, ext)
		z := big.NewInt(12345) // a scratch number with a value already
		if back := setSignedLE(z, padded); back.Cmp(x) != 0 || back != z {
			t.Fatalf("setSignedLE(%x) = %s, want %s", padded, back, x)
		}
		if x.IsUint64() {
			var buf [9]byte
			if got := uint64LE(&buf, x.Uint64()); !bytes.Equal(got, want) {
				t.Fatalf("uint64LE(%s) = %x, want %x", x, got, want)
			}
		}
	}
	if got := fromSignedLE(nil); got.Sign() != 0 {
		t.Errorf("fromSignedLE(empty) = %s", got)
	}
	long := bytes.Repeat([]byte{0xff}, 100) // -1 in 100 bytes: past setSignedLE's stack buffer
	if got := fromSignedLE(long); got.Int64() != -1 {
		t.Errorf("fromSignedLE(100 x ff) = %s", got)
	}
}

// wordTypes are every word type the subgraph's ABIs use and the sizes
// go-ethereum treats apart (checked 8..64, unchecked others).
var wordTypes = []string{"address", "bool", "uint8", "uint16", "uint24", "uint32", "uint64", "uint128", "uint160", "uint256",
	"int8", "int16", "int24", "int32", "int56", "int64", "int128", "int256"}

// testWords are words at each size's range limits (both sides), bools of
// every shape, and random words with hostile leading bytes.
func testWords(r *rand.Rand) [][]byte {
	var ws [][]byte
	word := func(x *big.Int) []byte { // 256-bit two's complement
		if x.Sign() < 0 {
			x = new(big.Int).Add(x, new(big.Int).Lsh(big.NewInt(1), 256))
		}
		return x.FillBytes(make([]byte, 32))
	}
	for bits := 1; bits <= 256; bits++ {
		p := new(big.Int).Lsh(big.NewInt(1), uint(bits))
		for _, d := range []int64{-2, -1, 0, 1} {
			v := new(big.Int).Add(p, big.NewInt(d))
			if v.BitLen() <= 256 {
				ws = append(ws, word(v))
			}
			if n := new(big.Int).Neg(v); n.BitLen() <= 255 || n.Cmp(new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 255))) == 0 {
				ws = append(ws, word(n))
			}
		}
	}
	for _, b := range []int{0, 1, 2, 0xff, 0x80} {
		w := make([]byte, 32)
		w[31] = byte(b)
		ws = append(ws, w)
		w2 := append([]byte{}, w...)
		w2[30] = 1
		ws = append(ws, w2)
	}
	for i := 0; i < 2000; i++ {
		w := make([]byte, 32)
		for j := range w {
			w[j] = byte(r.Uint32())
		}
		switch i % 4 { // most hostile words are near-valid: a few stray bytes
		case 1:
			clear(w[:31-r.IntN(31)])
		case 2:
			for j := 0; j < 31-r.IntN(31); j++ {
				w[j] = 0xff
			}
		case 3:
			clear(w)
			w[r.IntN(32)] = byte(r.Uint32())
		}
		ws = append(ws, w)
	}
	return ws
}

// The host's word reading accepts exactly the words go-ethereum's
// decoder accepts, and gives the bytes Graph Node holds for the value
// go-ethereum decodes (the integer's signedLE by the reference, the
// address's 20 bytes, a bool's 0 or 1).
func TestWordValueMatchesGoEthereum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := testWords(r)
	for _, ts := range wordTypes {
		typ, err := abi.NewType(ts, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		accepted, refused := 0, 0
		for _, w := range words {
			var buf [33]byte
			kind, payload, ok := wordValue(typ, w, &buf)
			vals, gerr := abi.Arguments{{Type: typ}}.Unpack(w)
			if ok != (gerr == nil) {
				t.Fatalf("%s %x: host accepts %t, go-ethereum says %v", ts, w, ok, gerr)
			}
			if !ok {
				refused++
				continue
			}
			accepted++
			var want []byte
			var wantKind uint32
			switch v := vals[0].(type) {
			case common.Address:
				want, wantKind = v[:], evAddress
			case bool:
				want, wantKind = []byte{0}, evBool
				if v {
					want[0] = 1
				}
			default:
				x, err := toBig(v)
				if err != nil {
					t.Fatal(err)
				}
				want, wantKind = refSignedLE(x), evUint
				if typ.T == abi.IntTy {
					wantKind = evInt
				}
			}
			if kind != wantKind || !bytes.Equal(payload, want) {
				t.Fatalf("%s %x: kind %d payload %x, want kind %d payload %x", ts, w, kind, payload, wantKind, want)
			}
		}
		if accepted == 0 || (refused == 0 && (typ.T == abi.BoolTy || strings.HasSuffix(ts, "int8"))) {
			t.Errorf("%s: %d words accepted, %d refused: the words do not test both sides", ts, accepted, refused)
		}
	}
	var buf [33]byte
	if _, _, ok := wordValue(abi.Type{T: abi.StringTy}, make([]byte, 32), &buf); ok {
		t.Error("a string read as a word")
	}
	if _, _, ok := wordValue(abi.Type{T: abi.UintTy, Size: 256}, make([]byte, 31), &buf); ok {
		t.Error("a short word read")
	}
}

// eventABI declares events of word types, indexed and not, and one with a
// type the host does not read itself.
const eventABI = `[
 {"type":"event","name":"Words","inputs":[
  {"name":"who","type":"address","indexed":true},{"name":"tick","type":"int24","indexed":true},
  {"name":"amount","type":"uint256"},{"name":"delta","type":"int256"},{"name":"small","type":"uint8"},
  {"name":"flag","type":"bool"},{"name":"to","type":"address"},{"name":"n","type":"int64","indexed":true}]},
 {"type":"event","name":"Named","inputs":[{"name":"id","type":"uint256","indexed":true},{"name":"name","type":"string"}]}
]`

// A log's parameters read by the host itself are written byte for byte
// as go-ethereum's decoding writes them (the same objects at the same
// places in the module's memory); a log go-ethereum refuses (short data,
// a bad bool, a uint8 out of range, a missing topic) fails with
// go-ethereum's error, and a type of another kind takes its path too.
func TestEventParamsAsGoEthereum(t *testing.T) {
	m := loadModule(t, "store", nil)
	h := m.h
	parsed, err := abi.JSON(strings.NewReader(eventABI))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	words := testWords(r)
	pick := func() common.Hash { return common.BytesToHash(words[r.IntN(len(words))]) }
	ctx := context.Background()
	// write runs one way of writing the parameters on a fresh instance
	// and returns the pointer, the error and the module's memory after.
	write := func(f func(abi.Event, types.Log) (uint32, error), ev abi.Event, lg types.Log) (uint32, string, []byte) {
		if err := h.ready(ctx); err != nil {
			t.Fatal(err)
		}
		var p uint32
		var msg string
		func() {
			defer func() {
				if r := recover(); r != nil {
					msg = fmt.Sprint("panic: ", r)
				}
			}()
			var err error
			if p, err = f(ev, lg); err != nil {
				msg = err.Error()
			}
		}()
		mem, _ := h.heap.mem.Read(0, h.heap.mem.Size())
		return p, msg, bytes.Clone(mem)
	}
	fast, failed := 0, 0
	for i := 0; i < 600; i++ {
		ev := parsed.Events["Words"]
		if i%10 == 9 {
			ev = parsed.Events["Named"]
		}
		lg := types.Log{Topics: []common.Hash{ev.ID}}
		for _, in := range ev.Inputs {
			if in.Indexed {
				lg.Topics = append(lg.Topics, pick())
			}
		}
		for j := 0; j < 5; j++ {
			lg.Data = append(lg.Data, pick().Bytes()...)
		}
		if ev.Name == "Named" && i%20 == 9 { // a well-formed string
			lg.Data = append(common.LeftPadBytes([]byte{32}, 32), append(common.LeftPadBytes([]byte{3}, 32), common.RightPadBytes([]byte("abc"), 32)...)...)
		}
		switch k := i % 7; {
		case k == 5 && ev.Name == "Words": // every word valid for its type
			clear(lg.Topics[3][:24])
			lg.Topics[3][24] &= 0x7f
			clear(lg.Data[64:95])
			clear(lg.Data[96:127])
			lg.Data[127] &= 1
		case k == 3:
			lg.Data = lg.Data[:r.IntN(len(lg.Data))]
		case k == 4:
			lg.Topics = lg.Topics[:r.IntN(len(lg.Topics))+1]
		}
		p1, err1, mem1 := write(h.eventParams, ev, lg)
		p2, err2, mem2 := write(h.eventParamsABI, ev, lg)
		if err1 != err2 {
			t.Fatalf("log %d: error %q, go-ethereum's path %q", i, err1, err2)
		}
		if p1 != p2 || !bytes.Equal(mem1, mem2) {
			t.Fatalf("log %d (%s): wrote %d and memory differing from go-ethereum's path (%d)", i, ev.Name, p1, p2)
		}
		if err1 != "" {
			failed++
		} else if ev.Name == "Words" {
			fast++
		}
	}
	h.release()
	if fast < 50 || failed < 50 {
		t.Errorf("%d logs read, %d refused: both sides are not tested", fast, failed)
	}
}

// An ethereum.call's answer read by the host itself is written byte for
// byte as go-ethereum's decoding writes it, and an answer go-ethereum
// cannot decode (short, a bad bool, a uint8 out of range) is null, as
// through go-ethereum: for Uniswap V3's slot0, a token's address and a
// function of no outputs.
func TestCallOutputsAsGoEthereum(t *testing.T) {
	m := loadModule(t, "call", nil)
	h := m.h
	parsed, err := abi.JSON(strings.NewReader(`[
 {"type":"function","name":"slot0","inputs":[],"outputs":[{"name":"sqrtPriceX96","type":"uint160"},{"name":"tick","type":"int24"},
  {"name":"observationIndex","type":"uint16"},{"name":"observationCardinality","type":"uint16"},{"name":"observationCardinalityNext","type":"uint16"},
  {"name":"feeProtocol","type":"uint8"},{"name":"unlocked","type":"bool"}]},
 {"type":"function","name":"token0","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"poke","inputs":[],"outputs":[]}]`))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	words := testWords(r)
	write := func(f func(abi.Arguments, []byte) uint32, outs abi.Arguments, ret []byte) (uint32, []byte) {
		if err := h.ready(context.Background()); err != nil {
			t.Fatal(err)
		}
		p := f(outs, ret)
		mem, _ := h.heap.mem.Read(0, h.heap.mem.Size())
		return p, bytes.Clone(mem)
	}
	decoded, null := 0, 0
	for i := 0; i < 900; i++ {
		method := parsed.Methods[[]string{"slot0", "token0", "poke"}[i%3]]
		var ret []byte
		for range r.IntN(9) {
			ret = append(ret, words[r.IntN(len(words))]...)
		}
		if i%6 == 0 && len(ret) >= 7*32 { // a well-formed slot0
			for j, keep := range []int{12, 0, 30, 30, 30, 31, 31} {
				clear(ret[32*j : 32*j+keep])
			}
			ret[32*6+31] &= 1
		}
		p1, mem1 := write(h.callOutputs, method.Outputs, ret)
		p2, mem2 := write(h.callOutputsABI, method.Outputs, ret)
		if p1 != p2 || !bytes.Equal(mem1, mem2) {
			t.Fatalf("%s answer %x: wrote %d and memory differing from go-ethereum's path (%d)", method.Name, ret, p1, p2)
		}
		if p1 == 0 {
			null++
		} else if method.Name != "poke" {
			decoded++
		}
	}
	h.release()
	if decoded < 100 || null < 100 {
		t.Errorf("%d answers decoded, %d null: both sides are not tested", decoded, null)
	}
}
