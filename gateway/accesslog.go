package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// accessLog writes one JSON line per request, in the shape slog's JSON
// handler writes ({"time","level","msg", then fields}), formatted by hand:
// through slog it cost a tenth of a cache hit's throughput. It is the only
// writer of access lines; other logs go through slog.
type accessLog struct {
	w io.Writer // expected to buffer (cmd/clamm-gateway's logWriter)
}

// LineAppender is a buffered log writer that lets a line be formatted
// straight into its buffer (cmd/clamm-gateway's logWriter): no
// intermediate buffer and no copy per line.
type LineAppender interface {
	AppendLine(LogLine)
}

// LogLine is a line that formats itself onto a buffer. The request's
// exchange is one: passing a pointer it already has allocates nothing,
// where a closure over the line's fields would, per request.
type LogLine interface {
	AppendLogLine(buf []byte) []byte
}

var logBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func (a accessLog) write(r *http.Request, x *exchange, start time.Time, d time.Duration) {
	x.method, x.start, x.latency = r.Method, start, d
	if la, ok := a.w.(LineAppender); ok {
		la.AppendLine(x)
		return
	}
	bp := logBufs.Get().(*[]byte)
	b := x.AppendLogLine((*bp)[:0])
	_, _ = a.w.Write(b)
	*bp = b
	logBufs.Put(bp)
}

// AppendLogLine appends the request's access-log line, newline included.
func (x *exchange) AppendLogLine(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = appendRFC3339Nano(b, x.start)
	b = append(b, `","level":"`...)
	b = append(b, x.level().String()...)
	b = append(b, `","msg":"request","id":`...)
	if x.id != "" {
		b = appendJSONString(b, x.id)
	} else { // prefix and digits: nothing to escape
		b = append(x.appendID(append(b, '"')), '"')
	}
	b = append(b, `,"method":`...)
	b = appendJSONString(b, x.method)
	b = append(b, `,"route":`...)
	b = appendJSONString(b, x.route)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(x.status), 10)
	b = append(b, `,"latency":`...)
	b = strconv.AppendInt(b, int64(x.latency), 10)
	if x.cache != "" {
		b = append(b, `,"cache":`...)
		b = appendJSONString(b, x.cache)
	}
	if x.errText != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, x.errText)
	}
	return append(b, "}\n"...)
}

// appendJSONString appends s as a JSON string; the common case (plain
// ASCII, nothing to escape) copies bytes, anything else goes through
// encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// stamp is one second's "2006-01-02T15:04:05" text, formatted once for the
// thousands of lines written in that second: a full AppendFormat per line
// was a third of the access log's cost.
type stamp struct {
	unix int64
	text string
}

var lastStamp atomic.Pointer[stamp]

// appendRFC3339Nano appends t in UTC as time.RFC3339Nano does (fraction
// without trailing zeros, none at all on a whole second).
func appendRFC3339Nano(b []byte, t time.Time) []byte {
	t = t.UTC()
	st := lastStamp.Load()
	if sec := t.Unix(); st == nil || st.unix != sec {
		st = &stamp{unix: sec, text: t.Format("2006-01-02T15:04:05")}
		lastStamp.Store(st)
	}
	b = append(b, st.text...)
	if ns := t.Nanosecond(); ns != 0 {
		var f [10]byte
		f[0] = '.'
		for i := 9; i > 0; i-- {
			f[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(f)
		for f[n-1] == '0' {
			n--
		}
		b = append(b, f[:n]...)
	}
	return append(b, 'Z')
}
