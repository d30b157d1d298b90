package systemtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// A shown body is an answer body as a page prints it: JSON, abridged.
// Its elisions are marked: `...` or `…` in an object stands for fields
// left out, in an array for elements left out, `{...}` or `{…a comment…}`
// for an object not shown, and `…` inside a string for characters left
// out (`"0x3a8e…c37c"`: begins with 0x3a8e, ends with c37c). Everything
// else is a field or value the answer must hold exactly: an object
// without an elision mark has exactly the fields shown, an array without
// one exactly the elements shown.
type shown struct {
	kind   byte // '{', '[', '"' (string), '#' (number, true, false, null as written), '*' (anything)
	text   string
	keys   []string
	fields map[string]*shown
	elems  []*shown
	more   bool // an elision mark among the fields or elements
}

// shownParser reads a shown body.
type shownParser struct {
	s   string
	pos int
}

func parseShown(s string) (*shown, error) {
	p := &shownParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, fmt.Errorf("text after the body at %d: %q", p.pos, p.rest(20))
	}
	return v, nil
}

func (p *shownParser) rest(n int) string {
	r := p.s[p.pos:]
	if len(r) > n {
		r = r[:n]
	}
	return r
}

func (p *shownParser) space() {
	for p.pos < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.pos])) {
		p.pos++
	}
}

// elision consumes an elision mark: `...` or `…`, alone, followed by
// words saying what is left out (`{… WETH}`, up to the next `,`, `}` or
// `]`), or around them (`{…the quote above, read from the buyer…}`,
// which may hold commas).
func (p *shownParser) elision() bool {
	switch {
	case strings.HasPrefix(p.s[p.pos:], "..."):
		p.pos += 3
	case strings.HasPrefix(p.s[p.pos:], "…"):
		p.pos += len("…")
		if p.pos < len(p.s) && !strings.ContainsRune(" ,}]\n", rune(p.s[p.pos])) {
			if end := strings.Index(p.s[p.pos:], "…"); end >= 0 {
				p.pos += end + len("…")
				return true
			}
		}
	default:
		return false
	}
	p.space()
	if p.pos < len(p.s) && !strings.ContainsRune("\",}]", rune(p.s[p.pos])) {
		for p.pos < len(p.s) && !strings.ContainsRune(",}]", rune(p.s[p.pos])) {
			p.pos++
		}
	}
	return true
}

func (p *shownParser) value() (*shown, error) {
	p.space()
	if p.pos >= len(p.s) {
		return nil, fmt.Errorf("body ends early")
	}
	switch c := p.s[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return &shown{kind: '"', text: s}, err
	default:
		start := p.pos
		for p.pos < len(p.s) && !strings.ContainsRune(" \t\n,}]", rune(p.s[p.pos])) {
			p.pos++
		}
		if start == p.pos {
			return nil, fmt.Errorf("no value at %d: %q", start, p.rest(20))
		}
		return &shown{kind: '#', text: p.s[start:p.pos]}, nil
	}
}

// str reads a string as written (escapes kept but for \" and \\).
func (p *shownParser) str() (string, error) {
	var b strings.Builder
	p.pos++
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch c {
		case '"':
			p.pos++
			return b.String(), nil
		case '\\':
			if p.pos+1 < len(p.s) {
				p.pos++
				b.WriteByte(p.s[p.pos])
				p.pos++
				continue
			}
		}
		b.WriteByte(c)
		p.pos++
	}
	return "", fmt.Errorf("unterminated string")
}

func (p *shownParser) object() (*shown, error) {
	o := &shown{kind: '{', fields: map[string]*shown{}}
	p.pos++
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			if len(o.keys) == 0 && o.more {
				return &shown{kind: '*'}, nil // {...}: an object not shown
			}
			return o, nil
		}
		if p.elision() {
			o.more = true
		} else {
			if p.pos >= len(p.s) || p.s[p.pos] != '"' {
				return nil, fmt.Errorf("object: a key expected at %d: %q", p.pos, p.rest(20))
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return nil, fmt.Errorf("object: ':' expected after %q", k)
			}
			p.pos++
			v, err := p.value()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			o.keys = append(o.keys, k)
			o.fields[k] = v
		}
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
		}
	}
}

func (p *shownParser) array() (*shown, error) {
	a := &shown{kind: '['}
	p.pos++
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ']' {
			p.pos++
			return a, nil
		}
		if p.pos >= len(p.s) {
			return nil, fmt.Errorf("unterminated array")
		}
		if p.elision() {
			a.more = true
		} else {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, v)
		}
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
		}
	}
}

// mismatch says where the answer v differs from the shown body s ("" when
// it holds everything shown). An object shown against an array answer is
// one of its elements (a page shows one record of a list).
func (s *shown) mismatch(v any, path string) string {
	switch s.kind {
	case '*':
		return ""
	case '{':
		if list, ok := v.([]any); ok {
			for _, e := range list {
				if s.mismatch(e, path) == "" {
					return ""
				}
			}
			return path + ": no element of the answer's list is the object shown"
		}
		o, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: shown an object, the answer has %s", path, brief(v))
		}
		for _, k := range s.keys {
			got, ok := o[k]
			if !ok {
				return fmt.Sprintf("%s.%s: shown, not in the answer", path, k)
			}
			if m := s.fields[k].mismatch(got, path+"."+k); m != "" {
				return m
			}
		}
		if !s.more && len(o) != len(s.keys) {
			for k := range o {
				if s.fields[k] == nil {
					return fmt.Sprintf("%s.%s: in the answer, not shown (mark the elision with ...)", path, k)
				}
			}
		}
		return ""
	case '[':
		list, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("%s: shown a list, the answer has %s", path, brief(v))
		}
		if !s.more && len(list) != len(s.elems) {
			return fmt.Sprintf("%s: %d elements shown, %d in the answer (mark the elision with ...)", path, len(s.elems), len(list))
		}
		// The shown elements are elements of the answer, in its order.
		next := 0
		for i, e := range s.elems {
			found := false
			for ; next < len(list); next++ {
				if e.mismatch(list[next], "") == "" {
					found, next = true, next+1
					break
				}
			}
			if !found {
				if len(list) > i && !s.more {
					return e.mismatch(list[i], fmt.Sprintf("%s[%d]", path, i))
				}
				return fmt.Sprintf("%s: shown element %d is not in the answer (in order)", path, i)
			}
		}
		return ""
	case '"':
		got, ok := v.(string)
		if !ok {
			return fmt.Sprintf("%s: shown %q, the answer has %s", path, s.text, brief(v))
		}
		if !elidedMatch(s.text, got) {
			return fmt.Sprintf("%s: shown %q, the answer has %q", path, s.text, got)
		}
		return ""
	default:
		got := brief(v)
		if got != s.text {
			return fmt.Sprintf("%s: shown %s, the answer has %s", path, s.text, got)
		}
		return ""
	}
}

// elidedMatch matches a shown string, whose `…` or `...` stand for
// characters left out, against the answer's.
func elidedMatch(shownText, got string) bool {
	parts := strings.Split(strings.ReplaceAll(shownText, "...", "…"), "…")
	if len(parts) == 1 {
		return shownText == got
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	rest := got[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, mid)
		if i < 0 {
			return false
		}
		rest = rest[i+len(mid):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

// brief is a value of the answer as JSON text.
func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// shownBody is one body a page prints, with the requests it answers: the
// curl examples printed last before it in the same section.
type shownBody struct {
	page string
	line int
	text string
	reqs []example
}

// shownBodies finds the bodies of the README and docs/: indented blocks
// opening with `{` or `[`.
func shownBodies(t *testing.T) []shownBody {
	t.Helper()
	var out []shownBody
	for _, page := range userDocs(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		var reqs []example
		lastCurl := false
		for i := 0; i < len(lines); i++ {
			l := strings.TrimSpace(lines[i])
			switch {
			case strings.HasPrefix(lines[i], "#"):
				reqs, lastCurl = nil, false
			case strings.HasPrefix(l, "curl ") && strings.HasPrefix(lines[i], "    "):
				ex, ok := parseExample(page, l)
				if !ok {
					continue
				}
				if !lastCurl {
					reqs = nil
				}
				reqs, lastCurl = append(reqs, ex), true
			case (strings.HasPrefix(l, "{") || strings.HasPrefix(l, "[")) && strings.HasPrefix(lines[i], "    ") && (i == 0 || strings.TrimSpace(lines[i-1]) == ""):
				start := i
				var b strings.Builder
				for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.HasPrefix(lines[i], "  "); i++ {
					b.WriteString(lines[i] + "\n")
				}
				out = append(out, shownBody{page: page, line: start + 1, text: b.String(), reqs: reqs})
				lastCurl = false
			case l != "":
				lastCurl = false
			}
		}
	}
	return out
}

// Every answer body the README and docs/ show is the demo's answer to the
// request shown before it: each field and value shown is in the answer,
// and what is left out is marked as such (shown above). A body the demo
// does not answer, or with no request before it, fails.
func TestDocBodiesAreTheDemosAnswers(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	bodies := shownBodies(t)
	if len(bodies) < 15 {
		t.Fatalf("only %d bodies found: is the pages' format still the one this test reads?", len(bodies))
	}
	for _, b := range bodies {
		where := fmt.Sprintf("%s:%d", strings.TrimPrefix(b.page, root+"/"), b.line)
		s, err := parseShown(b.text)
		if err != nil {
			t.Errorf("%s: the shown body does not parse: %v", where, err)
			continue
		}
		if len(b.reqs) == 0 {
			t.Errorf("%s: a body with no request before it in its section", where)
			continue
		}
		// The request right above the body: a reader runs the curl just
		// before what it shows (four bodies once answered the first curl
		// of their group, not the one above them).
		var why []string
		for _, ex := range b.reqs[len(b.reqs)-1:] {
			rec := get(t, srv, strings.TrimPrefix(ex.url, "localhost:8080"))
			dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				why = append(why, fmt.Sprintf("%s: %d, not JSON", ex.url, rec.Code))
				continue
			}
			m := s.mismatch(numbersAsText(v), "$")
			if m == "" && rec.Code == ex.status {
				why = nil
				break
			}
			if m == "" {
				m = fmt.Sprintf("status %d, shown %d", rec.Code, ex.status)
			}
			why = append(why, fmt.Sprintf("%s\n    %s", ex.url, m))
		}
		if why != nil {
			t.Errorf("%s: the body shown is not the demo's answer to the request right above it:\n  %s", where, strings.Join(why, "\n  "))
		}
	}
}

// numbersAsText turns the answer's numbers into their JSON text, which a
// shown number must equal.
func numbersAsText(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbersAsText(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersAsText(e)
		}
	case json.Number:
		return numText(x.String())
	case bool, nil:
		b, _ := json.Marshal(x)
		return numText(b)
	}
	return v
}

// numText is a number, boolean or null of the answer as written.
type numText string

func (n numText) MarshalJSON() ([]byte, error) { return []byte(n), nil }
