package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

func init() {
	register(command{name: "healthcheck", summary: "ask a running payd whether it is ready (for container health checks)", run: runHealthcheck})
	describe("healthcheck", usage{
		synopsis: "[--url URL] [--timeout D]",
		about: "GETs the readiness endpoint of a running payd (default: /readyz at PAYD_URL, else at PAYD_ADDR with\n" +
			"an unspecified host read as 127.0.0.1) and exits 0 when it answers 200, 1 otherwise, saying why on\n" +
			"standard error. It needs no shell or curl, so a container image built FROM scratch can use it as its\n" +
			"HEALTHCHECK.",
		vars: []string{"PAYD_URL", "PAYD_ADDR"},
	})
}

// maxHealthBody bounds what healthcheck reads of an answer (readyz answers
// a few hundred bytes).
const maxHealthBody = 4096

func runHealthcheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags("healthcheck")
	target := fs.String("url", "", "the URL to GET (default: /readyz of PAYD_URL or PAYD_ADDR)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return badUsage(e, fs, "--timeout must be positive")
	}
	u := *target
	if u == "" {
		u = healthURL(e)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %v", u, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("not ready: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxHealthBody))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s answered %d %s", u, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(e.stdout, "ready: %s answered 200\n", u)
	return nil
}

// healthURL is /readyz at PAYD_URL, else at PAYD_ADDR (its default when
// unset) with an unspecified or wildcard host ("", 0.0.0.0, ::) read as
// 127.0.0.1, the address a check inside the same container or machine
// reaches.
func healthURL(e *env) string {
	if base := strings.TrimRight(e.getenv("PAYD_URL"), "/"); base != "" {
		return base + "/readyz"
	}
	addr := e.getenv("PAYD_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		addr = net.JoinHostPort(host, port)
	}
	return "http://" + addr + "/readyz"
}
