package main

import (
	"net/http"
	"net/http/pprof"
)

// pprofMux serves net/http/pprof on its own listener (CLAMM_PPROF_LISTEN),
// never on the API's.
func pprofMux() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	m.HandleFunc("/debug/pprof/heap", pprof.Handler("heap").ServeHTTP)
	return m
}
