package indexertest

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// The scale node reads the JSON-RPC requests it is sent without
// reflection: a strict reader takes the shape go-ethereum's client writes
// (an object of jsonrpc, id, method and params, or a batch of them) and
// hands back the same Requests encoding/json would; anything it does not
// take (escapes, unknown or repeated keys, deep nesting, invalid JSON) is
// read by encoding/json as before, so that every body gets the answer it
// got (a 400 with encoding/json's message for one that is not JSON).
// The reader only ever refuses what encoding/json might read otherwise:
// what it takes, encoding/json reads to the same requests.

// maxDepth is the nesting the fast reader takes (encoding/json's 10,000
// is left to encoding/json).
const maxDepth = 64

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue is the end of the JSON value starting at b[i], or -1 if it is
// not one the fast reader takes.
func skipValue(b []byte, i, depth int) int {
	if i >= len(b) || depth > maxDepth {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return skipObject(b, i, depth+1, nil)
	case c == '[':
		return skipArray(b, i, depth+1, nil)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || isDigit(c):
		return skipNumber(b, i)
	}
	return -1
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipString takes a string without escapes (any byte from 0x20 on but
// the quote and the backslash, as encoding/json's scanner takes them).
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c == '\\' || c < 0x20:
			return -1
		}
	}
	return -1
}

func digits(b []byte, i int) int {
	j := i
	for j < len(b) && isDigit(b[j]) {
		j++
	}
	return j
}

// skipNumber takes JSON's number grammar.
func skipNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && isDigit(b[i]):
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// skipArray takes an array, handing each element (trimmed) to each if set.
func skipArray(b []byte, i, depth int, each func(v []byte)) int {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		end := skipValue(b, i, depth)
		if end < 0 {
			return -1
		}
		if each != nil {
			each(b[i:end])
		}
		i = skipSpace(b, end)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == ']':
			return i + 1
		default:
			return -1
		}
	}
}

// skipObject takes an object, handing each key (unquoted: it holds no
// escapes) and value (trimmed) to each if set; each refuses one by
// returning false.
func skipObject(b []byte, i, depth int, each func(k, v []byte) bool) int {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		kend := skipString(b, i)
		if kend < 0 {
			return -1
		}
		v := skipSpace(b, kend)
		if v >= len(b) || b[v] != ':' {
			return -1
		}
		v = skipSpace(b, v+1)
		end := skipValue(b, v, depth)
		if end < 0 || (each != nil && !each(b[i+1:kend-1], b[v:end])) {
			return -1
		}
		i = skipSpace(b, end)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return i + 1
		default:
			return -1
		}
	}
}

// methodName is a method's name from its unquoted bytes, the node's own
// methods without allocating.
func methodName(b []byte) string {
	switch string(b) {
	case "eth_call":
		return "eth_call"
	case "eth_getLogs":
		return "eth_getLogs"
	case "eth_getBlockByNumber":
		return "eth_getBlockByNumber"
	case "eth_getBlockReceipts":
		return "eth_getBlockReceipts"
	case "eth_getBlockByHash":
		return "eth_getBlockByHash"
	case "eth_getTransactionReceipt":
		return "eth_getTransactionReceipt"
	case "eth_blockNumber":
		return "eth_blockNumber"
	case "eth_chainId":
		return "eth_chainId"
	}
	return string(b)
}

// plainASCII reports whether a string's bytes are printable ASCII, which
// encoding/json unquotes to themselves.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// readCall reads the request object at b[i] (which is '{'), or reports
// that the fast reader does not take it.
func readCall(b []byte, i int, q *request) (int, bool) {
	var seen [3]bool
	ok := true
	end := skipObject(b, i, 1, func(k, v []byte) bool {
		f := -1
		switch string(k) {
		case "jsonrpc":
			return true
		case "id":
			f, q.ID = 0, v
		case "method":
			if v[0] != '"' || !plainASCII(v[1:len(v)-1]) {
				return false
			}
			f, q.Method = 1, methodName(v[1:len(v)-1])
		case "params":
			if v[0] != '[' {
				return false
			}
			f = 2
			q.Params = q.Params[:0:0]
			skipArray(v, 0, 2, func(p []byte) { q.Params = append(q.Params, p) })
			if q.Params == nil {
				q.Params = []json.RawMessage{}
			}
		default:
			return false
		}
		if seen[f] {
			ok = false
		}
		seen[f] = true
		return ok
	})
	return end, end >= 0 && ok
}

// readFast reads a body as the fast reader takes it: one call, or a batch
// (the body starts with '[').
func readFast(b []byte) (qs []request, batch, ok bool) {
	if len(b) > 0 && b[0] == '[' {
		qs = []request{}
		i := skipSpace(b, 1)
		if i < len(b) && b[i] == ']' {
			return qs, true, skipSpace(b, i+1) == len(b)
		}
		for {
			if i >= len(b) || b[i] != '{' {
				return nil, true, false
			}
			qs = append(qs, request{})
			end, ok := readCall(b, i, &qs[len(qs)-1])
			if !ok {
				return nil, true, false
			}
			i = skipSpace(b, end)
			switch {
			case i < len(b) && b[i] == ',':
				i = skipSpace(b, i+1)
			case i < len(b) && b[i] == ']':
				return qs, true, skipSpace(b, i+1) == len(b)
			default:
				return nil, true, false
			}
		}
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false, false
	}
	qs = make([]request, 1)
	end, ok := readCall(b, i, &qs[0])
	return qs, false, ok && skipSpace(b, end) == len(b)
}

// readRequests reads a body's calls: by the fast reader, or else as
// jsonrpc.Handler reads them (encoding/json; an error is the body's 400).
func readRequests(b []byte) ([]request, bool, error) {
	if qs, batch, ok := readFast(b); ok {
		return qs, batch, nil
	}
	if len(b) > 0 && b[0] == '[' {
		var qs []request
		err := json.Unmarshal(b, &qs)
		return qs, true, err
	}
	var q request
	err := json.Unmarshal(b, &q)
	return []request{q}, false, err
}

// refuse answers a body that is not a request as jsonrpc.Handler does.
func refuse(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// filterParam is eth_getLogs' filter: read in place when its keys are
// the five a filter has, each once, exactly spelled, their values of the
// types they take; any other as encoding/json reads it (logFilter's
// UnmarshalJSON).
func filterParam(q request) (logFilter, *rpcError) {
	if len(q.Params) > 0 && q.Params[0][0] == '{' {
		if f, ok, err := readFilter(q.Params[0]); ok && err != nil {
			return f, invalidArgument(0)
		} else if ok {
			return f, nil
		}
	}
	var f logFilter
	e := paramsOf(q)(0, &f)
	return f, e
}

// readFilter reads a filter object; ok false leaves it to encoding/json,
// err is its refusal (a value its type does not read).
func readFilter(raw []byte) (f logFilter, ok bool, err error) {
	var seen [5]bool
	end := skipObject(raw, 0, 1, func(k, v []byte) bool {
		i := slices.Index(filterKeys, string(k))
		if i < 0 || seen[i] || !readFilterField(&f, i, v, &err) {
			return false
		}
		seen[i] = true
		return true
	})
	return f, end >= 0, err
}

var filterKeys = []string{"fromBlock", "toBlock", "blockHash", "address", "topics"}

// readFilterField reads field i's value into f (the first error kept in
// *err); false leaves the filter to encoding/json.
func readFilterField(f *logFilter, i int, v []byte, err *error) bool {
	keep := func(e error) {
		if *err == nil {
			*err = e
		}
	}
	null := string(v) == "null"
	switch i {
	case 0, 1:
		if !null {
			n := new(hexutil.Uint64)
			keep(n.UnmarshalJSON(v))
			if i == 0 {
				f.FromBlock = n
			} else {
				f.ToBlock = n
			}
		}
		return true
	case 2:
		if !null {
			f.BlockHash = new(common.Hash)
			keep(f.BlockHash.UnmarshalJSON(v))
		}
		return true
	case 3:
		return null || readStrings(v, func(s []byte) {
			var a common.Address
			keep(a.UnmarshalJSON(s))
			f.Address = append(f.Address, a)
		})
	}
	if null {
		return true
	}
	ok := v[0] == '['
	if ok {
		skipArray(v, 0, 2, func(t []byte) { ok = ok && readTopic(f, t, keep) })
	}
	return ok
}

// readStrings hands each string of v (one string, or an array of them)
// to each; false if v is neither.
func readStrings(v []byte, each func(s []byte)) bool {
	if v[0] == '"' {
		each(v)
		return true
	}
	ok := v[0] == '['
	if ok {
		skipArray(v, 0, 2, func(s []byte) {
			if s[0] != '"' {
				ok = false
			} else if ok {
				each(s)
			}
		})
	}
	return ok
}

// readTopic appends one position's topics (null, a hash or hashes).
func readTopic(f *logFilter, t []byte, keep func(error)) bool {
	if string(t) == "null" {
		f.Topics = append(f.Topics, nil)
		return true
	}
	set := []common.Hash{}
	if t[0] == '"' {
		set = nil
	}
	ok := readStrings(t, func(s []byte) {
		var h common.Hash
		keep(h.UnmarshalJSON(s))
		set = append(set, h)
	})
	f.Topics = append(f.Topics, set)
	return ok
}
