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
	"path"
	"path/filepath"
	"strings"
	"time"
)

// fetchTimeout bounds one download when the context has no earlier deadline.
const fetchTimeout = 2 * time.Minute

// httpClient downloads lists; requests carry the caller's context.
var httpClient = &http.Client{Timeout: fetchTimeout}

// MaxSources is the most list sources PAYD_SANCTIONS_LIST may name.
const MaxSources = 8

// Load reads the lists of source and indexes them together. Source is one
// list source or several separated by commas (OFAC, UN and EU at once; each
// list at most once). A list source is the path of a list file (or of a
// directory holding an sdn.csv), an https URL of one, or, for tests, an http
// URL on a loopback address. The format of each file is detected from its
// content: the UN Consolidated List XML (root CONSOLIDATED_LIST), the EU
// Financial Sanctions Files XML (root export), otherwise OFAC's sdn.csv, for
// which an alt.csv beside it — in the same directory, or at the same URL with
// the last path element replaced — adds aliases when it exists. Errors are
// *LoadError naming the failing source, its file and the line or entry.
func Load(ctx context.Context, source string) (*List, error) {
	var sources []string
	for _, s := range strings.Split(source, ",") {
		if s = strings.TrimSpace(s); s != "" {
			sources = append(sources, s)
		}
	}
	switch {
	case len(sources) == 0:
		return nil, &LoadError{Source: source, Err: ErrNoSource}
	case len(sources) > MaxSources:
		return nil, &LoadError{Source: source, Err: fmt.Errorf("%w: %d list sources, limit %d", ErrTooLarge, len(sources), MaxSources)}
	}
	var all []Entry
	orphans := 0
	from := map[string]string{} // list name -> the source that held it
	for _, src := range sources {
		entries, o, err := loadSource(ctx, src)
		if err != nil {
			return nil, err
		}
		list := entries[0].List
		if prev, dup := from[list]; dup {
			return nil, &LoadError{Source: src, Err: fmt.Errorf("%w: a second %s list (the first came from %s)", ErrDuplicateList, list, prev)}
		}
		from[list] = src
		if len(all)+len(entries) > MaxEntries {
			return nil, &LoadError{Source: src, Err: fmt.Errorf("%w: more than %d entries in all", ErrTooLarge, MaxEntries)}
		}
		all = append(all, entries...)
		orphans += o
	}
	l := newList(all, orphans)
	l.source = source
	return l, nil
}

// loadSource reads and parses the list of one source.
func loadSource(ctx context.Context, source string) ([]Entry, int, error) {
	entries, orphans, err := readSource(ctx, source)
	if err != nil {
		var le *LoadError
		if errors.As(err, &le) {
			le.Source = source
			return nil, 0, le
		}
		return nil, 0, &LoadError{Source: source, Err: err}
	}
	return entries, orphans, nil
}

// readSource fetches the file of source and parses it in the format its
// content shows.
func readSource(ctx context.Context, source string) ([]Entry, int, error) {
	if strings.Contains(source, "://") {
		u, err := listURL(source)
		if err != nil {
			return nil, 0, err
		}
		file := path.Base(u.Path)
		if file == "/" || file == "." {
			file = sdnFile
		}
		data, err := fetchURL(ctx, u, file, false)
		if err != nil {
			return nil, 0, err
		}
		return parseSource(data, file, func() ([]byte, error) {
			return fetchURL(ctx, u.ResolveReference(&url.URL{Path: altFile}), altFile, true)
		})
	}
	p := source
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		p = filepath.Join(p, sdnFile)
	}
	data, err := readFile(p, filepath.Base(p), false)
	if err != nil {
		return nil, 0, err
	}
	return parseSource(data, filepath.Base(p), func() ([]byte, error) {
		return readFile(filepath.Join(filepath.Dir(p), altFile), altFile, true)
	})
}

// parseSource parses one list file; alt fetches OFAC's alt.csv (nil data when
// there is none) and is called only for an OFAC list.
func parseSource(data []byte, file string, alt func() ([]byte, error)) ([]Entry, int, error) {
	switch detectFormat(data) {
	case ListUN:
		entries, err := parseUN(data, file)
		return entries, 0, err
	case ListEU:
		entries, err := parseEU(data, file)
		return entries, 0, err
	case ListOFAC:
		altData, err := alt()
		if err != nil {
			return nil, 0, err
		}
		entries, err := parseSDN(data)
		if err != nil {
			return nil, 0, err
		}
		orphans := 0
		if altData != nil {
			if orphans, err = parseAlt(altData, entries); err != nil {
				return nil, 0, err
			}
		}
		return entries, orphans, nil
	default:
		return nil, 0, &LoadError{File: file, Err: ErrUnknownFormat}
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
