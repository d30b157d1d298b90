package gateway

import (
	"fmt"
	"math"
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
// The raw query is split once into pairs held in arrays on the caller's
// stack, instead of building url.Values: an endpoint reads five names, and
// the map cost a fifth of a cache hit; scanning the raw query once per name
// cost a tenth. A query of more than maxPairs pairs (no client of ours
// sends one) is scanned per name instead.
type params struct {
	raw string
	n   int
	// chain is the chainId parsed (0 before): the block parameter's
	// checks need it, whatever the endpoint's request type.
	chain uint64
	// path is the request's path: a path template's variables are read
	// from it (stats/tvl/{pool}).
	path string
	over bool             // more than maxPairs pairs: lookups scan raw
	keys [maxPairs]string // query-unescaped
	vals [maxPairs]string // raw; unescaped when read
}

const maxPairs = 11 // an endpoint takes at most ten (a prepared deposit), and block

// read splits r's query into p, in place: p is the caller's, on its stack.
func (p *params) read(r *http.Request) {
	p.raw = r.URL.RawQuery
	for q := p.raw; q != ""; {
		var key, val string
		key, val, q = nextPair(q)
		if key == "" && val == "" {
			continue
		}
		if p.n == maxPairs {
			p.over = true
			break
		}
		p.keys[p.n], p.vals[p.n] = key, val
		p.n++
	}
}

// Each endpoint's parameters, in the order its documentation lists them:
// the one list its parser checks names against.
var (
	strikesParams  = []string{"optionMarket", "chainId", "callsReach", "putsReach", "filterDeprecated"}
	historyParams  = []string{"chainId", "user", "optionMarket", "first", "skip"}
	prepareParams  = []string{"chainId", "optionMarket", "optionId", "swapperId", "slippage"}
	marketsParams  = []string{"chainId"}
	quoteParams    = []string{"chainId", "optionMarket", "user", "type", "strike", "ttl", "amount", "markPrice"}
	purchaseParams = []string{"chainId", "optionMarket", "user", "type", "strike", "ttl", "amount", "slippage"}
	chainParams    = []string{"chainId", "optionMarket", "callsReach", "putsReach", "ttls"}
	statsParams    = []string{"chainId", "optionMarket", "from", "to"}
)

// readOnly reads r's query into p and refuses a parameter not in names: a
// misspelt or wrongly-cased one (chainid) or one of another endpoint would
// otherwise be ignored, and the client would never learn that what it
// meant to ask was not asked. It refuses a parameter given more than once
// too, whichever its parser: which of two values the client meant is not
// known (shares=max&shares=5 was read as max).
func (p *params) readOnly(r *http.Request, names []string) error {
	p.read(r)
	if p.over {
		for q := p.raw; q != ""; {
			var key, val string
			if key, val, q = nextPair(q); (key != "" || val != "") && !known(key, names) {
				return unknownParam(key, names)
			}
		}
		for _, name := range names {
			if _, n, _ := p.lookup(name); n > 1 {
				return repeatedParam(name, n)
			}
		}
		return nil
	}
	for i := 0; i < p.n; i++ {
		if !known(p.keys[i], names) {
			return unknownParam(p.keys[i], names)
		}
		for j := 0; j < i; j++ {
			if p.keys[j] == p.keys[i] {
				_, n, _ := p.lookup(p.keys[i])
				return repeatedParam(p.keys[i], n)
			}
		}
	}
	return nil
}

func repeatedParam(name string, n int) error {
	return problem.InvalidParam(name, "%s is given %d times; give it once", name, n)
}

func known(key string, names []string) bool {
	for _, n := range names {
		if key == n {
			return true
		}
	}
	return false
}

func unknownParam(key string, names []string) error {
	if key == "" {
		return problem.InvalidParam("", "a parameter has no name or a malformed %%-escape in its name; this endpoint takes %s", strings.Join(names, ", "))
	}
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return problem.InvalidParam(key, "unknown parameter %q: names are case-sensitive; did you mean %s?", key, n)
		}
	}
	return problem.InvalidParam(key, "unknown parameter %q; this endpoint takes %s", key, strings.Join(names, ", "))
}

// nextPair splits the first '&'-separated pair off q into its key
// (query-unescaped; "" when it cannot be read, which is none of ours) and
// raw value.
func nextPair(q string) (key, val, rest string) {
	pair := q
	if i := strings.IndexByte(q, '&'); i >= 0 {
		pair, rest = q[:i], q[i+1:]
	}
	key = pair
	if i := strings.IndexByte(pair, '='); i >= 0 {
		key, val = pair[:i], pair[i+1:]
	}
	if hasEscape(key) {
		var err error
		if key, err = url.QueryUnescape(key); err != nil {
			key = ""
		}
	}
	return key, val, rest
}

// lookup returns the value of name and how many times it was given. Pairs
// are separated by '&'; keys and values are query-unescaped ('+' is a
// space) only when they contain an escape.
func (p *params) lookup(name string) (value string, count int, err error) {
	if p.over {
		for q := p.raw; q != ""; {
			var key, val string
			if key, val, q = nextPair(q); key == name {
				if count++; count == 1 {
					value = val
				}
			}
		}
	} else {
		for i := 0; i < p.n; i++ {
			if p.keys[i] == name {
				if count++; count == 1 {
					value = p.vals[i]
				}
			}
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

func (p *params) one(name string) (string, error) {
	v, n, err := p.lookup(name)
	switch {
	case err != nil:
		return "", err
	case n == 0:
		return "", problem.InvalidParam(name, "%s is required", name)
	case n > 1:
		return "", repeatedParam(name, n)
	case v == "":
		return "", problem.InvalidParam(name, "%s is empty", name)
	}
	return v, nil
}

// uint parses a decimal unsigned integer of at most maxDigits digits.
func (p *params) digits(name string, maxDigits int) (string, error) {
	s, err := p.one(name)
	if err != nil {
		return "", err
	}
	if len(s) > maxDigits {
		return "", problem.InvalidParam(name, "%s is too long (at most %d digits)", name, maxDigits)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", problem.InvalidParam(name, "%s must be a non-negative decimal integer", name)
		}
	}
	return s, nil
}

// intRange parses an integer in [lo, hi].
func (p *params) intRange(name string, lo, hi int) (int, error) {
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

// chainID parses chainId and checks it is served: known holds the
// configured chains, true for those served. A chain configured without
// upstreams is refused like an unknown one (every request about it would
// fail), with hint(id) saying how to serve it.
func (p *params) chainID(known map[uint64]bool, hint func(uint64) string) (uint64, error) {
	s, err := p.digits("chainId", 20)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err == nil && known[id] {
		p.chain = id
		return id, nil
	}
	ids := make([]string, 0, len(known))
	for k, served := range known {
		if served {
			ids = append(ids, fmt.Sprint(k))
		}
	}
	sort.Strings(ids)
	if configured, ok := known[id]; err == nil && ok && !configured && hint != nil {
		return 0, problem.InvalidParam("chainId", "chain %d has no upstreams on this gateway; served: %s; %s", id, strings.Join(ids, ", "), hint(id))
	}
	return 0, problem.InvalidParam("chainId", "chainId %s is not supported; supported: %s", s, strings.Join(ids, ", "))
}

// address parses 0x + 40 hex digits in any case. The checksum of mixed-case
// input is not enforced: clients copy addresses from lowercase sources (the
// subgraph) as often as from checksummed ones; answers are always checksummed.
func (p *params) address(name string) (common.Address, error) {
	s, err := p.one(name)
	if err != nil {
		return common.Address{}, err
	}
	var a common.Address
	if len(s) != 42 || (s[:2] != "0x" && s[:2] != "0X") {
		return a, problem.InvalidParam(name, "%s must be 0x followed by 40 hexadecimal digits", name)
	}
	for i := range a {
		hi, lo := hexDigit[s[2+2*i]], hexDigit[s[3+2*i]]
		if hi|lo > 0xf {
			return common.Address{}, problem.InvalidParam(name, "%s must be 0x followed by 40 hexadecimal digits", name)
		}
		a[i] = hi<<4 | lo
	}
	return a, nil
}

// hexDigit maps a hexadecimal digit to its value and anything else to 0xff.
var hexDigit = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte(0); c < 10; c++ {
		t['0'+c] = c
	}
	for c := byte(0); c < 6; c++ {
		t['a'+c], t['A'+c] = 10+c, 10+c
	}
	return t
}()

// maxUint256 is 2^256-1 in decimal.
const maxUint256 = "115792089237316195423570985008687907853269984665640564039457584007913129639935"

// uint256 reads a decimal integer up to 2^256-1 and returns its digits
// without leading zeros: the text is what the cache key needs, and only a
// miss goes on to make a big.Int of it.
func (p *params) uint256(name string) (string, error) {
	s, err := p.digits(name, len(maxUint256))
	if err != nil {
		return "", err
	}
	if s = strings.TrimLeft(s, "0"); s == "" {
		s = "0"
	}
	if len(s) == len(maxUint256) && s > maxUint256 {
		return "", problem.InvalidParam(name, "%s must be at most 2^256-1", name)
	}
	return s, nil
}

// blockNumber is the optional block parameter: the block the answer is to
// be true at (0 when absent: the subgraph's indexed block).
func (p *params) blockNumber() (uint64, error) {
	_, n, err := p.lookup("block")
	if err != nil || n == 0 {
		return 0, err
	}
	s, err := p.digits("block", 20)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 {
		return 0, problem.InvalidParam("block", "block must be a block number from 1 to %d", uint64(math.MaxUint64))
	}
	return v, nil
}
