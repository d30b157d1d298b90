package contracts

import (
	"fmt"
	"math/big"
	"reflect"

	"github.com/ethereum/go-ethereum/accounts/abi"
)

// RangeError is an integer argument its ABI type cannot hold: go-ethereum
// packs a *big.Int modulo 2^N without a word, so a transaction built from
// it would not do what its answer says (an approval of 2^256 + x approves
// x).
type RangeError struct {
	Arg   string // the argument's path: "amount", "_params.maxCostAllowance"
	Type  string // its ABI type
	Value *big.Int
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("%s = %s does not fit %s", e.Arg, e.Value, e.Type)
}

// PackChecked is a.Pack(name, args...) refusing, with a *RangeError, any
// integer argument (nested in tuples and arrays too) its ABI type cannot
// hold. Calldata handed to users is built through it, or, for the LP
// transactions, through Position.Payload, which checks its one amount.
func PackChecked(a abi.ABI, name string, args ...any) ([]byte, error) {
	m, ok := a.Methods[name]
	if !ok {
		return nil, fmt.Errorf("contracts: no method %q", name)
	}
	if len(args) != len(m.Inputs) {
		return nil, fmt.Errorf("contracts: %s takes %d arguments, %d given", name, len(m.Inputs), len(args))
	}
	for i, in := range m.Inputs {
		if err := checkRange(in.Type, reflect.ValueOf(args[i]), in.Name); err != nil {
			return nil, err
		}
	}
	return a.Pack(name, args...)
}

// checkRange walks v as ABI type t, refusing a *big.Int outside t's range.
func checkRange(t abi.Type, v reflect.Value, path string) error {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if n, ok := v.Interface().(*big.Int); ok {
			return intFits(t, n, path)
		}
		if v.IsNil() {
			return nil // go-ethereum refuses what it cannot pack
		}
		v = v.Elem()
	}
	switch t.T {
	case abi.TupleTy:
		if v.Kind() != reflect.Struct {
			return nil
		}
		for i, elem := range t.TupleElems {
			f := v.FieldByName(abi.ToCamelCase(t.TupleRawNames[i]))
			if !f.IsValid() {
				continue
			}
			if err := checkRange(*elem, f, path+"."+t.TupleRawNames[i]); err != nil {
				return err
			}
		}
	case abi.SliceTy, abi.ArrayTy:
		if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
			return nil
		}
		for i := range v.Len() {
			if err := checkRange(*t.Elem, v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// intFits refuses n outside the range of integer type t (other types
// are go-ethereum's to refuse).
func intFits(t abi.Type, n *big.Int, path string) error {
	if n == nil {
		return nil
	}
	var lo, hi *big.Int
	switch t.T {
	case abi.UintTy:
		lo, hi = new(big.Int), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(t.Size)), big.NewInt(1))
	case abi.IntTy:
		half := new(big.Int).Lsh(big.NewInt(1), uint(t.Size-1))
		lo, hi = new(big.Int).Neg(half), half.Sub(half, big.NewInt(1))
	default:
		return nil
	}
	if n.Cmp(lo) < 0 || n.Cmp(hi) > 0 {
		return &RangeError{Arg: path, Type: t.String(), Value: new(big.Int).Set(n)}
	}
	return nil
}
