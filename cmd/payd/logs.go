package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"
)

func init() {
	register(command{name: "logs", summary: "show your recent API requests (method, path, status, request id, latency)", run: runLogs, subs: []string{"tail"}})
	describe("logs tail", usage{
		synopsis: "[--follow] [--limit 20] [--key-id key_...] [--json]",
		about: "Prints the latest API requests of the key's merchant in the key's mode, oldest first, one line each:\n" +
			"time, method, status, path, latency, request id and the key that made it (from GET /v1/request_logs;\n" +
			"never a body or a query string). With --follow it keeps printing new requests as they arrive (they\n" +
			"appear within about a second of their answer) until interrupted. payd keeps the newest 1,000\n" +
			"requests per merchant and mode, for at most 30 days (PAYD_RETENTION_REQUEST_LOGS on the server).",
		vars: clientVars,
	})
}

// requestLogLine is one request of GET /v1/request_logs.
type requestLogLine struct {
	ID        string  `json:"id"`
	Method    string  `json:"method"`
	Path      string  `json:"path"`
	Status    int     `json:"status"`
	RequestID string  `json:"request_id"`
	LatencyMS float64 `json:"latency_ms"`
	KeyID     string  `json:"key_id"`
	CreatedAt string  `json:"created_at"`
}

// runLogs is `payd logs tail [--follow]`.
func runLogs(ctx context.Context, e *env, args []string) error {
	fs := newFlags("logs tail")
	follow := fs.Bool("follow", false, "keep printing new requests until interrupted")
	limit := fs.Int("limit", 20, "how many of the latest requests to print first (1 to 100)")
	keyID := fs.String("key-id", "", "only the requests of this key (key_...)")
	asJSON := fs.Bool("json", false, "print each request as a line of JSON")
	interval := fs.Duration("interval", time.Second, "with --follow, how often to ask for new requests")
	if err := parseFlags(e, fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badUsage(e, fs, "unexpected argument %q", fs.Arg(0))
	}
	if *limit < 1 || *limit > 100 {
		return badUsage(e, fs, "--limit is between 1 and 100")
	}
	if *interval < 100*time.Millisecond {
		return badUsage(e, fs, "--interval is at least 100ms")
	}
	c, err := newAPIClient(e)
	if err != nil {
		return err
	}
	fetch := func(q url.Values) ([]requestLogLine, bool, error) {
		if *keyID != "" {
			q.Set("key_id", *keyID)
		}
		raw, err := c.do(ctx, "GET", "/v1/request_logs?"+q.Encode(), nil)
		if err != nil {
			return nil, false, err
		}
		var page struct {
			Data    []requestLogLine `json:"data"`
			HasMore bool             `json:"has_more"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, false, fmt.Errorf("GET /v1/request_logs: %w", err)
		}
		return page.Data, page.HasMore, nil
	}
	// Pages come newest first; a tail prints oldest first.
	print := func(lines []requestLogLine) {
		for i := len(lines) - 1; i >= 0; i-- {
			printRequestLine(e.stdout, lines[i], *asJSON)
		}
	}
	lines, _, err := fetch(url.Values{"limit": {strconv.Itoa(*limit)}})
	if err != nil {
		return err
	}
	print(lines)
	if !*follow {
		return nil
	}
	newest := ""
	if len(lines) > 0 {
		newest = lines[0].ID
	}
	t := time.NewTicker(*interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		// Everything newer than the last line printed, a page at a time
		// (ending_before answers the page just after the cursor).
		for {
			q := url.Values{"limit": {"100"}}
			if newest != "" {
				q.Set("ending_before", newest)
			}
			page, more, err := fetch(q)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			print(page)
			if len(page) > 0 {
				newest = page[0].ID
			}
			if !more || newest == "" {
				break
			}
		}
	}
}

func printRequestLine(w io.Writer, l requestLogLine, asJSON bool) {
	if asJSON {
		raw, _ := json.Marshal(l)
		fmt.Fprintln(w, string(raw))
		return
	}
	at := l.CreatedAt
	if t, err := time.Parse(time.RFC3339Nano, l.CreatedAt); err == nil {
		at = t.Local().Format("2006-01-02 15:04:05.000")
	}
	fmt.Fprintf(w, "%s  %-6s %d  %-48s %8.1f ms  %s  %s\n", at, l.Method, l.Status, l.Path, l.LatencyMS, l.RequestID, l.KeyID)
}
