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
	gzipEncoding       = []string{"gzip"}
	varyAcceptEncoding = []string{"Accept-Encoding"}
)

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

// acceptsGzip reads Accept-Encoding (RFC 9110 12.5.3): gzip (or x-gzip, or
// *) listed without q=0. It allocates nothing: it runs on every hit of a
// compressible answer.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		// Fast path for what browsers and curl send ("gzip, deflate, br",
		// "deflate, gzip, br, zstd"): a bare gzip token, no parameters.
		if i := strings.Index(v, "gzip"); i >= 0 && (i == 0 || v[i-1] == ' ' || v[i-1] == ',') &&
			(i+4 == len(v) || v[i+4] == ',' || (v[i+4] == ' ' && !strings.Contains(v[i+4:min(len(v), i+8)], ";"))) {
			return true
		}
		for v != "" {
			var item string
			item, v, _ = strings.Cut(v, ",")
			coding, params, _ := strings.Cut(item, ";")
			coding = strings.TrimSpace(coding)
			if !strings.EqualFold(coding, "gzip") && !strings.EqualFold(coding, "x-gzip") && coding != "*" {
				continue
			}
			if !qZero(params) {
				return true
			}
		}
	}
	return false
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
