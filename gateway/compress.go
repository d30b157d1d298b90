package gateway

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// compressMin is the smallest answer sent gzipped to a client that accepts
// it: below about a packet, compression saves no round trip and costs the
// client a decoder. A documented constant rather than a setting.
const compressMin = 1400

// Header values of compressed answers, shared as the others are.
var (
	gzipEncoding             = []string{"gzip"}
	varyAcceptEncoding       = []string{"Accept-Encoding"}
	varyOriginAcceptEncoding = []string{"Origin", "Accept-Encoding"}
)

// varyWith is the Vary values vary plus Accept-Encoding: the shared
// slices for none and for CORS's Origin (no allocation on a hit), a new
// slice otherwise (the values given are never written to).
func varyWith(vary []string) []string {
	switch {
	case len(vary) == 0:
		return varyAcceptEncoding
	case len(vary) == 1 && vary[0] == "Origin":
		return varyOriginAcceptEncoding
	}
	return append(vary[:len(vary):len(vary)], "Accept-Encoding")
}

// gzipBody compresses an answer once, when it is filled: every hit then
// serves these bytes, never compressing again. Nil when the answer is
// below compressMin or does not shrink.
func gzipBody(body []byte) []byte {
	if len(body) < compressMin {
		return nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	_, _ = zw.Write(body)
	if zw.Close() != nil || buf.Len() >= len(body) {
		return nil
	}
	return buf.Bytes()
}

var errGzipMismatch = errors.New("gzip bytes do not decode to the body")

// checkGzip confirms that gz decodes to body exactly (a shared record's
// compressed bytes are not trusted more than its body).
func checkGzip(gz, body []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return err
	}
	got, err := io.ReadAll(io.LimitReader(zr, int64(len(body))+1))
	if err != nil || !bytes.Equal(got, body) {
		return errGzipMismatch
	}
	return nil
}

// gzipETag is the strong validator of an answer's gzip bytes: distinct
// from the identity one (RFC 9110 8.8.3: another representation), derived
// from it so both name the same content.
func gzipETag(etag string) string { return strings.TrimSuffix(etag, `"`) + `-gzip"` }

// acceptsGzip reads Accept-Encoding (RFC 9110 12.5.3): gzip (or x-gzip)
// listed without q=0; when neither is listed, * without q=0. A coding
// listed by name wins over *: "gzip;q=0, *" refuses gzip (it got gzip
// before). It allocates nothing: it runs on every hit of a compressible
// answer.
func acceptsGzip(values []string) bool {
	named, star := unlisted, unlisted
	for _, v := range values {
		// Fast path for what browsers and curl send ("gzip, deflate, br",
		// "deflate, gzip, br, zstd"): a bare gzip token, no parameters,
		// and no q=0 anywhere in the field that could name gzip again.
		if i := strings.Index(v, "gzip"); i >= 0 && (i == 0 || v[i-1] == ' ' || v[i-1] == ',') &&
			(i+4 == len(v) || v[i+4] == ',' || (v[i+4] == ' ' && !strings.Contains(v[i+4:min(len(v), i+8)], ";"))) &&
			!strings.Contains(v, "q=0") && !strings.Contains(v, "Q=0") {
			return true
		}
		for v != "" {
			var item string
			item, v, _ = strings.Cut(v, ",")
			coding, params, _ := strings.Cut(item, ";")
			coding = strings.TrimSpace(coding)
			switch {
			case strings.EqualFold(coding, "gzip") || strings.EqualFold(coding, "x-gzip"):
				named = named.with(!qZero(params))
			case coding == "*":
				star = star.with(!qZero(params))
			}
		}
	}
	if named != unlisted {
		return named == accepted
	}
	return star == accepted
}

// listing is what an Accept-Encoding field says of one coding.
type listing uint8

const (
	unlisted listing = iota
	refused          // listed, every time with q=0
	accepted         // listed at least once with a q above 0
)

// with is l after one more listing, acceptable or not.
func (l listing) with(ok bool) listing {
	if ok || l == accepted {
		return accepted
	}
	return refused
}

// qZero reports a q parameter of zero ("q=0", "q=0.0", "q=0.000").
func qZero(params string) bool {
	p := strings.TrimSpace(params)
	if len(p) < 3 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' {
		return false
	}
	for _, c := range p[2:] {
		if c != '0' && c != '.' && c != ' ' {
			return false
		}
	}
	return true
}
