package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// apiClient is what the client commands (trigger, logs tail, listen,
// terminal simulate) share: the server and the key, from PAYD_URL and
// PAYD_API_KEY, else from the profile `payd login` kept.
type apiClient struct {
	base, key string
	http      *http.Client
}

func defaultHTTP() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

// newAPIClient reads PAYD_API_KEY and PAYD_URL (else PAYD_ADDR); where they
// are unset, PAYD_PROFILE's profile (else the default one) gives them.
func newAPIClient(e *env) (*apiClient, error) {
	key, base := e.getenv("PAYD_API_KEY"), strings.TrimRight(e.getenv("PAYD_URL"), "/")
	if key == "" || base == "" {
		_, p, ok, err := activeProfile(e)
		if err != nil {
			return nil, err
		}
		if ok {
			if key == "" {
				key = p.APIKey
			}
			if base == "" && e.getenv("PAYD_ADDR") == "" {
				base = p.URL
			}
		}
	}
	if key == "" {
		return nil, errors.New("PAYD_API_KEY is not set: export your test secret key (sk_test_...), or keep it with payd login")
	}
	if base == "" {
		base = serverURL(e)
	}
	return &apiClient{base: base, key: key, http: defaultHTTP()}, nil
}

// serverURL is PAYD_URL, else http:// + PAYD_ADDR, else the default address.
func serverURL(e *env) string {
	if base := strings.TrimRight(e.getenv("PAYD_URL"), "/"); base != "" {
		return base
	}
	addr := e.getenv("PAYD_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	return "http://" + addr
}

// do sends a JSON request and returns the answer's body; an error answer
// becomes an error carrying the status and the API's message.
func (c *apiClient) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	return c.send(ctx, method, path, body, "", nil)
}

// send is do with an Idempotency-Key (when key is not empty) and extra
// headers.
func (c *apiClient) send(ctx context.Context, method, path string, body any, key string, hdr map[string]string) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		var eb struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(raw, &eb)
		return nil, fmt.Errorf("%s %s: the server answered %d: %s", method, path, resp.StatusCode, eb.Error.Message)
	}
	return raw, nil
}

// printJSON writes raw JSON indented.
func printJSON(w io.Writer, raw []byte) {
	var pretty bytes.Buffer
	if json.Indent(&pretty, bytes.TrimSpace(raw), "", "  ") != nil {
		pretty.Reset()
		pretty.Write(raw)
	}
	fmt.Fprintln(w, pretty.String())
}
