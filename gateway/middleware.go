package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

type ctxKey struct{}

// requestInfo is filled in as a request travels and logged once at the end.
type requestInfo struct {
	id     string
	route  string
	cache  string
	status int
	err    error
}

func requestInfoFrom(ctx context.Context) *requestInfo {
	if ri, ok := ctx.Value(ctxKey{}).(*requestInfo); ok {
		return ri
	}
	return &requestInfo{}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// middleware wraps the whole router (mux's own Use skips 404 and 405):
// request id, deadline, recover, and one access-log line per request.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{id: requestID(r), route: "unmatched"}
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), ctxKey{}, info), s.opts.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		sw.Header().Set("X-Request-Id", info.id)
		defer func() {
			if p := recover(); p != nil {
				info.err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				if sw.status == 0 {
					s.writeError(sw, r, problem.New(problem.Internal, "INTERNAL", "internal error"))
				}
			}
			s.logRequest(r, info, sw.status, time.Since(start))
		}()
		next.ServeHTTP(sw, r)
	})
}

// route tags the request with its route template for logs and metrics:
// never the raw path, which holds user input.
func (s *Server) route(template string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requestInfoFrom(r.Context()).route = template
		h(w, r)
	})
}

func (s *Server) logRequest(r *http.Request, info *requestInfo, status int, d time.Duration) {
	attrs := []slog.Attr{
		slog.String("id", info.id),
		slog.String("method", r.Method),
		slog.String("route", info.route),
		slog.Int("status", status),
		slog.Duration("latency", d),
	}
	if info.cache != "" {
		attrs = append(attrs, slog.String("cache", info.cache))
	}
	level := slog.LevelInfo
	if info.err != nil {
		// Transport errors quote the upstream URL, which may hold an API
		// key: the text goes through Redact before it reaches the log.
		attrs = append(attrs, slog.String("error", s.opts.Redact(info.err.Error())))
		if status >= 500 {
			level = slog.LevelWarn
		}
	}
	s.opts.Logger.LogAttrs(r.Context(), level, "request", attrs...)
}

func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 && isToken(id) {
		return id
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func isToken(s string) bool {
	for _, c := range s {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
