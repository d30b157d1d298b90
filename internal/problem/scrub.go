package problem

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxCauseLen bounds an upstream's error text kept for the log: a node or a
// subgraph may answer a 20 MB error body, and one request must not write a
// 20 MB log line.
const MaxCauseLen = 512

// urlLike matches anything an upstream may echo that can carry a key: a URL
// (scheme://...) up to the next blank or quote, and long runs of key-like
// characters (API keys are 32+ letters and digits; hex data of a revert is
// kept by the callers that need it, not in the log text).
var urlLike = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]*|[A-Za-z0-9_-]{32,}`)

// Scrub makes an upstream's error text fit for a log line: URLs and long
// key-like tokens are replaced by a placeholder, and the text is cut to
// MaxCauseLen bytes (on a rune boundary) with a note of what was dropped.
func Scrub(s string) string {
	cut := 0
	if len(s) > 4*MaxCauseLen { // do not run the pattern over megabytes
		cut, s = len(s)-4*MaxCauseLen, s[:4*MaxCauseLen]
	}
	s = urlLike.ReplaceAllStringFunc(s, func(m string) string {
		if isHexWord(m) { // addresses, hashes, revert data: kept for diagnosis
			return m
		}
		return "<redacted>"
	})
	if len(s) > MaxCauseLen {
		cut += len(s) - MaxCauseLen
		s = s[:MaxCauseLen]
	}
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
		cut++
	}
	if cut > 0 {
		var b strings.Builder
		b.WriteString(s)
		b.WriteString("... (")
		b.WriteString(itoa(cut))
		b.WriteString(" more bytes)")
		return b.String()
	}
	return s
}

// isHexWord reports whether m is 0x and hex digits (an address or a hash).
func isHexWord(m string) bool {
	if len(m) < 3 || m[0] != '0' || (m[1] != 'x' && m[1] != 'X') {
		return false
	}
	for _, c := range m[2:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// Cause keeps an upstream's error for the log as scrubbed, bounded text
// while errors.Is and errors.As still reach the original.
type Cause struct {
	Text string
	Err  error
}

// NewCause wraps err with its scrubbed text.
func NewCause(err error) *Cause { return &Cause{Text: Scrub(err.Error()), Err: err} }

func (c *Cause) Error() string { return c.Text }
func (c *Cause) Unwrap() error { return c.Err }
