package gateway

import (
	"encoding/hex"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
)

// cacheKey builds a response-cache key in one allocation, the final string:
// hits compute it on every request, and fmt with a checksummed address
// costs a dozen. The caller passes a buffer on its stack; a value type (not
// a struct pointing into its own array) is what lets escape analysis keep
// that buffer there.
//
//	var kb [keyBuf]byte
//	key := newKey(kb[:0], "strikes").uint(chainID).String()
type cacheKey []byte

// keyBuf holds every key the gateway builds; a longer one still works and
// only costs an allocation.
const keyBuf = 192

func newKey(buf []byte, route string) cacheKey { return append(buf[:0], route...) }

func (k cacheKey) str(s string) cacheKey { return append(append(k, '|'), s...) }

func (k cacheKey) uint(u uint64) cacheKey { return strconv.AppendUint(append(k, '|'), u, 10) }

func (k cacheKey) int(i int) cacheKey { return k.uint(uint64(i)) }

func (k cacheKey) addr(a common.Address) cacheKey { return hex.AppendEncode(append(k, '|'), a[:]) }

// optAddr keys an optional address filter: an absent one apart from every
// address, the zero address included (a request naming it is not the
// request that leaves the filter out).
func (k cacheKey) optAddr(a *common.Address) cacheKey {
	if a == nil {
		return k.str("-")
	}
	return k.addr(*a)
}

func (k cacheKey) slippage(s clamm.Slippage) cacheKey { return s.Append(append(k, '|')) }

func (k cacheKey) String() string { return string(k) }
