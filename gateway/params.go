package gateway

import (
	"fmt"
	"math/big"
	"net/http"
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
//
// It scans the raw query for each name instead of building url.Values: an
// endpoint reads five names, and the map cost a fifth of a cache hit.
type params struct {
	raw string
}

func paramsOf(r *http.Request) params { return params{raw: r.URL.RawQuery} }

// lookup returns the value of name and how many times it was given.
// Pairs are separated by '&'; keys and values are query-unescaped ('+' is a
// space) only when they contain an escape.
func (p params) lookup(name string) (value string, count int, err error) {
	q := p.raw
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		key, val, _ := strings.Cut(pair, "=")
		if hasEscape(key) {
			if key, err = url.QueryUnescape(key); err != nil {
				continue // a key we cannot read is not one of ours
			}
		}
		if key != name {
			continue
		}
		count++
		if count == 1 {
			value = val
		}
	}
	if count == 1 && hasEscape(value) {
		if value, err = url.QueryUnescape(value); err != nil {
			return "", count, problem.InvalidParam(name, "%s has a malformed %%-escape", name)
		}
	}
	return value, count, nil
}

// hasEscape reports a '%' or '+' (strings.ContainsAny builds a set per call:
// a sixth of a cache hit).
func hasEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '+' {
			return true
		}
	}
	return false
}

func (p params) one(name string) (string, error) {
	v, n, err := p.lookup(name)
	switch {
	case err != nil:
		return "", err
	case n == 0:
		return "", problem.InvalidParam(name, "%s is required", name)
	case n > 1:
		return "", problem.InvalidParam(name, "%s is given %d times; give it once", name, n)
	case v == "":
		return "", problem.InvalidParam(name, "%s is empty", name)
	}
	return v, nil
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
	var a common.Address
	if len(s) != 42 || (s[:2] != "0x" && s[:2] != "0X") || !isHex(s[2:]) {
		return a, problem.InvalidParam(name, "%s must be 0x followed by 40 hexadecimal digits", name)
	}
	for i := range a {
		a[i] = nibble(s[2+2*i])<<4 | nibble(s[3+2*i])
	}
	return a, nil
}

func nibble(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	default:
		return c - '0'
	}
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
