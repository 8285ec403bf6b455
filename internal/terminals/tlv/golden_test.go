package tlv

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestGoldenChipReads parses real-shaped chip reads from testdata/*.hex and
// compares a dump of the tree with testdata/*.golden.
func TestGoldenChipReads(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.hex"))
	if err != nil || len(inputs) < 2 {
		t.Fatalf("want at least two chip reads under testdata, got %d (%v)", len(inputs), err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data := readHexFile(t, in)
			l, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := dump(l)
			golden := strings.TrimSuffix(in, ".hex") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run with -update to create): %v", err)
			}
			if got != string(want) {
				t.Errorf("dump differs from %s:\n%s", golden, got)
			}
			// The canonical re-encoding parses to the same tree.
			enc, err := Encode(l)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(enc)
			if err != nil || dump(again) != got {
				t.Errorf("re-encoded read parses differently: %v", err)
			}
		})
	}
}

// readHexFile reads hex bytes, ignoring whitespace and lines starting with #.
func readHexFile(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sb strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(sb.String())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// dump renders a tree one object per line, children indented.
func dump(l List) string {
	var buf bytes.Buffer
	dumpTo(&buf, l, 0)
	return buf.String()
}

func dumpTo(buf *bytes.Buffer, l List, depth int) {
	for _, o := range l {
		indent := strings.Repeat("  ", depth)
		if o.Tag.Constructed() {
			fmt.Fprintf(buf, "%s%s constructed, %d children\n", indent, o.Tag, len(o.Children))
			dumpTo(buf, o.Children, depth+1)
			continue
		}
		fmt.Fprintf(buf, "%s%s [%d] %X\n", indent, o.Tag, len(o.Value), o.Value)
	}
}
