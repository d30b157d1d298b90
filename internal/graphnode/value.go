package graphnode

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Kind is a stored value's kind, numbered as Graph Node's StoreValueKind
// (the numbering the mappings' store.set uses).
type Kind uint32

// The kinds of stored values.
const (
	KindString Kind = iota
	KindInt
	KindBigDecimal
	KindBool
	KindArray
	KindNull
	KindBytes
	KindBigInt
	KindInt8
	KindTimestamp
)

func (k Kind) String() string {
	names := []string{"String", "Int", "BigDecimal", "Bool", "Array", "Null", "Bytes", "BigInt", "Int8", "Timestamp"}
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", uint32(k))
}

// Value is one entity field as a mapping stores it. IDs, strings, enums
// and references (the referenced entity's id) are strings.
type Value struct {
	Kind  Kind
	Str   string
	Int   int64
	Bool  bool
	Bytes []byte
	Big   *big.Int // BigInt, or a BigDecimal's digits
	Exp   *big.Int // a BigDecimal's decimal exponent
	Array []Value
}

// Entity is an entity's fields by name.
type Entity map[string]Value

// Constructors of stored values.
func String(s string) Value       { return Value{Kind: KindString, Str: s} }
func Int(n int64) Value           { return Value{Kind: KindInt, Int: n} }
func Bool(b bool) Value           { return Value{Kind: KindBool, Bool: b} }
func Bytes(b []byte) Value        { return Value{Kind: KindBytes, Bytes: b} }
func BigInt(x *big.Int) Value     { return Value{Kind: KindBigInt, Big: new(big.Int).Set(x)} }
func Array(vs ...Value) Value     { return Value{Kind: KindArray, Array: vs} }
func BigIntOf(n int64) Value      { return BigInt(big.NewInt(n)) }
func Null() Value                 { return Value{Kind: KindNull} }
func HexBytes(s string) Value     { b, _ := decodeHex(s); return Bytes(b) }
func BigIntString(s string) Value { x, _ := new(big.Int).SetString(s, 10); return BigInt(x) }

// BigInt returns field name as a BigInt, failing if it is anything else.
func (e Entity) BigInt(name string) (*big.Int, error) {
	v, ok := e[name]
	if !ok || v.Kind != KindBigInt {
		return nil, fmt.Errorf("field %s is %v, not a BigInt", name, v.Kind)
	}
	return v.Big, nil
}

// kindOf is the stored kind of a field's base type.
func kindOf(base string) Kind {
	switch base {
	case "Bytes":
		return KindBytes
	case "BigInt":
		return KindBigInt
	case "BigDecimal":
		return KindBigDecimal
	case "Int":
		return KindInt
	case "Int8":
		return KindInt8
	case "Timestamp":
		return KindTimestamp
	case "Boolean":
		return KindBool
	default: // ID, String, enums, entity references
		return KindString
	}
}

// JSON is the value as Graph Node serialises it in a query answer:
// BigInt, BigDecimal and Int8 as decimal strings, Bytes as lowercase
// 0x-hex, Int as a number, Timestamp as a string of microseconds.
func (v Value) JSON() any {
	switch v.Kind {
	case KindString:
		return v.Str
	case KindInt:
		return v.Int
	case KindInt8, KindTimestamp:
		return strconv.FormatInt(v.Int, 10)
	case KindBool:
		return v.Bool
	case KindBytes:
		return "0x" + hex.EncodeToString(v.Bytes)
	case KindBigInt:
		return v.Big.String()
	case KindBigDecimal:
		return decimalString(v.Big, v.Exp)
	case KindArray:
		out := make([]any, len(v.Array))
		for i, el := range v.Array {
			out[i] = el.JSON()
		}
		return out
	}
	return nil
}

// decimalString writes digits·10^exp in plain notation.
func decimalString(digits, exp *big.Int) string {
	if digits == nil {
		return "0"
	}
	e := int64(0)
	if exp != nil {
		e = exp.Int64()
	}
	s := new(big.Int).Abs(digits).String()
	sign := ""
	if digits.Sign() < 0 {
		sign = "-"
	}
	switch {
	case e >= 0:
		s += strings.Repeat("0", int(e))
	case int(-e) < len(s):
		s = s[:len(s)+int(e)] + "." + s[len(s)+int(e):]
	default:
		s = "0." + strings.Repeat("0", int(-e)-len(s)) + s
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return sign + s
}

// parseValue reads a field's value from its JSON form (JSON's output, or
// a query argument): kind says what the field stores.
func parseValue(kind Kind, raw any) (Value, error) {
	if raw == nil {
		return Null(), nil
	}
	switch kind {
	case KindString:
		s, ok := raw.(string)
		if !ok {
			return Value{}, fmt.Errorf("not a string: %v", raw)
		}
		return String(s), nil
	case KindBool:
		b, ok := raw.(bool)
		if !ok {
			return Value{}, fmt.Errorf("not a boolean: %v", raw)
		}
		return Bool(b), nil
	case KindInt, KindInt8, KindTimestamp:
		n, err := intOf(raw)
		return Value{Kind: kind, Int: n}, err
	case KindBytes:
		s, ok := raw.(string)
		if !ok {
			return Value{}, fmt.Errorf("not a hex string: %v", raw)
		}
		b, err := decodeHex(s)
		if err != nil {
			return Value{}, fmt.Errorf("Failed to decode `Bytes` value: `%s`", err)
		}
		return Bytes(b), nil
	case KindBigInt:
		x, err := bigOf(raw)
		if err != nil {
			return Value{}, err
		}
		return BigInt(x), nil
	case KindBigDecimal:
		return parseDecimal(fmt.Sprint(raw))
	}
	return Value{}, fmt.Errorf("cannot read a %v", kind)
}

func intOf(raw any) (int64, error) {
	switch n := raw.(type) {
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	case float64:
		if n != float64(int64(n)) {
			return 0, fmt.Errorf("not an integer: %v", n)
		}
		return int64(n), nil
	case json.Number:
		return n.Int64()
	case string:
		return strconv.ParseInt(n, 10, 64)
	}
	return 0, fmt.Errorf("not an integer: %v", raw)
}

func bigOf(raw any) (*big.Int, error) {
	switch n := raw.(type) {
	case string:
		x, ok := new(big.Int).SetString(n, 10)
		if !ok {
			return nil, fmt.Errorf("Failed to decode `BigInt` value: `invalid digit found in string`")
		}
		return x, nil
	case json.Number:
		return bigOf(string(n))
	default:
		i, err := intOf(raw)
		if err != nil {
			return nil, err
		}
		return big.NewInt(i), nil
	}
}

func parseDecimal(s string) (Value, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return Value{}, fmt.Errorf("Failed to decode `BigDecimal` value: `%s`", s)
	}
	exp := int64(0)
	for !r.IsInt() {
		r.Mul(r, big.NewRat(10, 1))
		exp--
	}
	return Value{Kind: KindBigDecimal, Big: new(big.Int).Set(r.Num()), Exp: big.NewInt(exp)}, nil
}

// decodeHex reads 0x-hex as Graph Node reads Bytes (either case).
func decodeHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(s, "0x")
	if len(s)%2 == 1 {
		return nil, fmt.Errorf("Odd number of digits")
	}
	return hex.DecodeString(s)
}

// compare orders two values of one kind (BigInt and BigDecimal as
// numbers, Bytes byte-wise, strings by byte); ok is false when they do not
// compare.
func compare(a, b Value) (int, bool) {
	if a.Kind == KindNull || b.Kind == KindNull {
		return 0, false
	}
	switch a.Kind {
	case KindString:
		return strings.Compare(a.Str, b.Str), b.Kind == KindString
	case KindInt, KindInt8, KindTimestamp:
		switch {
		case a.Int < b.Int:
			return -1, true
		case a.Int > b.Int:
			return 1, true
		}
		return 0, true
	case KindBool:
		if a.Bool == b.Bool {
			return 0, true
		}
		if !a.Bool {
			return -1, true
		}
		return 1, true
	case KindBytes:
		return strings.Compare(string(a.Bytes), string(b.Bytes)), true
	case KindBigInt:
		return a.Big.Cmp(b.Big), b.Big != nil
	case KindBigDecimal:
		return decimalRat(a).Cmp(decimalRat(b)), true
	}
	return 0, false
}

func decimalRat(v Value) *big.Rat {
	r := new(big.Rat).SetInt(v.Big)
	e := v.Exp.Int64()
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs(e)), nil))
	if e >= 0 {
		return r.Mul(r, p)
	}
	return r.Quo(r, p)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func equal(a, b Value) bool {
	if a.Kind == KindArray {
		if b.Kind != KindArray || len(a.Array) != len(b.Array) {
			return false
		}
		for i := range a.Array {
			if !equal(a.Array[i], b.Array[i]) {
				return false
			}
		}
		return true
	}
	c, ok := compare(a, b)
	return ok && c == 0
}
