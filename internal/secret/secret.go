// Package secret is the one room where secrets leave text: every log line,
// error text kept for a log, trace attribute and readiness answer that may
// quote an upstream goes through it. Upstream URLs carry API keys (in the
// path, the query or the user info), and upstreams echo them, or whole
// URLs, back in their errors; net/http quotes the URL it failed on.
//
//   - URL prints a configured URL as its scheme and host only.
//   - Scrub makes any upstream's error text fit for a log: URLs and long
//     key-like tokens replaced, the text bounded.
//   - A Redactor, built from the configured URLs, also finds their secret
//     parts wherever they appear (a short key escapes Scrub's tokens), and
//     Text applies both.
//
// Nothing else in the gateway decides what is secret.
package secret

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Placeholder replaces what is taken out.
const Placeholder = "<redacted>"

// URL keeps only the scheme and host of an upstream URL: providers put API
// keys in the path (…/v2/<key>), the query or the user info, so nothing
// after the host is safe to print.
func URL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Placeholder
	}
	out := u.Scheme + "://" + u.Host
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		out += "/…"
	}
	return out
}

// MaxTextLen bounds an upstream's error text kept for the log: a node or a
// subgraph may answer a 20 MB error body, and one request must not write a
// 20 MB log line.
const MaxTextLen = 512

// urlLike matches anything an upstream may echo that can carry a key: a URL
// (scheme://...) up to the next blank or quote, and long runs of key-like
// characters (API keys are 32+ letters and digits; hex data of a revert is
// kept by the callers that need it, not in the log text).
var urlLike = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]*|[A-Za-z0-9_-]{32,}`)

// Scrub makes an upstream's error text fit for a log line: URLs and long
// key-like tokens are replaced by the placeholder, and the text is cut to
// MaxTextLen bytes (on a rune boundary) with a note of what was dropped.
func Scrub(s string) string {
	cut := 0
	if len(s) > 4*MaxTextLen { // do not run the pattern over megabytes
		cut, s = len(s)-4*MaxTextLen, s[:4*MaxTextLen]
	}
	s = urlLike.ReplaceAllStringFunc(s, func(m string) string {
		if isHexWord(m) { // addresses, hashes, revert data: kept for diagnosis
			return m
		}
		return Placeholder
	})
	if len(s) > MaxTextLen {
		cut += len(s) - MaxTextLen
		s = s[:MaxTextLen]
	}
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
		cut++
	}
	if cut > 0 {
		return s + "... (" + strconv.Itoa(cut) + " more bytes)"
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

// Redactor takes the configured upstream URLs, and each of their secret
// parts, out of text. The zero value and nil know no URL.
type Redactor struct {
	r *strings.Replacer
}

// NewRedactor knows the given configured URLs ("" skipped): each URL,
// whole and as net/http quotes it (password masked), becomes its URL form,
// and each secret part (password, path segments, query values, as written
// and escaped) the placeholder, wherever it appears: an upstream may echo
// its path or key back in an error ("/v2/KEY?apikey=KEY").
func NewRedactor(urls ...string) *Redactor {
	var pairs []string
	for _, u := range urls {
		if u == "" {
			continue
		}
		pairs = append(pairs, u, URL(u))
		if p, err := url.Parse(u); err == nil && p.Redacted() != u {
			pairs = append(pairs, p.Redacted(), URL(u))
		}
	}
	for _, u := range urls {
		for _, part := range secretParts(u) {
			pairs = append(pairs, part, Placeholder)
		}
	}
	return &Redactor{r: strings.NewReplacer(pairs...)}
}

// Known takes the configured URLs and their parts out of s and keeps the
// rest whole: for the gateway's own text (a panic's stack), which Scrub
// would cut.
func (r *Redactor) Known(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Text is Known, then Scrub: for any text an upstream may have written.
func (r *Redactor) Text(s string) string { return Scrub(r.Known(s)) }

// minSecretPart is the shortest path segment or query value taken for a
// secret: shorter ones ("v2", "api", "1") are words of ordinary log text.
// Passwords are secrets at any length over 2.
const minSecretPart = 6

// isWord reports a path segment or value of lowercase letters and hyphens
// only ("subgraphs", "arb-mainnet"): a word of the API's path, not a key
// (keys carry digits or capitals), and one that log text uses.
func isWord(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '-' {
			return false
		}
	}
	return true
}

// secretParts are the parts of a configured URL that may be credentials:
// its password, path segments and query values (as written and as
// escaped), longest first so a part is never cut by a shorter one.
func secretParts(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var parts []string
	add := func(s string, min int) {
		if len(s) >= min && (min < minSecretPart || !isWord(s)) {
			parts = append(parts, s, url.PathEscape(s), url.QueryEscape(s))
		}
	}
	if u.User != nil {
		// A user name ("default", "cache") is a word of log text, not a secret.
		if pw, ok := u.User.Password(); ok {
			add(pw, 3)
		}
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		add(seg, minSecretPart)
		if v, err := url.PathUnescape(seg); err == nil {
			add(v, minSecretPart)
		}
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, v, _ := strings.Cut(kv, "=")
		add(v, minSecretPart)
		if v, err := url.QueryUnescape(v); err == nil {
			add(v, minSecretPart)
		}
	}
	slices.SortFunc(parts, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(parts)
}
