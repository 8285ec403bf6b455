package screening

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// fetchTimeout bounds one download when the context has no earlier deadline.
const fetchTimeout = 2 * time.Minute

// httpClient downloads lists; requests carry the caller's context.
var httpClient = &http.Client{Timeout: fetchTimeout}

// Load reads a list from source and indexes it. Source is the path of an
// sdn.csv (or of a directory holding one), an https URL of an sdn.csv, or, for
// tests, an http URL on a loopback address. An alt.csv beside it — in the same
// directory, or at the same URL with the last path element replaced — adds
// aliases when it exists. Errors are *LoadError.
func Load(ctx context.Context, source string) (*List, error) {
	sdnData, altData, err := fetchList(ctx, source)
	if err != nil {
		var le *LoadError
		if errors.As(err, &le) {
			le.Source = source
			return nil, le
		}
		return nil, &LoadError{Source: source, Err: err}
	}
	l, err := buildList(sdnData, altData)
	if err != nil {
		var le *LoadError
		if errors.As(err, &le) {
			le.Source = source
		}
		return nil, err
	}
	l.source = source
	return l, nil
}

// fetchList reads sdn.csv and, when present, alt.csv from source. altData is
// nil when there is no alt.csv.
func fetchList(ctx context.Context, source string) (sdnData, altData []byte, err error) {
	source = strings.TrimSpace(source)
	switch {
	case source == "":
		return nil, nil, ErrNoSource
	case strings.Contains(source, "://"):
		u, err := listURL(source)
		if err != nil {
			return nil, nil, err
		}
		if sdnData, err = fetchURL(ctx, u, sdnFile, false); err != nil {
			return nil, nil, err
		}
		altData, err = fetchURL(ctx, u.ResolveReference(&url.URL{Path: altFile}), altFile, true)
		return sdnData, altData, err
	default:
		path := source
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			path = filepath.Join(path, sdnFile)
		}
		if sdnData, err = readFile(path, sdnFile, false); err != nil {
			return nil, nil, err
		}
		altData, err = readFile(filepath.Join(filepath.Dir(path), altFile), altFile, true)
		return sdnData, altData, err
	}
}

// listURL parses a source URL, accepting https anywhere and http only on a
// loopback address.
func listURL(source string) (*url.URL, error) {
	u, err := url.Parse(source)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedSource, err)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("%w: plain http is allowed only on a loopback address, got host %q", ErrUnsupportedSource, u.Hostname())
		}
	default:
		return nil, fmt.Errorf("%w: scheme %q (want https)", ErrUnsupportedSource, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: no host in %q", ErrUnsupportedSource, source)
	}
	return u, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// fetchURL downloads one file. With optional, a 404 or 410 answer means the
// file is absent and yields nil data without error.
func fetchURL(ctx context.Context, u *url.URL, file string, optional bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &LoadError{File: file, Err: err}
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, &LoadError{File: file, Err: err}
	}
	defer resp.Body.Close()
	switch {
	case optional && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone):
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, &LoadError{File: file, Err: fmt.Errorf("GET %s: %s", u.Redacted(), resp.Status)}
	case resp.ContentLength > MaxFileBytes:
		return nil, &LoadError{File: file, Err: fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, resp.ContentLength, MaxFileBytes)}
	}
	return readLimited(resp.Body, file)
}

// readFile reads one file. With optional, a missing file yields nil data
// without error.
func readFile(path, file string, optional bool) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if optional && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, &LoadError{File: file, Err: err}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxFileBytes {
		return nil, &LoadError{File: file, Err: fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, fi.Size(), MaxFileBytes)}
	}
	return readLimited(io.Reader(f), file)
}
