//go:build payd_pprof

package main

// Built only with -tags payd_pprof, for benchmarks: PAYD_PPROF_ADDR (a
// loopback address such as 127.0.0.1:6060) serves net/http/pprof on a
// listener of its own, apart from the API. A normal build has none of it.

import (
	"net/http"
	_ "net/http/pprof" // registers on http.DefaultServeMux
	"os"
)

func init() {
	if addr := os.Getenv("PAYD_PPROF_ADDR"); addr != "" {
		go http.ListenAndServe(addr, nil)
	}
}
