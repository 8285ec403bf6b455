package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// EventStream reads server-sent events from StreamEvents. Close it when done:
// payd holds at most a few streams open per key.
type EventStream struct {
	body   io.ReadCloser
	r      *bufio.Reader
	LastID string // the id of the last event read, for resuming
}

func (c *Client) stream(ctx context.Context, path string, query url.Values, opts []RequestOption) (*EventStream, error) {
	opts = append([]RequestOption{WithHeader("Accept", "text/event-stream")}, opts...)
	hc := *c.http
	hc.Timeout = 0 // a stream stays open; the context ends it
	cc := *c
	cc.http = &hc
	resp, err := cc.open(ctx, http.MethodGet, path, query, nil, "", opts)
	if err != nil {
		return nil, err
	}
	return &EventStream{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10)}, nil
}

// Next blocks until the next event and returns it; io.EOF when the stream
// ended. Keep-alive comments are skipped.
func (s *EventStream) Next() (*Event, error) {
	var data strings.Builder
	id := ""
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && data.Len() == 0 {
				return nil, io.EOF
			}
			if err != io.EOF {
				return nil, err
			}
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() == 0 {
				if err == io.EOF {
					return nil, io.EOF
				}
				continue
			}
			var ev Event
			if jerr := json.Unmarshal([]byte(data.String()), &ev); jerr != nil {
				return nil, fmt.Errorf("payd: event stream: %w", jerr)
			}
			if id != "" {
				s.LastID = id
			}
			return &ev, nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(line[5:], " "))
		}
	}
}

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }
