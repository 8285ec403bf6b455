package iso20022

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

// sharedSample is one file of the CBPR+ samples in testdata with what SOURCES.md
// says about it.
type sharedSample struct {
	path        string // below the shared data directory
	message     string // e.g. "pacs.008.001.08"
	schemaValid bool
}

var sourcesRow = regexp.MustCompile(`^\| (iso20022/samples/\S+\.xml) \|.*; ((?:pacs|camt)\.\d{3}\.\d{3}\.\d{2}); Document (validates against|FAILS) base ISO XSD`)

// sharedSamples reads the sample table of SOURCES.md, so the expectations
// come from the data's own documentation rather than from this package.
func sharedSamples(t *testing.T) (string, []sharedSample) {
	t.Helper()
	root := testutil.TestData(t)
	f, err := os.Open(filepath.Join(root, "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sharedSample
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := sourcesRow.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, sharedSample{path: m[1], message: m[2], schemaValid: m[3] == "validates against"})
		}
	}
	if len(out) < 12 {
		t.Fatalf("found only %d samples in SOURCES.md", len(out))
	}
	return root, out
}

// TestSharedSamples runs every shared sample through the decoder of its
// message type: schema-valid pacs.008 samples must decode, schema-invalid ones
// must be a *SchemaError (FF01); other message types are refused as
// unsupported by DecodeXML.
func TestSharedSamples(t *testing.T) {
	root, samples := sharedSamples(t)
	for _, s := range samples {
		t.Run(strings.TrimPrefix(s.path, "iso20022/samples/cbprplus/"), func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(root, s.path))
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeXML(body)
			var schemaErr *SchemaError
			if s.message == "pacs.004.001.09" {
				_, rerr := DecodeReturnXML(body)
				var rse *SchemaError
				if s.schemaValid != !errors.As(rerr, &rse) {
					t.Errorf("DecodeReturnXML = %v, sample schema-valid = %v", rerr, s.schemaValid)
				}
				if s.schemaValid && rerr != nil && !strings.Contains(s.path, "fixtures_invalid") {
					t.Errorf("schema-valid return rejected: %v", rerr)
				}
			}
			switch {
			case s.message != "pacs.008.001.08":
				if !errors.Is(err, ErrUnsupportedMessage) {
					t.Errorf("DecodeXML(%s) = %v, want ErrUnsupportedMessage", s.message, err)
				}
			case s.schemaValid && err != nil:
				t.Errorf("schema-valid sample rejected: %v", err)
			case !s.schemaValid && !errors.As(err, &schemaErr):
				t.Errorf("schema-invalid sample not caught (FF01 missed): err = %v", err)
			}
		})
	}
}

// TestSharedSamplesAllSchemas checks the generated tables of every message
// type against SOURCES.md's verdicts, pacs.002 and pacs.004 included.
func TestSharedSamplesAllSchemas(t *testing.T) {
	root, samples := sharedSamples(t)
	schemas := map[string]*schema{
		"pacs.008.001.08": pacs008Schema,
		"pacs.002.001.10": pacs002Schema,
		"pacs.004.001.09": pacs004Schema,
	}
	for _, s := range samples {
		body, err := os.ReadFile(filepath.Join(root, s.path))
		if err != nil {
			t.Fatal(err)
		}
		res, err := scanXML(body, schemas[s.message])
		if err != nil {
			t.Errorf("%s: %v", s.path, err)
			continue
		}
		if got := len(res.problems) == 0; got != s.schemaValid {
			t.Errorf("%s: schema-valid = %v, SOURCES.md says %v (problems %v)", s.path, got, s.schemaValid, res.problems)
		}
	}
}
