package mapping

import (
	"fmt"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// An event's parameters are what the indexer hands the mappings most: a
// few 32-byte words each (addresses, integers, booleans), which
// go-ethereum's Unpack and ParseTopicsIntoMap decode through reflection,
// a map and a big.Int apiece before the host writes them into the module
// as bytes. The host reads such words itself (wordValue), accepting
// exactly the words go-ethereum accepts; a word it would refuse, a short
// log or a type of another kind takes go-ethereum's path, so that errors
// stay go-ethereum's, word for word.

// wordType reports whether values of t are one 32-byte word the host reads
// itself: the types ethValue writes (address, bool, int<N>, uint<N>).
func wordType(t abi.Type) bool {
	switch t.T {
	case abi.AddressTy, abi.BoolTy, abi.IntTy, abi.UintTy:
		return true
	}
	return false
}

// wordValue reads the ABI word w (32 bytes) as t, as go-ethereum's
// toGoType does: it returns the ethereum.Value kind, and the payload
// bytes: an address's 20 bytes, a bool's one 0 or 1 byte, an integer's
// signedLE bytes (what Graph Node's BigInt holds), written into buf. ok is
// false where go-ethereum fails (a bool neither 0 nor 1, an int8..int64 or
// uint8..uint64 out of its range: go-ethereum checks only those sizes)
// and for a type that is not a word type.
func wordValue(t abi.Type, w []byte, buf *[33]byte) (kind uint32, payload []byte, ok bool) {
	if len(w) != 32 {
		return 0, nil, false
	}
	switch t.T {
	case abi.AddressTy:
		return evAddress, w[12:], true
	case abi.BoolTy:
		if !allAre(w[:31], 0) || w[31] > 1 {
			return 0, nil, false
		}
		buf[0] = w[31]
		return evBool, buf[:1], true
	case abi.UintTy:
		if checkedSize(t.Size) && !allAre(w[:32-t.Size/8], 0) {
			return 0, nil, false
		}
		return evUint, wordLE(w, 0, buf), true
	case abi.IntTy:
		sign := byte(0)
		if w[0]&0x80 != 0 {
			sign = 0xff
		}
		if checkedSize(t.Size) {
			k := 32 - t.Size/8
			if w[k]&0x80 != sign&0x80 || !allAre(w[:k], sign) {
				return 0, nil, false
			}
		}
		return evInt, wordLE(w, sign, buf), true
	}
	return 0, nil, false
}

// checkedSize reports the integer sizes go-ethereum's ReadInteger checks
// the range of (it returns the others as a *big.Int unchecked).
func checkedSize(bits int) bool { return bits == 8 || bits == 16 || bits == 32 || bits == 64 }

func allAre(b []byte, v byte) bool {
	for _, c := range b {
		if c != v {
			return false
		}
	}
	return true
}

// wordLE is the 256-bit big-endian word w, extended by the byte sign (0
// for unsigned, the sign's byte for two's complement), as the fewest
// little-endian two's complement bytes.
func wordLE(w []byte, sign byte, buf *[33]byte) []byte {
	for i := 0; i < 32; i++ {
		buf[i] = w[31-i]
	}
	buf[32] = sign
	return minimalLE(buf[:])
}

// eventParams writes lg's parameters as ev's EventParams, reading words
// itself when every input is a word type and the log holds well-formed
// words for them all (checked before anything is written); else as
// go-ethereum decodes them (eventParamsABI).
func (h *Host) eventParams(ev abi.Event, lg types.Log) (uint32, error) {
	var buf [33]byte
	topic, data := 1, 0
	for _, in := range ev.Inputs {
		var w []byte
		if in.Indexed {
			if topic >= len(lg.Topics) {
				return h.eventParamsABI(ev, lg)
			}
			w = lg.Topics[topic][:]
			topic++
		} else {
			if data+32 > len(lg.Data) {
				return h.eventParamsABI(ev, lg)
			}
			w = lg.Data[data : data+32]
			data += 32
		}
		if _, _, ok := wordValue(in.Type, w, &buf); !ok {
			return h.eventParamsABI(ev, lg)
		}
	}
	hp := h.heap
	params := make([]uint32, len(ev.Inputs))
	topic, data = 1, 0
	for i, in := range ev.Inputs {
		var w []byte
		if in.Indexed {
			w, topic = lg.Topics[topic][:], topic+1
		} else {
			w, data = lg.Data[data:data+32], data+32
		}
		val := h.newWordValue(wordValue(in.Type, w, &buf)) // before the name, as eventParamsABI writes them
		params[i] = hp.newStruct(tidEventParam, hp.newString(in.Name), val)
	}
	return hp.newPtrArray(tidArrayEventParam, params), nil
}

// newWordValue writes an ethereum.Value wordValue read (its ok is true).
func (h *Host) newWordValue(kind uint32, payload []byte, _ bool) uint32 {
	hp := h.heap
	switch kind {
	case evBool:
		return hp.newEnum(tidEthereumValue, kind, uint64(payload[0]))
	default: // an address's bytes, an integer's BigInt
		return hp.newEnum(tidEthereumValue, kind, uint64(hp.newBytes(payload)))
	}
}

// eventParamsABI is eventParams through go-ethereum's decoding: for types
// the host does not read itself, and for logs go-ethereum refuses (its
// error is the one returned).
func (h *Host) eventParamsABI(ev abi.Event, lg types.Log) (uint32, error) {
	hp := h.heap
	params := make([]uint32, 0, len(ev.Inputs))
	topic := 1
	data, err := h.nonIndexed(ev).Unpack(lg.Data)
	if err != nil {
		return 0, fmt.Errorf("decode %s: %w", ev.Sig, err)
	}
	di := 0
	for _, in := range ev.Inputs {
		var v any
		if in.Indexed {
			if topic >= len(lg.Topics) {
				return 0, fmt.Errorf("%s: missing topic for %s", ev.Sig, in.Name)
			}
			m := map[string]any{}
			if err := abi.ParseTopicsIntoMap(m, abi.Arguments{in}, []common.Hash{lg.Topics[topic]}); err != nil {
				return 0, err
			}
			v = m[in.Name]
			topic++
		} else {
			v = data[di]
			di++
		}
		val, err := h.ethValue(in.Type, v)
		if err != nil {
			return 0, fmt.Errorf("%s.%s: %w", ev.Sig, in.Name, err)
		}
		params = append(params, hp.newStruct(tidEventParam, hp.newString(in.Name), val))
	}
	return hp.newPtrArray(tidArrayEventParam, params), nil
}
