package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// net/http answers some requests itself, on the raw connection, before any
// handler exists for them: a request line it cannot parse, an HTTP version
// it does not speak, a missing or malformed Host, header fields past
// MaxHeaderBytes, an unsupported Transfer-Encoding. Each is one write of
// the form "HTTP/1.1 <code> <text>[: <reason>]" + rawErrorHeaders + a text
// body (net/http server.go, conn.serve). jsonErrorListener recognises
// exactly that signature and rewrites it into the gateway's JSON error
// shape, so every answer the process writes has one shape. Every other
// write passes through after a prefix compare that fails on the first
// bytes ("HTTP/1.1 200 OK\r\nCache-Control..." differs from rawErrorHeaders
// right after the status line).
const rawErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// refused is told of each answer rewritten (the gateway's access log and
// metrics: gateway.Server.LogRefused); nil tells no one.
type jsonErrorListener struct {
	net.Listener
	refused func(status int, code *problem.Code, msg string)
}

func (l jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorConn{Conn: c, refused: l.refused}, nil
}

// jsonErrorConn rewrites net/http's own text answers (above) and
// coalesces a large hit's header block with its body
// (gateway.WriteCoalescer). Only the goroutine serving the connection
// writes to it (net/http serves one request of a connection at a time and
// writes from the handler's goroutine), so its state needs no lock.
type jsonErrorConn struct {
	net.Conn
	refused func(status int, code *problem.Code, msg string)

	hold  hold
	held  []byte // the header block held back, reused across responses
	extra []byte // header lines to add to it (AddHeader)
	iov   [2][]byte
	bufs  net.Buffers // points into iov: writev without an allocation
}

// hold is where a coalesced write stands.
type hold uint8

const (
	holdNone  hold = iota
	holdArmed      // writes are held back until the header block is whole
	holdFull       // held holds it; the next write takes it along
)

var _ gateway.WriteCoalescer = (*jsonErrorConn)(nil)

// HoldNextWrite implements gateway.WriteCoalescer.
func (c *jsonErrorConn) HoldNextWrite() {
	if c.hold == holdNone {
		c.hold = holdArmed
		c.held, c.extra = c.held[:0], c.extra[:0]
	}
}

// AddHeader implements gateway.WriteCoalescer.
func (c *jsonErrorConn) AddHeader(name, value string) {
	if c.hold != holdArmed || hasLineBreak(name) || strings.IndexByte(name, ':') >= 0 || hasLineBreak(value) {
		return
	}
	c.extra = append(append(append(append(c.extra, name...), ": "...), value...), "\r\n"...)
}

// hasLineBreak reports a CR or LF in s (IndexByte, not ContainsAny: this
// runs for every header line of every large hit).
func hasLineBreak(s string) bool {
	return strings.IndexByte(s, '\r') >= 0 || strings.IndexByte(s, '\n') >= 0
}

// errNotAHeaderBlock fails a held write with added lines that is not (part
// of) a header block: there is nowhere to put them.
var errNotAHeaderBlock = errors.New("held write is not a header block ending in a blank line")

// maxHeldBlock bounds a header block gathered from several writes: net/http
// writes one through its 4 KiB connection buffer, so a block past that
// arrives in pieces; the gateway's own are a few hundred bytes.
const maxHeldBlock = 64 << 10

// holdWrite keeps p back and reports whether what is held is complete.
// Without added lines that is the one write, as before. With them it is
// a whole header block: pieces are gathered until the blank line that
// ends it, and the lines go in before that line.
func (c *jsonErrorConn) holdWrite(p []byte) (bool, error) {
	c.held = append(c.held, p...)
	if len(c.extra) == 0 {
		return true, nil
	}
	if !bytes.HasPrefix(c.held, httpVersion) || len(c.held) > maxHeldBlock {
		return false, errNotAHeaderBlock
	}
	if !bytes.HasSuffix(c.held, crlfcrlf) {
		return false, nil
	}
	c.held = append(append(c.held[:len(c.held)-2], c.extra...), crlfcrlf[2:]...)
	return true, nil
}

var (
	crlfcrlf    = []byte("\r\n\r\n")
	httpVersion = []byte("HTTP/")
)

// FlushHeld implements gateway.WriteCoalescer.
func (c *jsonErrorConn) FlushHeld() error {
	state := c.hold
	c.hold = holdNone
	if state == holdNone || len(c.held) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.held)
	return err
}

func (c *jsonErrorConn) Write(p []byte) (int, error) {
	switch c.hold {
	case holdArmed:
		whole, err := c.holdWrite(p)
		if err != nil {
			c.hold = holdNone
			return 0, err
		}
		if whole {
			c.hold = holdFull
		}
		return len(p), nil
	case holdFull:
		c.hold = holdNone
		return c.writeWithHeld(p)
	}
	// Only a status line of 4xx or 5xx can be net/http's own answer:
	// everything else (every hit, every body) passes on one compare.
	if len(p) > 12 && p[0] == 'H' && p[9] >= '4' {
		if a, ok := rewriteRawError(p); ok {
			if c.refused != nil {
				c.refused(a.status, a.code, a.msg)
			}
			if _, err := c.Conn.Write(a.out); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return c.Conn.Write(p)
}

// CloseWrite half-closes the connection when the one underneath can
// (net/http's closeWriteAndWait, after an answer it closes on): wrapped,
// the TCP connection's method would be hidden.
func (c *jsonErrorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writeWithHeld sends the held bytes and p in one writev (net.Buffers on a
// TCP connection) and reports how much of p went out.
func (c *jsonErrorConn) writeWithHeld(p []byte) (int, error) {
	c.iov[0], c.iov[1] = c.held, p
	c.bufs = c.iov[:]
	n, err := c.bufs.WriteTo(c.Conn)
	c.iov[1] = nil // p is the caller's
	n -= int64(len(c.held))
	return int(max(0, min(n, int64(len(p))))), err
}

// rawAnswer is a rewritten answer and what it says.
type rawAnswer struct {
	out    []byte
	status int
	code   *problem.Code
	msg    string
}

// expectationFailed is how net/http answers an Expect other than
// 100-continue, before any handler (server.go, sendExpectationFailed): an
// empty 417 through the ordinary response writer. No handler of the
// gateway answers 417, so the status line alone is its signature.
const expectationFailed = "HTTP/1.1 417 Expectation Failed\r\n"

// rewriteRawError returns the JSON answer for one of net/http's own text
// error answers, and false for anything else.
func rewriteRawError(p []byte) (rawAnswer, bool) {
	const proto = "HTTP/1.1 "
	if bytes.HasPrefix(p, []byte(expectationFailed)) && bytes.HasSuffix(p, []byte("\r\nContent-Length: 0\r\n\r\n")) {
		return jsonAnswer(http.StatusExpectationFailed, "Expectation Failed", problem.MalformedRequest,
			"the Expect header asks for something other than 100-continue"), true
	}
	if len(p) < len(proto)+3+len(rawErrorHeaders) || string(p[:len(proto)]) != proto {
		return rawAnswer{}, false
	}
	end := bytes.Index(p, []byte("\r\n"))
	if end < 0 || !bytes.HasPrefix(p[end:], []byte(rawErrorHeaders)) {
		return rawAnswer{}, false
	}
	statusLine := string(p[len(proto):end]) // "400 Bad Request: missing required Host header"
	status, err := strconv.Atoi(statusLine[:3])
	if err != nil || status < 400 || status > 599 {
		return rawAnswer{}, false
	}
	code, msg := problem.MalformedRequest, "the request is not HTTP/1.x the gateway can parse"
	if status == 431 {
		code, msg = problem.HeadersTooLarge, "request header fields over the server's limit"
	}
	if _, reason, ok := bytes.Cut([]byte(statusLine), []byte(": ")); ok {
		msg = string(reason) // net/http's own constant texts, never client bytes
	} else if status == 501 {
		msg = "unsupported transfer encoding"
	}
	text := ""
	if i := strings.IndexByte(statusLine, ':'); i > 4 {
		text = statusLine[4:i]
	} else if len(statusLine) > 4 {
		text = statusLine[4:]
	}
	return jsonAnswer(status, text, code, msg), true
}

// jsonAnswer is a whole HTTP/1.1 answer in the gateway's error shape,
// closing the connection as net/http's own answers do.
func jsonAnswer(status int, text string, code *problem.Code, msg string) rawAnswer {
	type detail struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		Error detail `json:"error"`
	}{detail{code.Name(), msg}})
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 ")
	b.WriteString(strconv.Itoa(status))
	b.WriteByte(' ')
	b.WriteString(text)
	b.WriteString("\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(body)))
	b.WriteString("\r\nConnection: close\r\n\r\n")
	b.Write(body)
	return rawAnswer{out: b.Bytes(), status: status, code: code, msg: msg}
}
