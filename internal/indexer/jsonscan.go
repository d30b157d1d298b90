package indexer

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// jscan reads one JSON text in place, without building a tree or copying
// what it skips: the node's answers are decoded straight from the HTTP
// body into the structs the indexer keeps (rpcdecode.go). It checks the
// grammar as encoding/json does (strings, escapes, numbers, literals,
// nesting up to encoding/json's depth), so an answer it takes is one
// go-ethereum's client would take, and reports the offset of what is not.
type jscan struct {
	b []byte
	i int
	// depth is the nesting of the value being read (bounded as
	// encoding/json bounds it, so a hostile answer cannot run the stack).
	depth int
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// jsonError is a malformed answer: what was wanted, and where.
type jsonSyntaxError struct {
	off  int
	what string
}

func (e *jsonSyntaxError) Error() string {
	return fmt.Sprintf("malformed JSON-RPC answer at byte %d: %s", e.off, e.what)
}

func (s *jscan) fail(what string) error { return &jsonSyntaxError{off: s.i, what: what} }

// ws skips white space and returns the next byte (0 at the end, or a
// NUL byte: end tells them apart).
func (s *jscan) ws() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// end reports whether only white space is left.
func (s *jscan) end() bool {
	s.ws()
	return s.i >= len(s.b)
}

// null reads a null if one is next.
func (s *jscan) null() (bool, error) {
	if s.ws() != 'n' {
		return false, nil
	}
	return true, s.literal("null")
}

func (s *jscan) literal(lit string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return s.fail("invalid literal")
	}
	s.i += len(lit)
	return nil
}

// str reads a string and returns its raw content (escapes not decoded)
// and whether it holds any.
func (s *jscan) str() (raw []byte, escaped bool, err error) {
	if s.ws() != '"' {
		return nil, false, s.fail("a string expected")
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return nil, false, err
			}
		case c < 0x20:
			return nil, false, s.fail("control character in string")
		default:
			s.i++
		}
	}
	return nil, false, s.fail("unterminated string")
}

// escape checks the escape at s.i (a backslash) and steps past it.
func (s *jscan) escape() error {
	if s.i+1 >= len(s.b) {
		return s.fail("unterminated string")
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return nil
	case 'u':
		if s.i+6 > len(s.b) {
			return s.fail("unterminated string")
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if nibble(h) < 0 {
				return s.fail("invalid \\u escape")
			}
		}
		s.i += 6
		return nil
	}
	return s.fail("invalid escape")
}

// unquote decodes a string's raw content that holds escapes.
func unquote(raw []byte) ([]byte, error) {
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	var out string
	if err := json.Unmarshal(q, &out); err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// skip reads any value, checking it.
func (s *jscan) skip() error {
	switch c := s.ws(); {
	case c == '{':
		return s.members(func([]byte) error { return s.skip() })
	case c == '[':
		return s.elems(s.skip)
	case c == '"':
		_, _, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return s.fail("a value expected")
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jscan) number() error {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return s.fail("invalid number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return s.fail("invalid number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.fail("invalid number")
		}
	}
	return nil
}

func (s *jscan) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// enter counts a level of nesting, refusing past maxDepth.
func (s *jscan) enter() error {
	if s.depth++; s.depth > maxDepth {
		return s.fail("nested too deep")
	}
	return nil
}

// members reads an object, calling member for each key (its decoded
// bytes) with s at the member's value, which member must read.
func (s *jscan) members(member func(key []byte) error) error {
	if s.ws() != '{' {
		return s.fail("an object expected")
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.i++
	if s.ws() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		key, esc, err := s.str()
		if err != nil {
			return err
		}
		if esc {
			if key, err = unquote(key); err != nil {
				return err
			}
		}
		if s.ws() != ':' {
			return s.fail("':' expected")
		}
		s.i++
		if err := member(key); err != nil {
			return err
		}
		switch s.ws() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("',' or '}' expected")
		}
	}
}

// elems reads an array, calling elem with s at each element, which elem
// must read.
func (s *jscan) elems(elem func() error) error {
	if s.ws() != '[' {
		return s.fail("an array expected")
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.i++
	if s.ws() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.ws() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("',' or ']' expected")
		}
	}
}

// span reads any value and returns its bytes.
func (s *jscan) span() ([]byte, error) {
	s.ws()
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

// field is the index of key among names, matched as encoding/json
// matches a struct's fields: exactly, else without regard to case.
func field(key []byte, names []string) int {
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	for i, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return i
		}
	}
	return -1
}

func nibble(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
