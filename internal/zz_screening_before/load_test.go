package screening

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// listServer serves the fixture list under /lists/; status overrides the
// answer for a file name.
func listServer(t *testing.T, tls bool, status map[string]int) *httptest.Server {
	t.Helper()
	dir := filepath.Dir(fixturePath(t))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		file := strings.TrimPrefix(r.URL.Path, "/lists/")
		if code, ok := status[file]; ok {
			http.Error(w, http.StatusText(code), code)
			return
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.Base(file)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	})
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

func TestLoadHTTP(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		status  map[string]int
		aliases int
		err     string
	}{
		{"sdn and alt", nil, 13, ""},
		{"no alt", map[string]int{altFile: http.StatusNotFound}, 0, ""},
		{"alt gone", map[string]int{altFile: http.StatusGone}, 0, ""},
		{"alt failing", map[string]int{altFile: http.StatusInternalServerError}, 0, "alt.csv: GET"},
		{"sdn failing", map[string]int{sdnFile: http.StatusServiceUnavailable}, 0, "503 Service Unavailable"},
		{"sdn missing", map[string]int{sdnFile: http.StatusNotFound}, 0, "404 Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := listServer(t, false, tt.status)
			source := srv.URL + "/lists/sdn.csv"
			l, err := Load(ctx, source)
			if tt.err != "" {
				var le *LoadError
				if !errors.As(err, &le) || le.Source != source || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want a *LoadError for %s containing %q", err, source, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Size() != 17 || l.AliasCount() != tt.aliases || l.Source() != source {
				t.Errorf("Size %d aliases %d source %q; want 17, %d, %q", l.Size(), l.AliasCount(), l.Source(), tt.aliases, source)
			}
		})
	}
}

func TestLoadHTTPS(t *testing.T) {
	srv := listServer(t, true, nil)
	saved := httpClient
	httpClient = srv.Client() // trusts the test server's certificate
	t.Cleanup(func() { httpClient = saved })
	l, err := Load(context.Background(), srv.URL+"/lists/sdn.csv")
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Screen("Dmitry Khoroshev", Options{}); r.Status != StatusHit {
		t.Errorf("Screen = %+v, want a hit", r)
	}
}

func TestLoadHTTPTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(MaxFileBytes+1))
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	_, err := Load(context.Background(), srv.URL+"/sdn.csv")
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error = %v, want ErrTooLarge", err)
	}
}

func TestLoadHTTPCanceled(t *testing.T) {
	srv := listServer(t, false, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, srv.URL+"/lists/sdn.csv"); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestLoadUnsupportedSource(t *testing.T) {
	for _, source := range []string{
		"http://lists.example.com/sdn.csv", // plain http off the loopback
		"ftp://127.0.0.1/sdn.csv",
		"https:///sdn.csv",
	} {
		if _, err := Load(context.Background(), source); !errors.Is(err, ErrUnsupportedSource) {
			t.Errorf("Load(%q) = %v, want ErrUnsupportedSource", source, err)
		}
	}
	if _, err := Load(context.Background(), "  "); !errors.Is(err, ErrNoSource) {
		t.Errorf("Load(blank) = %v, want ErrNoSource", err)
	}
}
