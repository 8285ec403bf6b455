package xsdgen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

// TestGeneratedTablesUpToDate regenerates every table from the shared XSD and
// compares it with the file checked in beside package iso20022.
func TestGeneratedTablesUpToDate(t *testing.T) {
	xsdDir := testutil.TestData(t, "iso20022", "xsd")
	for _, target := range Targets {
		t.Run(target.XSD, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(xsdDir, target.XSD))
			if err != nil {
				t.Fatal(err)
			}
			want, err := Generate(src, Options{Package: "iso20022", Var: target.Var, Source: target.XSD})
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join("..", "..", target.File))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s is stale: run go generate ./internal/banking/iso20022", target.File)
			}
		})
	}
}

func TestGenerateRejectsUnsupportedSchema(t *testing.T) {
	cases := map[string]string{
		"not a schema": `<a/>`,
		"nested group": `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified" targetNamespace="urn:x">
			<xs:element name="Document" type="D"/>
			<xs:complexType name="D"><xs:sequence><xs:choice><xs:element name="A" type="T"/></xs:choice></xs:sequence></xs:complexType></xs:schema>`,
		"unknown facet": `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified" targetNamespace="urn:x">
			<xs:element name="Document" type="T"/>
			<xs:simpleType name="T"><xs:restriction base="xs:string"><xs:whiteSpace value="collapse"/></xs:restriction></xs:simpleType></xs:schema>`,
		"group occurrence": `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified" targetNamespace="urn:x">
			<xs:element name="Document" type="D"/>
			<xs:complexType name="D"><xs:sequence maxOccurs="2"><xs:element name="A" type="T"/></xs:sequence></xs:complexType></xs:schema>`,
	}
	for name, xsd := range cases {
		if _, err := Generate([]byte(xsd), Options{Package: "p", Var: "v", Source: "x.xsd"}); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}
