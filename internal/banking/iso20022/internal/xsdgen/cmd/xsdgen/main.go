// Command xsdgen regenerates package iso20022's schema tables from the shared
// ISO 20022 XSD files: go generate ./internal/banking/iso20022.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/payd/payd/internal/banking/iso20022/internal/xsdgen"
)

func main() {
	in := flag.String("xsd", "../../../testdata/iso20022/xsd", "directory holding the ISO 20022 XSD files")
	out := flag.String("out", ".", "directory of package iso20022")
	flag.Parse()
	if p := os.Getenv("PAYD_SHARED_DATA"); p != "" && !isFlagSet("xsd") {
		*in = filepath.Join(p, "iso20022", "xsd")
	}
	for _, t := range xsdgen.Targets {
		src, err := os.ReadFile(filepath.Join(*in, t.XSD))
		if err != nil {
			fail(err)
		}
		code, err := xsdgen.Generate(src, xsdgen.Options{Package: "iso20022", Var: t.Var, Source: t.XSD})
		if err != nil {
			fail(err)
		}
		if err := os.WriteFile(filepath.Join(*out, t.File), code, 0o644); err != nil {
			fail(err)
		}
	}
}

func isFlagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "xsdgen:", err)
	os.Exit(1)
}
