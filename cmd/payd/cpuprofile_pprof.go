//go:build payd_pprof

package main

// A bench-only CPU profile (go build -tags payd_pprof, as for pprof_bench.go): with PAYD_CPUPROFILE
// set, SIGUSR1 starts a CPU profile written to that path and SIGUSR2 stops
// it, so a bench can profile exactly its load window. Release builds have
// none of this.

import (
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func init() {
	path := os.Getenv("PAYD_CPUPROFILE")
	if path == "" {
		return
	}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		var f *os.File
		for sig := range ch {
			switch {
			case sig == syscall.SIGUSR1 && f == nil:
				var err error
				if f, err = os.Create(path); err == nil {
					if pprof.StartCPUProfile(f) != nil {
						f.Close()
						f = nil
					}
				}
			case sig == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				f.Close()
				f = nil
			}
		}
	}()
}
