// Command bare is the load benchmark's floor: a gorilla/mux server that
// answers one GET path with fixed bytes, as the gateway answers a cache hit.
// With -headers it writes the response headers listed in the file too
// ("Name: value" lines, as curl -D prints them), so its answer is the
// gateway's byte for byte but for the values of Date and Age. With -direct
// it also writes a body of 4 KiB or more as the gateway does (headers
// flushed first, then the body in one write): the floor for the gateway's
// own per-request work, apart from how the bytes reach the socket. With
// -net it serves through a plain net/http handler instead of gorilla/mux
// (matching the path itself): the floor of bare net/http writing the same
// bytes.
//
//	bare -listen 127.0.0.1:18082 -path /clamm/strikes-chain -body body.json [-headers headers.txt] [-direct] [-net]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"

	"github.com/gorilla/mux"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18082", "listen address")
	path := flag.String("path", "/", "path to answer")
	bodyFile := flag.String("body", "", "file holding the response body")
	headerFile := flag.String("headers", "", `file of response headers to write ("Name: value" lines); default Content-Type: application/json`)
	direct := flag.Bool("direct", false, "write a body of 4 KiB or more as the gateway does: headers flushed and held, then sent with the body in one writev")
	pprofAddr := flag.String("pprof", "", "address for net/http/pprof (off when empty)")
	plain := flag.Bool("net", false, "serve through a plain net/http handler, not gorilla/mux")
	flag.Parse()
	if *pprofAddr != "" {
		m := http.NewServeMux()
		m.HandleFunc("/debug/pprof/profile", pprof.Profile)
		go func() { _ = http.ListenAndServe(*pprofAddr, m) }()
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	headers := []header{{"Content-Type", []string{"application/json"}}}
	if *headerFile != "" {
		if headers, err = readHeaders(*headerFile); err != nil {
			fmt.Fprintln(os.Stderr, "bare:", err)
			os.Exit(1)
		}
	}
	answer := func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, kv := range headers {
			h[kv.name] = kv.values
		}
		if *direct && len(body) >= 4<<10 {
			wc, _ := r.Context().Value(connKey{}).(*coalescingConn)
			wc.hold = true
			w.(http.Flusher).Flush()
			_, _ = w.Write(body)
			wc.flushHeld()
			return
		}
		_, _ = w.Write(body)
	}
	var handler http.Handler
	if *plain {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != *path || r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			answer(w, r)
		})
	} else {
		r := mux.NewRouter()
		r.HandleFunc(*path, answer).Methods(http.MethodGet)
		handler = r
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }}
	ln, err := net.Listen("tcp", *listen)
	if err == nil {
		err = srv.Serve(coalescingListener{ln})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}

// readHeaders reads "Name: value" lines, skipping the status line, blank
// lines and Date (net/http writes its own).
func readHeaders(file string) ([]header, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var h []header
	for _, line := range strings.Split(string(text), "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || strings.HasPrefix(name, "HTTP/") || strings.EqualFold(name, "Date") {
			continue
		}
		h = append(h, header{http.CanonicalHeaderKey(name), []string{strings.TrimSpace(value)}})
	}
	return h, nil
}

// header is one response header, set as the gateway sets its own: a
// direct map assignment of a shared value slice.
type header struct {
	name   string
	values []string
}

// coalescingListener gives connections that can hold one write back and
// send it with the next in one writev: the gateway's write pattern for a
// large hit (cmd/clamm-gateway, rawconn.go), written again here so the
// floor does not link the gateway.
type coalescingListener struct{ net.Listener }

func (l coalescingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &coalescingConn{Conn: c}, nil
}

type connKey struct{}

type coalescingConn struct {
	net.Conn
	hold, full bool
	held       []byte
	iov        [2][]byte
	bufs       net.Buffers
}

func (c *coalescingConn) Write(p []byte) (int, error) {
	if c.hold {
		c.hold, c.full = false, true
		c.held = append(c.held[:0], p...)
		return len(p), nil
	}
	if !c.full {
		return c.Conn.Write(p)
	}
	c.full = false
	c.iov[0], c.iov[1] = c.held, p
	c.bufs = c.iov[:]
	_, err := c.bufs.WriteTo(c.Conn)
	c.iov[1] = nil
	return len(p), err
}

func (c *coalescingConn) flushHeld() {
	c.hold = false
	if c.full {
		c.full = false
		_, _ = c.Conn.Write(c.held)
	}
}
