package client_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/payd/payd/client"
	"github.com/payd/payd/internal/sdkgen"
	"github.com/payd/payd/internal/testutil"
)

// TestSDKsCoverEveryOperation fails when api/openapi.yaml has an operation
// that the Go client, the TypeScript SDK or the Python SDK does not
// implement.
func TestSDKsCoverEveryOperation(t *testing.T) {
	root := testutil.RepoRoot(t)
	ops, err := sdkgen.Operations(filepath.Join(root, "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) < 70 {
		t.Fatalf("only %d operations read from the document", len(ops))
	}
	ts, err := os.ReadFile(filepath.Join(root, "sdk", "typescript", "src", "generated.ts"))
	if err != nil {
		t.Fatal(err)
	}
	py, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(sdkgen.PythonFile)))
	if err != nil {
		t.Fatal(err)
	}
	ct := reflect.TypeOf(&client.Client{})
	for _, op := range ops {
		name, ok := client.Operations[op]
		if !ok {
			t.Errorf("Go client: no method for %s", op)
			continue
		}
		if _, ok := ct.MethodByName(name); !ok {
			t.Errorf("Go client: Operations names %s for %s, but Client has no such method", name, op)
		}
		method, path, _ := strings.Cut(op, " ")
		if !bytes.Contains(ts, []byte(`method: "`+method+`", path: "`+path+`"`)) {
			t.Errorf("TypeScript SDK: no method for %s", op)
		}
		if name := pythonMethod(py, method, path); name == "" {
			t.Errorf("Python SDK: no method for %s", op)
		} else if !bytes.Contains(py, []byte("    def "+name+"(self")) {
			t.Errorf("Python SDK: the operation table names %s for %s, but GeneratedClient has no such method", name, op)
		}
	}
	if len(client.Operations) != len(ops) {
		t.Errorf("Go client implements %d operations, the document has %d", len(client.Operations), len(ops))
	}
}

// TestGeneratedCodeIsCurrent fails when the committed generated files differ
// from what internal/sdkgen makes of api/openapi.yaml now. Regenerate with
// go generate ./client.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	root := testutil.RepoRoot(t)
	files, err := sdkgen.Generate(filepath.Join(root, "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./client)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what api/openapi.yaml generates: run go generate ./client", name)
		}
	}
}

// pythonMethod returns the method name the Python SDK's operation table gives
// the operation, or "" when the table lacks it.
func pythonMethod(py []byte, method, path string) string {
	for _, line := range strings.Split(string(py), "\n") {
		if !strings.Contains(line, `method="`+method+`", path="`+path+`"`) {
			continue
		}
		name, _, ok := strings.Cut(strings.TrimSpace(line), `": Operation(`)
		if ok && strings.HasPrefix(name, `"`) {
			return name[1:]
		}
	}
	return ""
}
