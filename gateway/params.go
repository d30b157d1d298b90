package gateway

import (
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// params reads query parameters strictly: every parameter is required, given
// once, and in its exact textual form (no signs, spaces, fractions or
// exponents in integers). Each failure is a 400 naming the parameter.
type params struct {
	values url.Values
}

func (p params) one(name string) (string, error) {
	vs, ok := p.values[name]
	switch {
	case !ok || len(vs) == 0:
		return "", problem.InvalidParam(name, "%s is required", name)
	case len(vs) > 1:
		return "", problem.InvalidParam(name, "%s is given %d times; give it once", name, len(vs))
	case vs[0] == "":
		return "", problem.InvalidParam(name, "%s is empty", name)
	}
	return vs[0], nil
}

// uint parses a decimal unsigned integer of at most maxDigits digits.
func (p params) digits(name string, maxDigits int) (string, error) {
	s, err := p.one(name)
	if err != nil {
		return "", err
	}
	if len(s) > maxDigits {
		return "", problem.InvalidParam(name, "%s is too long (at most %d digits)", name, maxDigits)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return "", problem.InvalidParam(name, "%s must be a non-negative decimal integer", name)
		}
	}
	return s, nil
}

// intRange parses an integer in [lo, hi].
func (p params) intRange(name string, lo, hi int) (int, error) {
	s, err := p.digits(name, 12)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, problem.InvalidParam(name, "%s must be an integer from %d to %d", name, lo, hi)
	}
	return v, nil
}

// chainID parses chainId and checks it is configured.
func (p params) chainID(known map[uint64]bool) (uint64, error) {
	s, err := p.digits("chainId", 20)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || !known[id] {
		ids := make([]string, 0, len(known))
		for k := range known {
			ids = append(ids, fmt.Sprint(k))
		}
		sort.Strings(ids)
		return 0, problem.InvalidParam("chainId", "chainId %s is not supported; supported: %s", s, strings.Join(ids, ", "))
	}
	return id, nil
}

// address parses 0x + 40 hex digits in any case. The checksum of mixed-case
// input is not enforced: clients copy addresses from lowercase sources (the
// subgraph) as often as from checksummed ones; answers are always checksummed.
func (p params) address(name string) (common.Address, error) {
	s, err := p.one(name)
	if err != nil {
		return common.Address{}, err
	}
	if len(s) != 42 || (s[:2] != "0x" && s[:2] != "0X") || !isHex(s[2:]) {
		return common.Address{}, problem.InvalidParam(name, "%s must be 0x followed by 40 hexadecimal digits", name)
	}
	return common.HexToAddress(s), nil
}

// uint256 parses a decimal integer up to 2^256-1.
func (p params) uint256(name string) (*big.Int, error) {
	s, err := p.digits(name, 78)
	if err != nil {
		return nil, err
	}
	v, _ := new(big.Int).SetString(s, 10)
	if v.BitLen() > 256 {
		return nil, problem.InvalidParam(name, "%s must be at most 2^256-1", name)
	}
	return v, nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
