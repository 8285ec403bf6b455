// Command sdkgen writes the generated halves of payd's SDKs from
// api/openapi.yaml: client/*_gen.go (Go), sdk/typescript/src/generated.ts and
// sdk/python/src/payd/_generated.py.
// Run it from the repository root: go run ./internal/sdkgen/cmd/sdkgen
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/payd/payd/internal/sdkgen"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	files, err := sdkgen.Generate(filepath.Join(*root, "api", "openapi.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
	for name, data := range files {
		path := filepath.Join(*root, filepath.FromSlash(name))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "sdkgen:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", name)
	}
}
