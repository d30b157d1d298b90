package gateway

import (
	"net/http"
)

// corsExposed are the response headers browsers may read.
var corsExposed = []string{"ETag, Age, X-Cache, X-Subgraph-Block, X-Request-Id, Retry-After"}

// varyOrigin is the Vary of every answer when CORS is configured.
var varyOrigin = []string{"Origin"}

// cors answers preflights and marks answers for allowed origins. With no
// origin configured, nothing is added: browsers then refuse cross-origin
// reads, which is the safe default. "*" allows every origin. With origins
// configured every answer says Vary: Origin, whether the request named
// one or not (RFC 9110 12.5.5: the answer differs by it, so a shared cache
// must not serve the one for no origin, or for one origin, to another).
func (s *Server) cors(w http.ResponseWriter, r *http.Request) (handled bool) {
	if len(s.opts.CORSOrigins) == 0 {
		return false
	}
	h := w.Header()
	h["Vary"] = varyOrigin
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	allowed := ""
	for _, o := range s.opts.CORSOrigins {
		if o == "*" || asciiEqualFold(o, origin) {
			allowed = o
			break
		}
	}
	if allowed == "" {
		return false
	}
	if allowed == "*" {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
	}
	h["Access-Control-Expose-Headers"] = corsExposed
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		// POST is the order book's (orders.go), whose JSON body makes
		// every browser POST preflighted: Content-Type is allowed for it.
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST")
		h.Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match, X-Request-Id")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}

// asciiEqualFold compares origins ignoring ASCII case only. An origin is
// ASCII (hosts travel in punycode); strings.EqualFold's Unicode folding
// would also take "\u017F" (long s) for "s" and echo those bytes back in
// Access-Control-Allow-Origin.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
