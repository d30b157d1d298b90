package indexer

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// The decoders of the answers the indexer reads most (eth_getLogs, block
// headers with their transactions, receipts, quantities, eth_call's
// bytes), each
// taking what go-ethereum's gencodec and hexutil types take and refusing
// what they refuse (rpcdecode_test.go checks both against go-ethereum on
// generated and fuzzed answers): go-ethereum's client scans every answer
// twice and builds each log through a struct of pointers, which cost a
// fifth of the backfill's CPU. Field names match as encoding/json's do
// (exactly, else without regard to case), a member given twice takes the
// last, and unknown members are checked and skipped.

// decodeResult decodes a result into out with the fast decoder of its
// type, or encoding/json for any other.
func decodeResult(raw []byte, out any) error {
	if v := reflect.ValueOf(out); v.Kind() != reflect.Pointer || v.IsNil() {
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(out)}
	}
	v := fresh(out)
	if v == nil {
		return json.Unmarshal(raw, out)
	}
	s := &jscan{b: raw}
	if _, err := s.value(v); err != nil {
		return err
	}
	if !s.end() {
		return s.fail("data after the value")
	}
	assign(out, v)
	return nil
}

// fresh is a new zero value of out's type when a fast decoder serves it
// (nil: none does, or out is nil), for decoding a result the caller sees
// only once it decoded whole: a decoder may have written part of a
// malformed value, and the caller's value must stay as it was.
func fresh(out any) any {
	switch out.(type) {
	case *[]types.Log:
		return new([]types.Log)
	case *header:
		return new(header)
	case **header:
		return new(*header)
	case *[]*types.Receipt:
		return new([]*types.Receipt)
	case **types.Receipt:
		return new(*types.Receipt)
	case *hexutil.Uint64:
		return new(hexutil.Uint64)
	case *hexutil.Bytes:
		return new(hexutil.Bytes)
	}
	return nil
}

// assign sets *out to *v (v from fresh(out)).
func assign(out, v any) {
	reflect.ValueOf(out).Elem().Set(reflect.ValueOf(v).Elem())
}

// value decodes the value at s into out when a fast decoder serves out's
// type (ok); out must be a non-nil pointer.
func (s *jscan) value(out any) (ok bool, err error) {
	switch v := out.(type) {
	case *[]types.Log:
		err = s.logs(v)
	case *header:
		err = s.header(v)
	case **header:
		err = s.headerPtr(v)
	case *[]*types.Receipt:
		err = s.receipts(v)
	case **types.Receipt:
		err = s.receiptPtr(v)
	case *hexutil.Uint64:
		err = s.quantityValue(v)
	case *hexutil.Bytes:
		err = s.bytesValue(v)
	default:
		return false, nil
	}
	return true, err
}

var (
	errNonString = errors.New("a hex string expected")
	errHexSyntax = errors.New("invalid hex string")
)

// hexRaw reads a string for a hexutil type: its raw content (hexutil
// reads it unescaped, so an escape is invalid hex).
func (s *jscan) hexRaw() ([]byte, error) {
	if s.ws() != '"' {
		if err := s.skip(); err != nil {
			return nil, err
		}
		return nil, errNonString
	}
	raw, _, err := s.str()
	return raw, err
}

// fixed reads a 0x-prefixed hex string of exactly len(out) bytes into
// out (hexutil.UnmarshalFixedJSON: common.Hash, common.Address).
func (s *jscan) fixed(out []byte) error {
	raw, err := s.hexRaw()
	if err != nil {
		return err
	}
	return hexFixed(raw, out)
}

func hexFixed(raw, out []byte) error {
	if len(raw) < 2 || raw[0] != '0' || raw[1] != 'x' && raw[1] != 'X' {
		return fmt.Errorf("hex string without 0x prefix (%d bytes wanted)", len(out))
	}
	raw = raw[2:]
	if len(raw) != 2*len(out) {
		return fmt.Errorf("hex string has length %d, want %d", len(raw), 2*len(out))
	}
	for i := range out {
		hi, lo := nibble(raw[2*i]), nibble(raw[2*i+1])
		if hi < 0 || lo < 0 {
			return errHexSyntax
		}
		out[i] = byte(hi<<4 | lo)
	}
	return nil
}

// quantity reads a hexutil.Uint64 (and hexutil.Uint): 0x and at most 16
// digits without a leading zero; the empty string is 0, as to hexutil.
func (s *jscan) quantity() (uint64, error) {
	raw, err := s.hexRaw()
	if err != nil {
		return 0, err
	}
	if len(raw) == 0 {
		return 0, nil
	}
	if len(raw) < 2 || raw[0] != '0' || raw[1] != 'x' && raw[1] != 'X' {
		return 0, errors.New("hex number without 0x prefix")
	}
	raw = raw[2:]
	switch {
	case len(raw) == 0:
		return 0, errors.New("hex number 0x without digits")
	case len(raw) > 1 && raw[0] == '0':
		return 0, errors.New("hex number with leading zero digits")
	case len(raw) > 16:
		return 0, errors.New("hex number > 64 bits")
	}
	var n uint64
	for _, c := range raw {
		d := nibble(c)
		if d < 0 {
			return 0, errHexSyntax
		}
		n = n<<4 | uint64(d)
	}
	return n, nil
}

// hexBytes reads a hexutil.Bytes: 0x and an even number of digits (the
// empty string is no bytes, as to hexutil).
func (s *jscan) hexBytes() (hexutil.Bytes, error) {
	raw, err := s.hexRaw()
	if err != nil {
		return nil, err
	}
	if len(raw) > 0 {
		if len(raw) < 2 || raw[0] != '0' || raw[1] != 'x' && raw[1] != 'X' {
			return nil, errors.New("hex string without 0x prefix")
		}
		raw = raw[2:]
	}
	if len(raw)%2 != 0 {
		return nil, errors.New("hex string of odd length")
	}
	out := make(hexutil.Bytes, len(raw)/2)
	for i := range out {
		hi, lo := nibble(raw[2*i]), nibble(raw[2*i+1])
		if hi < 0 || lo < 0 {
			return nil, errHexSyntax
		}
		out[i] = byte(hi<<4 | lo)
	}
	return out, nil
}

// quantityValue and bytesValue are a whole result of the type: null is
// refused, as hexutil refuses it.
func (s *jscan) quantityValue(v *hexutil.Uint64) error {
	n, err := s.quantity()
	if err == nil {
		*v = hexutil.Uint64(n)
	}
	return err
}

func (s *jscan) bytesValue(v *hexutil.Bytes) error {
	b, err := s.hexBytes()
	if err == nil {
		*v = b
	}
	return err
}

// boolean reads a JSON true or false.
func (s *jscan) boolean() (bool, error) {
	switch s.ws() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	}
	if err := s.skip(); err != nil {
		return false, err
	}
	return false, errors.New("a boolean expected")
}

// logs reads eth_getLogs' answer: null (none) or an array of logs.
func (s *jscan) logs(out *[]types.Log) error {
	if null, err := s.null(); null || err != nil {
		if err == nil {
			*out = nil
		}
		return err
	}
	lgs := (*out)[:0]
	if lgs == nil {
		lgs = []types.Log{}
	}
	err := s.elems(func() error {
		lgs = append(lgs, types.Log{})
		return s.log(&lgs[len(lgs)-1])
	})
	*out = lgs
	return err
}

// logFields are types.Log's members, in logSet's bit order.
var logFields = []string{"address", "topics", "data", "blockNumber", "transactionHash", "transactionIndex",
	"blockHash", "blockTimestamp", "logIndex", "removed"}

// log reads one log as types.Log.UnmarshalJSON does: address, topics,
// data and transactionHash required (null is missing), the others kept
// when given.
func (s *jscan) log(l *types.Log) error {
	return s.gencodec("Log", logFields, []int{0, 1, 2, 4}, func(i int, null bool) error {
		if null {
			var zero types.Log
			copyLogField(l, &zero, i)
			return nil
		}
		return s.logField(l, i)
	})
}

// gencodec reads an object as go-ethereum's gencodec UnmarshalJSON reads
// one into its struct of pointers: a member given sets its field (set
// reads it, null false), a null member is absent (set resets the field,
// null true), unknown members are skipped; the fields at required must
// end up given. null for the whole object is all of them missing.
func (s *jscan) gencodec(typ string, names []string, required []int, set func(i int, null bool) error) error {
	var given uint32 // bit i: names[i] given, not null
	if null, err := s.null(); null || err != nil {
		if err == nil {
			err = fmt.Errorf("missing required field '%s' for %s", names[required[0]], typ)
		}
		return err
	}
	err := s.members(func(key []byte) error {
		i := field(key, names)
		if i < 0 {
			return s.skip()
		}
		null, err := s.null()
		if err != nil {
			return err
		}
		if null {
			given &^= 1 << i
		} else {
			given |= 1 << i
		}
		return set(i, null)
	})
	if err != nil {
		return err
	}
	for _, i := range required {
		if given&(1<<i) == 0 {
			return fmt.Errorf("missing required field '%s' for %s", names[i], typ)
		}
	}
	return nil
}

func (s *jscan) logField(l *types.Log, i int) error {
	var err error
	var n uint64
	switch i {
	case 0:
		err = s.fixed(l.Address[:])
	case 1:
		l.Topics, err = s.hashes()
	case 2:
		l.Data, err = s.hexBytes()
	case 3:
		n, err = s.quantity()
		l.BlockNumber = n
	case 4:
		err = s.fixed(l.TxHash[:])
	case 5:
		n, err = s.quantity()
		l.TxIndex = uint(n)
	case 6:
		err = s.fixed(l.BlockHash[:])
	case 7:
		n, err = s.quantity()
		l.BlockTimestamp = n
	case 8:
		n, err = s.quantity()
		l.Index = uint(n)
	case 9:
		l.Removed, err = s.boolean()
	}
	return err
}

// copyLogField sets l's field i to from's.
func copyLogField(l, from *types.Log, i int) {
	switch i {
	case 0:
		l.Address = from.Address
	case 1:
		l.Topics = from.Topics
	case 2:
		l.Data = from.Data
	case 3:
		l.BlockNumber = from.BlockNumber
	case 4:
		l.TxHash = from.TxHash
	case 5:
		l.TxIndex = from.TxIndex
	case 6:
		l.BlockHash = from.BlockHash
	case 7:
		l.BlockTimestamp = from.BlockTimestamp
	case 8:
		l.Index = from.Index
	case 9:
		l.Removed = from.Removed
	}
}

// hashes reads a non-null array of hashes (never nil, as encoding/json
// makes an empty one).
func (s *jscan) hashes() ([]common.Hash, error) {
	out := []common.Hash{}
	err := s.elems(func() error {
		out = append(out, common.Hash{})
		return s.fixed(out[len(out)-1][:])
	})
	return out, err
}

// headerFields are header's members, by index.
var headerFields = []string{"number", "hash", "parentHash", "timestamp", "logsBloom", "transactions"}

// headerPtr reads a header that may be null (a block the node lacks).
func (s *jscan) headerPtr(h **header) error {
	if null, err := s.null(); null || err != nil {
		if err == nil {
			*h = nil
		}
		return err
	}
	if *h == nil {
		*h = new(header)
	}
	return s.header(*h)
}

// header reads a block into h as encoding/json reads it into the struct:
// null leaves h as it is; each member given overwrites its field.
func (s *jscan) header(h *header) error {
	if null, err := s.null(); null || err != nil {
		return err
	}
	return s.members(func(key []byte) error {
		var err error
		var n uint64
		switch field(key, headerFields) {
		case 0:
			n, err = s.quantity()
			h.Number = hexutil.Uint64(n)
		case 1:
			err = s.fixed(h.Hash[:])
		case 2:
			err = s.fixed(h.ParentHash[:])
		case 3:
			n, err = s.quantity()
			h.Timestamp = hexutil.Uint64(n)
		case 4:
			err = s.bloom(&h.Bloom)
		case 5:
			var raw []byte
			if raw, err = s.span(); err == nil {
				h.Txs = append(json.RawMessage(nil), raw...)
			}
		default:
			err = s.skip()
		}
		return err
	})
}

// bloom reads a logsBloom as encoding/json reads a TextUnmarshaler: null
// changes nothing, a string is unescaped before its hex is read.
func (s *jscan) bloom(b *types.Bloom) error {
	if null, err := s.null(); null || err != nil {
		return err
	}
	if s.ws() != '"' {
		if err := s.skip(); err != nil {
			return err
		}
		return errNonString
	}
	raw, esc, err := s.str()
	if err == nil && esc {
		raw, err = unquote(raw)
	}
	if err != nil {
		return err
	}
	return hexFixed(raw, b[:])
}

// txFields are tx's members, by index.
var txFields = []string{"hash", "from", "to", "input", "transactionIndex"}

// decodeTxs reads a block's transactions (header.Txs) as encoding/json
// reads them into []tx: absent or null is none; a null element is a zero
// tx (a struct takes null as nothing).
func decodeTxs(raw []byte) ([]tx, error) {
	s := &jscan{b: raw}
	if s.end() {
		return nil, nil
	}
	if null, err := s.null(); null || err != nil {
		if err == nil && !s.end() {
			err = s.fail("data after the value")
		}
		return nil, err
	}
	out := []tx{}
	err := s.elems(func() error {
		out = append(out, tx{})
		return s.tx(&out[len(out)-1])
	})
	if err == nil && !s.end() {
		err = s.fail("data after the value")
	}
	return out, err
}

func (s *jscan) tx(t *tx) error {
	if null, err := s.null(); null || err != nil {
		return err
	}
	return s.members(func(key []byte) error {
		var err error
		var n uint64
		switch field(key, txFields) {
		case 0:
			err = s.fixed(t.Hash[:])
		case 1:
			err = s.fixed(t.From[:])
		case 2:
			var null bool
			if null, err = s.null(); null || err != nil {
				t.To = nil
				return err
			}
			var a common.Address
			err = s.fixed(a[:])
			t.To = &a
		case 3:
			t.Input, err = s.hexBytes()
		case 4:
			n, err = s.quantity()
			t.Index = hexutil.Uint64(n)
		default:
			err = s.skip()
		}
		return err
	})
}
