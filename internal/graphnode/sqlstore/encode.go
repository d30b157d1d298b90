package sqlstore

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// encoding is how a column holds a field's values, chosen so that
// SQLite's own comparison (integers by value, TEXT and BLOB byte by byte)
// is the executor's: a filter or an order pushed into SQL answers what
// the emulator answers.
type encoding int

const (
	// encText: ID, String, enums, references (TEXT, compared by byte, as
	// Go compares strings).
	encText encoding = iota
	// encInt: Int, Int8, Timestamp (INTEGER); encBool: Boolean (0 or 1,
	// false before true).
	encInt
	encBool
	// encBytes: Bytes (BLOB, compared byte by byte as bytea is).
	encBytes
	// encBig: BigInt as an order-preserving BLOB (bigKey).
	encBig
	// encJSON: lists and BigDecimal, as the field's JSON (TEXT); never
	// compared in SQL: filters and orders on them are left to the
	// executor.
	encJSON
)

func encodingOf(f *graphnode.Field) encoding {
	if f.List || f.Base == "BigDecimal" {
		return encJSON
	}
	switch graphnode.KindOf(f.Base) {
	case graphnode.KindInt, graphnode.KindInt8, graphnode.KindTimestamp:
		return encInt
	case graphnode.KindBool:
		return encBool
	case graphnode.KindBytes:
		return encBytes
	case graphnode.KindBigInt:
		return encBig
	}
	return encText
}

// sqlValue is v as column encoding e holds it.
func sqlValue(e encoding, v graphnode.Value) (any, error) {
	if v.Kind == graphnode.KindNull {
		return nil, nil
	}
	switch e {
	case encInt:
		return v.Int, nil
	case encBool:
		if v.Bool {
			return int64(1), nil
		}
		return int64(0), nil
	case encBytes:
		if v.Bytes == nil {
			return []byte{}, nil
		}
		return v.Bytes, nil
	case encBig:
		return bigKey(v.Big)
	case encJSON:
		raw, err := json.Marshal(v.JSON())
		return string(raw), err
	}
	return v.Str, nil
}

// fieldValue reads a column back into f's value.
func fieldValue(f *graphnode.Field, e encoding, raw any) (graphnode.Value, error) {
	switch e {
	case encInt:
		n, ok := raw.(int64)
		if !ok {
			return graphnode.Value{}, fmt.Errorf("%s: not an integer", f.Name)
		}
		return graphnode.Value{Kind: graphnode.KindOf(f.Base), Int: n}, nil
	case encBool:
		n, ok := raw.(int64)
		return graphnode.Bool(n != 0), okOr(ok, f)
	case encBytes:
		b, ok := raw.([]byte)
		return graphnode.Bytes(bytes.Clone(b)), okOr(ok, f)
	case encBig:
		b, ok := raw.([]byte)
		if !ok {
			return graphnode.Value{}, okOr(ok, f)
		}
		x, err := bigOfKey(b)
		return graphnode.Value{Kind: graphnode.KindBigInt, Big: x}, err
	case encJSON:
		s, _ := raw.(string)
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var jv any
		if err := dec.Decode(&jv); err != nil {
			return graphnode.Value{}, fmt.Errorf("%s: %w", f.Name, err)
		}
		return graphnode.ParseField(f, jv)
	}
	s, ok := raw.(string)
	return graphnode.String(s), okOr(ok, f)
}

func okOr(ok bool, f *graphnode.Field) error {
	if ok {
		return nil
	}
	return fmt.Errorf("%s: stored value of the wrong type", f.Name)
}

// bigKey writes x so that bytes.Compare orders keys as x orders: a
// header byte (0x80 plus the magnitude's length for x >= 0, 0x7f minus
// it for x < 0) and the big-endian magnitude (its complement for x < 0).
// A 256-bit value takes 33 bytes, a typical amount 9 to 12, against 78 and
// 19 to 25 digits as text. Magnitudes up to 126 bytes (1,008 bits; Graph
// Node's BigInt is at most 256 bits) are held.
func bigKey(x *big.Int) ([]byte, error) {
	if x == nil {
		x = new(big.Int)
	}
	mag := x.Bytes()
	if len(mag) > 126 {
		return nil, fmt.Errorf("BigInt of %d bits is too large to store", x.BitLen())
	}
	out := make([]byte, 1+len(mag))
	if x.Sign() >= 0 {
		out[0] = byte(0x80 + len(mag))
		copy(out[1:], mag)
		return out, nil
	}
	out[0] = byte(0x7f - len(mag))
	for i, b := range mag {
		out[1+i] = ^b
	}
	return out, nil
}

func bigOfKey(k []byte) (*big.Int, error) {
	if len(k) == 0 {
		return nil, fmt.Errorf("empty BigInt key")
	}
	h := int(k[0])
	mag := k[1:]
	if h >= 0x80 {
		if len(mag) != h-0x80 {
			return nil, fmt.Errorf("BigInt key %s: bad length", hex.EncodeToString(k))
		}
		return new(big.Int).SetBytes(mag), nil
	}
	if len(mag) != 0x7f-h {
		return nil, fmt.Errorf("BigInt key %s: bad length", hex.EncodeToString(k))
	}
	neg := make([]byte, len(mag))
	for i, b := range mag {
		neg[i] = ^b
	}
	return new(big.Int).Neg(new(big.Int).SetBytes(neg)), nil
}
