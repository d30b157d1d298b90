package indexer

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// The fast decoders are checked against go-ethereum's own decoding
// (encoding/json through types.Log's gencodec, hexutil, the indexer's
// header and tx structs) of the same bytes: generated answers in many
// shapes, well-formed and not, must decode to equal values or fail in
// both.

// jv is a JSON value to render: an object (ordered members), an array, or
// a literal text (a string with its quotes, a number, true, false, null).
type jv struct {
	obj  []member
	arr  []jv
	isA  bool
	isO  bool
	text string
}

type member struct {
	key string
	val jv
}

func lit(s string) jv     { return jv{text: s} }
func str(s string) jv     { return jv{text: `"` + s + `"`} }
func obj(ms ...member) jv { return jv{obj: ms, isO: true} }
func arr(vs ...jv) jv     { return jv{arr: vs, isA: true} }
func hexOf(b []byte) jv   { return str(hexutil.Encode(b)) }
func qty(n uint64) jv     { return str(hexutil.EncodeUint64(n)) }
func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// render writes v with random white space.
func (v jv) render(r *rand.Rand, w *bytes.Buffer) {
	ws := func() {
		if r.IntN(8) == 0 {
			w.WriteString([]string{" ", "\n", "\t", "\r\n  "}[r.IntN(4)])
		}
	}
	switch {
	case v.isO:
		w.WriteByte('{')
		for i, m := range v.obj {
			if i > 0 {
				w.WriteByte(',')
			}
			ws()
			w.WriteString(`"` + m.key + `"`)
			ws()
			w.WriteByte(':')
			ws()
			m.val.render(r, w)
			ws()
		}
		w.WriteByte('}')
	case v.isA:
		w.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				w.WriteByte(',')
			}
			ws()
			e.render(r, w)
			ws()
		}
		w.WriteByte(']')
	default:
		w.WriteString(v.text)
	}
}

// junk is a value the decoders must check and skip: nested, escaped,
// numbers of every form.
func junk(r *rand.Rand, depth int) jv {
	switch k := r.IntN(9); {
	case k == 0 && depth < 3:
		return obj(member{"a", junk(r, depth+1)}, member{`b\"c`, junk(r, depth+1)})
	case k == 1 && depth < 3:
		return arr(junk(r, depth+1), junk(r, depth+1))
	case k == 2:
		return str(`x\u00e9\n\\ \/ \"`)
	case k == 3:
		return lit([]string{"-0", "12.5e+3", "0.1", "-7E-2", "1e9"}[r.IntN(5)])
	case k == 4:
		return lit([]string{"true", "false", "null"}[r.IntN(3)])
	}
	return str("0x1")
}

// badHex are hex strings some hexutil type refuses (and some it takes:
// "" is 0 as a quantity, no bytes as data).
var badHex = []string{`""`, `"0x"`, `"0X1"`, `"0x01"`, `"1"`, `"0xg"`, `"0x123"`, `"0x` + strings.Repeat("f", 17) + `"`,
	`"0x` + strings.Repeat("ab", 19) + `"`, `"0x` + strings.Repeat("AB", 20) + `"`, `"0x` + strings.Repeat("Ab", 32) + `"`,
	`"\u0030x00"`, `"0x\n"`, `5`, `null`, `true`, `{}`, `[]`, `"0x` + strings.Repeat("0", 64) + `"`, `"0xffffffffffffffff"`, `"0x1_"`}

// mutate changes the members of o at random: a key's case, a member
// dropped, given twice, nulled, set to bad hex or junk, junk added, the
// order changed; each with probability about p.
func mutate(r *rand.Rand, o jv, p int) jv {
	var out []member
	for _, m := range o.obj {
		switch r.IntN(p) {
		case 0:
			continue
		case 1:
			m.key = strings.ToUpper(m.key[:1]) + m.key[1:]
		case 2:
			m.val = lit("null")
		case 3:
			m.val = lit(badHex[r.IntN(len(badHex))])
		case 4:
			out = append(out, member{m.key, junk(r, 0)})
		case 5:
			out = append(out, member{"extra" + m.key, junk(r, 0)})
		case 6:
			m.key = strings.ToUpper(m.key)
		case 7:
			out = append(out, m) // given twice
			m.val = lit("null")
		}
		out = append(out, m)
	}
	if r.IntN(p) == 0 {
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return obj(out...)
}

func genLog(r *rand.Rand, p int) jv {
	topics := make([]jv, r.IntN(5))
	for i := range topics {
		topics[i] = hexOf(randBytes(r, 32))
	}
	o := obj(member{"address", hexOf(randBytes(r, 20))}, member{"topics", arr(topics...)},
		member{"data", hexOf(randBytes(r, r.IntN(3)*32))}, member{"blockNumber", qty(r.Uint64N(1 << 40))},
		member{"transactionHash", hexOf(randBytes(r, 32))}, member{"transactionIndex", qty(r.Uint64N(300))},
		member{"blockHash", hexOf(randBytes(r, 32))}, member{"blockTimestamp", qty(r.Uint64())},
		member{"logIndex", qty(r.Uint64N(1000))}, member{"removed", lit([]string{"false", "true"}[r.IntN(2)])})
	if r.IntN(4) == 0 {
		o.obj = o.obj[:8] // a node without removed
	}
	return mutate(r, o, p)
}

func genTx(r *rand.Rand, p int) jv {
	to := hexOf(randBytes(r, 20))
	if r.IntN(5) == 0 {
		to = lit("null")
	}
	return mutate(r, obj(member{"hash", hexOf(randBytes(r, 32))}, member{"from", hexOf(randBytes(r, 20))}, member{"to", to},
		member{"input", hexOf(randBytes(r, r.IntN(70)))}, member{"transactionIndex", qty(r.Uint64N(300))},
		member{"gas", qty(21000)}, member{"v", qty(27)}, member{"accessList", arr()}), p)
}

func genReceipt(r *rand.Rand, p int) jv {
	logs := make([]jv, r.IntN(3))
	for i := range logs {
		logs[i] = genLog(r, p)
	}
	if r.IntN(30) == 0 {
		logs = append(logs, lit("null"))
	}
	price := []jv{qty(r.Uint64()), str("0x" + strings.Repeat("f", 64)), str("0x" + strings.Repeat("f", 65)), str(""), str("0x0")}[r.IntN(5)]
	return mutate(r, obj(member{"type", qty(r.Uint64N(300))}, member{"root", hexOf(randBytes(r, r.IntN(2)*32))},
		member{"status", qty(r.Uint64N(2))}, member{"cumulativeGasUsed", qty(r.Uint64N(1 << 40))},
		member{"logsBloom", hexOf(randBytes(r, 256))}, member{"logs", arr(logs...)}, member{"transactionHash", hexOf(randBytes(r, 32))},
		member{"contractAddress", []jv{lit("null"), hexOf(randBytes(r, 20))}[r.IntN(2)]}, member{"gasUsed", qty(r.Uint64N(1 << 30))},
		member{"effectiveGasPrice", price}, member{"blobGasUsed", qty(r.Uint64N(1 << 20))}, member{"blobGasPrice", qty(r.Uint64N(1 << 20))},
		member{"blockHash", hexOf(randBytes(r, 32))}, member{"blockNumber", qty(r.Uint64N(1 << 30))},
		member{"transactionIndex", qty(r.Uint64N(300))}, member{"from", hexOf(randBytes(r, 20))}), p)
}

func genHeader(r *rand.Rand, p int) jv {
	txs := make([]jv, r.IntN(4))
	for i := range txs {
		txs[i] = genTx(r, p)
	}
	return mutate(r, obj(member{"number", qty(r.Uint64N(1 << 30))}, member{"hash", hexOf(randBytes(r, 32))},
		member{"parentHash", hexOf(randBytes(r, 32))}, member{"timestamp", qty(r.Uint64N(1 << 32))},
		member{"logsBloom", hexOf(randBytes(r, 256))}, member{"transactions", arr(txs...)},
		member{"miner", hexOf(randBytes(r, 20))}, member{"extraData", str("0x")}), p)
}

// gethDecode decodes raw into a new value of out's type as go-ethereum's
// client does (encoding/json), and mine with decodeResult.
func bothDecode(raw []byte, out any) (geth, mine any, gerr, merr error) {
	typ := reflect.TypeOf(out).Elem()
	g, m := reflect.New(typ), reflect.New(typ)
	gerr = json.Unmarshal(raw, g.Interface())
	merr = decodeResult(raw, m.Interface())
	return g.Elem().Interface(), m.Elem().Interface(), gerr, merr
}

// agree fails t unless both decoders failed, or both decoded equal values.
func agree(t *testing.T, raw []byte, out any) (ok bool) {
	t.Helper()
	g, m, gerr, merr := bothDecode(raw, out)
	switch {
	case (gerr == nil) != (merr == nil):
		t.Errorf("%T of %s:\n go-ethereum: %v\n decoder:     %v", out, raw, gerr, merr)
		return false
	case gerr == nil && !reflect.DeepEqual(normal(g), normal(m)):
		t.Errorf("%T of %s:\n go-ethereum: %+v\n decoder:     %+v", out, raw, g, m)
		return false
	}
	if h, ok := g.(header); ok && gerr == nil {
		// the transactions a full block carries, as fetch.go decodes them
		mh := m.(header)
		var gtx []tx
		gerr := jsonUnmarshal(h.Txs, &gtx)
		mtx, merr := decodeTxs(mh.Txs)
		if (gerr == nil) != (merr == nil) || gerr == nil && !reflect.DeepEqual(gtx, mtx) {
			t.Errorf("transactions of %s:\n go-ethereum: %v %+v\n decoder:     %v %+v", h.Txs, gerr, gtx, merr, mtx)
			return false
		}
	}
	return true
}

// normal makes values comparable where only capacity or the raw
// transactions' layout could differ.
func normal(v any) any {
	if h, ok := v.(header); ok {
		h.Txs = nil
		return h
	}
	return v
}

func TestDecodersAgreeWithGoEthereum(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 1))
	var ok, failed int
	for i := 0; i < 4000; i++ {
		p := []int{1000, 40, 12, 6}[i%4] // from well-formed to hostile
		var v jv
		var out any
		switch i % 7 {
		case 5:
			rs := make([]jv, r.IntN(3))
			for j := range rs {
				rs[j] = genReceipt(r, p)
			}
			if r.IntN(20) == 0 {
				rs = append(rs, lit("null"))
			}
			v, out = arr(rs...), &[]*types.Receipt{}
		case 6:
			v, out = genReceipt(r, p), new(*types.Receipt)
			if r.IntN(10) == 0 {
				v = lit("null")
			}
		case 0, 1:
			logs := make([]jv, r.IntN(4))
			for j := range logs {
				logs[j] = genLog(r, p)
			}
			v, out = arr(logs...), &[]types.Log{}
			if r.IntN(20) == 0 {
				v = lit([]string{"null", "{}", `"x"`, "[null]", "[[]]"}[r.IntN(5)])
			}
		case 2:
			v, out = genHeader(r, p), &header{}
		case 3:
			v, out = genHeader(r, p), new(*header)
			if r.IntN(5) == 0 {
				v = lit("null")
			}
		case 4:
			v, out = lit(badHex[r.IntN(len(badHex))]), []any{new(hexutil.Uint64), new(hexutil.Bytes)}[r.IntN(2)]
			if r.IntN(2) == 0 {
				v = []jv{qty(r.Uint64()), hexOf(randBytes(r, r.IntN(40)))}[r.IntN(2)]
			}
		}
		var w bytes.Buffer
		v.render(r, &w)
		if !agree(t, w.Bytes(), out) {
			if failed++; failed > 10 {
				t.Fatal("too many disagreements")
			}
		}
		if _, _, gerr, _ := bothDecode(w.Bytes(), out); gerr == nil {
			ok++
		}
	}
	// both sides of the line are exercised
	if ok < 800 || ok > 3600 {
		t.Errorf("%d of 4000 answers decoded: the generator misses a side", ok)
	}
}

// Hostile bytes at the edges of the grammar: truncated, nested deep,
// broken escapes, numbers out of form, a second value after the first.
func TestDecodersAgreeOnBrokenJSON(t *testing.T) {
	lg := `{"address":"0x` + strings.Repeat("11", 20) + `","topics":[],"data":"0x","transactionHash":"0x` + strings.Repeat("22", 32) + `"`
	cases := []string{"", " ", "[", "]", "[,]", "[1,]", `[{}`, "nul", "nulll", "[" + lg + "}]", "[" + lg + ",}]", "[" + lg + `,"x":01}]`,
		"[" + lg + `,"x":-}]`, "[" + lg + `,"x":1.}]`, "[" + lg + `,"x":1e}]`, "[" + lg + `,"x":"\x"}]`, "[" + lg + `,"x":"\u12"}]`,
		"[" + lg + ",\"x\":\"a\x01\"}]", "[" + lg + `,"x":[1 2]}]`, "[" + lg + `,"x":{"a" 1}}]`, "[" + lg + `,"x":{"a":1,}}]`,
		"[" + lg + "}] x", "[" + lg + "}]  ", "[" + lg + `,"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "}]",
		"[" + lg + `,"x":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + "}]", "[" + lg + `,"topics":null}]`,
		"[" + lg + `,"topics":[null]}]`, "[" + lg + `,"removed":"true"}]`, "[" + lg + `,"removed":null}]`, "[" + lg + `,"ADDRESS":null}]`,
		"[" + lg + `,"ſemoved":true}]`, "[" + lg + `,"blocknumber":"0x1","blockNumber":null}]`, "[" + lg + `,"log\u0049ndex":"0x7"}]`,
		"[" + lg + "}, null]", "[" + lg + "}]\n"}
	for _, c := range cases {
		agree(t, []byte(c), &[]types.Log{})
	}
	hd := `{"number":"0x5","hash":"0x` + strings.Repeat("33", 32) + `"`
	for _, c := range []string{hd + `}`, hd + `,"logsBloom":null}`, hd + `,"logsBloom":"\u0030x` + strings.Repeat("00", 256) + `"}`,
		hd + `,"logsBloom":5}`, hd + `,"transactions":null}`, hd + `,"transactions":[null]}`, hd + `,"transactions":{}}`,
		hd + `,"transactions":[{"to":null,"hash":null}]}`, hd + `,"transactions":["0x` + strings.Repeat("44", 32) + `"]}`,
		hd + `,"transactions":[{"TO":"0x` + strings.Repeat("55", 20) + `","to":null}]}`, hd + `,"number":null}`, "null", "[]", `"x"`} {
		agree(t, []byte(c), &header{})
		agree(t, []byte(c), new(*header))
	}
}

// FuzzDecoders: any bytes, decoded as each type the fast decoders serve,
// never panic and agree with go-ethereum's decoding.
func FuzzDecoders(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 8; i++ {
		var w bytes.Buffer
		arr(genLog(r, 30), genLog(r, 1000)).render(r, &w)
		f.Add(uint8(0), w.Bytes())
		w.Reset()
		arr(genReceipt(r, 30), genReceipt(r, 1000)).render(r, &w)
		f.Add(uint8(5), w.Bytes())
		w.Reset()
		genHeader(r, 30).render(r, &w)
		f.Add(uint8(1), w.Bytes())
	}
	f.Add(uint8(3), []byte(`"0x1f"`))
	f.Add(uint8(4), []byte(`"0x00ff"`))
	f.Fuzz(func(t *testing.T, kind uint8, raw []byte) {
		outs := []any{&[]types.Log{}, &header{}, new(*header), new(hexutil.Uint64), new(hexutil.Bytes), &[]*types.Receipt{}, new(*types.Receipt)}
		agree(t, raw, outs[int(kind)%len(outs)])
	})
}

// A result type without a fast decoder is decoded by encoding/json; a
// nil or non-pointer target is refused, never written through.
func TestDecodeResultFallsBackToEncodingJSON(t *testing.T) {
	var m map[string]common.Hash
	if err := decodeResult([]byte(`{"a":"0x`+strings.Repeat("ab", 32)+`"}`), &m); err != nil || m["a"][0] != 0xab {
		t.Fatalf("fallback: %v %v", m, err)
	}
	var h *header
	if err := decodeResult([]byte(`{}`), h); err == nil {
		t.Fatal("a nil pointer took a result")
	}
	if err := decodeResult([]byte(`1`), 5); err == nil {
		t.Fatal("a non-pointer took a result")
	}
}
