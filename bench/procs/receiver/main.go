// Command receiver is bench/procs's webhook endpoint: it answers 200 to every
// POST, over kept-alive HTTP/1.1 connections with the kernel's full listen
// backlog, so that what the bench measures is payd's delivery and not a
// receiver's (a Python http.server answered HTTP/1.0, one connection per
// delivery, with a listen backlog of 5: about one attempt in six waited a
// second for its connection to be accepted). It counts the deliveries it
// receives and those whose event id (the Payd-Event-Id header) it had
// already received. It prints its address on stdout; GET /stats answers
// "received N repeated M" and starts both counts again.
//
//	go run ./bench/procs/receiver [-addr 127.0.0.1:0]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/payd/payd/webhook"
)

type counts struct {
	mu       sync.Mutex
	seen     map[string]struct{}
	received int
	repeated int
}

func (c *counts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Method == http.MethodGet && r.URL.Path == "/stats" {
		fmt.Fprintf(w, "received %d repeated %d\n", c.received, c.repeated)
		c.seen, c.received, c.repeated = map[string]struct{}{}, 0, 0
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	c.received++
	id := r.Header.Get(webhook.HeaderEventID)
	if _, ok := c.seen[id]; ok {
		c.repeated++
	}
	c.seen[id] = struct{}{}
	w.WriteHeader(http.StatusOK)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: &counts{seen: map[string]struct{}{}}}
	fmt.Println(ln.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}
