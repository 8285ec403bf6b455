// Command otlpsink is an OTLP/HTTP receiver that reads and discards what it
// is sent, for measuring payd's tracing overhead without a collector:
//
//	go run ./bench/otlpsink -addr 127.0.0.1:4318
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 payd serve
//
// It answers every POST with an empty protobuf success and prints, at exit
// (SIGINT or SIGTERM), how many export requests and bytes it received.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4318", "listen address")
	flag.Parse()
	var requests, bytes atomic.Int64
	srv := &http.Server{Addr: *addr, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		requests.Add(1)
		bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
	fmt.Printf("otlpsink: %d export requests, %d bytes\n", requests.Load(), bytes.Load())
}
