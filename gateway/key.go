package gateway

import (
	"encoding/hex"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
)

// cacheKey builds a response-cache key in one allocation (the final
// string; the buffer stays on the stack): hits compute it on every request,
// and fmt with a checksummed address costs a dozen.
type cacheKey struct {
	buf [192]byte
	b   []byte
}

func newKey(route string) *cacheKey {
	k := &cacheKey{}
	k.b = append(k.buf[:0], route...)
	return k
}

func (k *cacheKey) str(s string) *cacheKey {
	k.b = append(append(k.b, '|'), s...)
	return k
}

func (k *cacheKey) uint(u uint64) *cacheKey {
	k.b = strconv.AppendUint(append(k.b, '|'), u, 10)
	return k
}

func (k *cacheKey) int(i int) *cacheKey { return k.uint(uint64(i)) }

func (k *cacheKey) addr(a common.Address) *cacheKey {
	k.b = hex.AppendEncode(append(k.b, '|'), a[:])
	return k
}

func (k *cacheKey) big(v *big.Int) *cacheKey {
	k.b = v.Append(append(k.b, '|'), 10)
	return k
}

func (k *cacheKey) String() string { return string(k.b) }
