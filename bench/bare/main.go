// Command bare is the load benchmark's floor: a gorilla/mux server that
// answers one GET path with fixed bytes, as the gateway answers a cache hit.
//
//	bare -listen 127.0.0.1:18082 -path /clamm/strikes-chain -body body.json
package main

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/gorilla/mux"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18082", "listen address")
	path := flag.String("path", "/", "path to answer")
	bodyFile := flag.String("body", "", "file holding the response body")
	pprofAddr := flag.String("pprof", "", "address for net/http/pprof (off when empty)")
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
	r := mux.NewRouter()
	r.HandleFunc(*path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}).Methods(http.MethodGet)
	srv := &http.Server{Addr: *listen, Handler: r, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}
