// Package xsdgen turns an ISO 20022 message schema (XSD) into the Go tables
// that package iso20022 validates messages against.
//
// It understands exactly the XSD subset that the ISO 20022 Standards Editor
// emits for message schemas: one global element, named complex types holding
// one flat xs:sequence or xs:choice of elements (or an xs:any), complex types
// with simple content and attributes, and simple types restricting an XML
// Schema built-in with length, pattern, enumeration and decimal facets.
// Anything else is an error, so a schema outside that subset can never be
// half-translated.
package xsdgen

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"go/format"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const xsNamespace = "http://www.w3.org/2001/XMLSchema"

// node is a generic XSD element.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []node     `xml:",any"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// Options names the generated table.
type Options struct {
	// Package is the Go package of the generated file.
	Package string
	// Var is the name of the generated schema variable.
	Var string
	// Source is the file name recorded in the generated header.
	Source string
}

// Target is one schema that package iso20022 carries as tables.
type Target struct {
	// XSD is the schema's file name under the shared xsd directory.
	XSD string
	// File is the generated Go file, relative to package iso20022.
	File string
	// Var is the schema variable the file declares.
	Var string
}

// Targets lists the schemas payd validates against. The pacs.002 table is
// only used by tests (it checks what payd emits), so it lives in a _test file.
var Targets = []Target{
	{XSD: "pacs.008.001.08.xsd", File: "pacs008_schema_gen.go", Var: "pacs008Schema"},
	{XSD: "pacs.004.001.09.xsd", File: "pacs004_schema_gen.go", Var: "pacs004Schema"},
	{XSD: "pacs.004.001.10.xsd", File: "pacs004v10_schema_gen.go", Var: "pacs004v10Schema"},
	{XSD: "camt.056.001.08.xsd", File: "camt056_schema_gen.go", Var: "camt056Schema"},
	{XSD: "pacs.002.001.10.xsd", File: "pacs002_schema_gen_test.go", Var: "pacs002Schema"},
}

// Generate returns gofmt-formatted Go source declaring the schema table for xsd.
func Generate(xsd []byte, opt Options) ([]byte, error) {
	var root node
	if err := xml.Unmarshal(xsd, &root); err != nil {
		return nil, fmt.Errorf("xsdgen: parse: %w", err)
	}
	if root.XMLName.Space != xsNamespace || root.XMLName.Local != "schema" {
		return nil, fmt.Errorf("xsdgen: root is not xs:schema")
	}
	if root.attr("elementFormDefault") != "qualified" {
		return nil, fmt.Errorf("xsdgen: elementFormDefault must be qualified")
	}
	g := &gen{ns: root.attr("targetNamespace")}
	if g.ns == "" {
		return nil, fmt.Errorf("xsdgen: no targetNamespace")
	}
	for _, c := range root.Children {
		if c.XMLName.Space != xsNamespace {
			return nil, fmt.Errorf("xsdgen: unexpected %s in schema", c.XMLName.Local)
		}
		var err error
		switch c.XMLName.Local {
		case "element":
			if g.rootName != "" {
				return nil, fmt.Errorf("xsdgen: more than one global element")
			}
			g.rootName, g.rootType = c.attr("name"), c.attr("type")
		case "complexType":
			err = g.complexType(c)
		case "simpleType":
			err = g.simpleType(c)
		default:
			err = fmt.Errorf("unsupported top-level xs:%s", c.XMLName.Local)
		}
		if err != nil {
			return nil, fmt.Errorf("xsdgen: %w", err)
		}
	}
	if g.rootName == "" {
		return nil, fmt.Errorf("xsdgen: no global element")
	}
	return g.emit(opt)
}

type gen struct {
	ns                 string
	rootName, rootType string
	complex            []string // Go expressions, one per complex type
	simple             []string // Go expressions, one per simple type
}

func (g *gen) complexType(c node) error {
	name := c.attr("name")
	if name == "" || len(c.Children) != 1 {
		return fmt.Errorf("complex type %q: want one child", name)
	}
	body := c.Children[0]
	switch body.XMLName.Local {
	case "sequence", "choice":
		if len(body.Attrs) != 0 {
			return fmt.Errorf("complex type %q: occurrence on a model group is not supported", name)
		}
		if len(body.Children) == 1 && body.Children[0].XMLName.Local == "any" {
			a := body.Children[0]
			if a.attr("namespace") != "##any" || a.attr("processContents") != "lax" || a.attr("minOccurs") != "" || a.attr("maxOccurs") != "" {
				return fmt.Errorf("complex type %q: only a single lax ##any wildcard is supported", name)
			}
			g.complex = append(g.complex, fmt.Sprintf("anyElement(%q)", name))
			return nil
		}
		ctor := "sequenceOf"
		if body.XMLName.Local == "choice" {
			ctor = "choiceOf"
		}
		parts := []string{strconv.Quote(name)}
		for _, e := range body.Children {
			if e.XMLName.Local != "element" {
				return fmt.Errorf("complex type %q: nested xs:%s is not supported", name, e.XMLName.Local)
			}
			min, max, err := occurs(e)
			if err != nil {
				return fmt.Errorf("complex type %q: %w", name, err)
			}
			parts = append(parts, fmt.Sprintf("el(%q, %q, %d, %d)", e.attr("name"), stripXS(e.attr("type")), min, max))
		}
		g.complex = append(g.complex, ctor+"("+strings.Join(parts, ", ")+")")
		return nil
	case "simpleContent":
		if len(body.Children) != 1 || body.Children[0].XMLName.Local != "extension" {
			return fmt.Errorf("complex type %q: simple content must be one xs:extension", name)
		}
		ext := body.Children[0]
		parts := []string{strconv.Quote(name), strconv.Quote(stripXS(ext.attr("base")))}
		for _, a := range ext.Children {
			if a.XMLName.Local != "attribute" {
				return fmt.Errorf("complex type %q: unsupported xs:%s in extension", name, a.XMLName.Local)
			}
			parts = append(parts, fmt.Sprintf("attr(%q, %q, %t)", a.attr("name"), stripXS(a.attr("type")), a.attr("use") == "required"))
		}
		g.complex = append(g.complex, "textWithAttributes("+strings.Join(parts, ", ")+")")
		return nil
	}
	return fmt.Errorf("complex type %q: unsupported xs:%s", name, body.XMLName.Local)
}

func occurs(e node) (min, max int, err error) {
	min, max = 1, 1
	if v := e.attr("minOccurs"); v != "" {
		if min, err = strconv.Atoi(v); err != nil {
			return 0, 0, fmt.Errorf("element %q: minOccurs %q", e.attr("name"), v)
		}
	}
	switch v := e.attr("maxOccurs"); v {
	case "":
	case "unbounded":
		max = -1
	default:
		if max, err = strconv.Atoi(v); err != nil {
			return 0, 0, fmt.Errorf("element %q: maxOccurs %q", e.attr("name"), v)
		}
	}
	return min, max, nil
}

var builtins = map[string]string{
	"xs:string":       "xsString",
	"xs:decimal":      "xsDecimal",
	"xs:boolean":      "xsBoolean",
	"xs:date":         "xsDate",
	"xs:dateTime":     "xsDateTime",
	"xs:time":         "xsTime",
	"xs:base64Binary": "xsBase64Binary",
}

func (g *gen) simpleType(c node) error {
	name := c.attr("name")
	if len(c.Children) != 1 || c.Children[0].XMLName.Local != "restriction" {
		return fmt.Errorf("simple type %q: want one xs:restriction", name)
	}
	r := c.Children[0]
	base, ok := builtins[r.attr("base")]
	if !ok {
		return fmt.Errorf("simple type %q: unsupported base %q", name, r.attr("base"))
	}
	parts := []string{strconv.Quote(name), base}
	var enum []string
	for _, f := range r.Children {
		v := f.attr("value")
		switch f.XMLName.Local {
		case "minLength", "maxLength", "totalDigits", "fractionDigits":
			if _, err := strconv.Atoi(v); err != nil {
				return fmt.Errorf("simple type %q: %s %q", name, f.XMLName.Local, v)
			}
			parts = append(parts, f.XMLName.Local+"("+v+")")
		case "minInclusive":
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("simple type %q: minInclusive %q", name, v)
			}
			parts = append(parts, fmt.Sprintf("minInclusive(%q)", v))
		case "pattern":
			if strings.ContainsAny(v, "^$") || strings.Contains(v, `\p`) || strings.Contains(v, `\i`) || strings.Contains(v, `\c`) {
				return fmt.Errorf("simple type %q: pattern %q uses XSD regex features not translated", name, v)
			}
			if _, err := regexp.Compile("^(?:" + v + ")$"); err != nil {
				return fmt.Errorf("simple type %q: pattern: %w", name, err)
			}
			parts = append(parts, "pattern("+strconv.Quote(v)+")")
		case "enumeration":
			enum = append(enum, strconv.Quote(v))
		default:
			return fmt.Errorf("simple type %q: unsupported facet xs:%s", name, f.XMLName.Local)
		}
	}
	if len(enum) > 0 {
		parts = append(parts, "enumeration("+strings.Join(enum, ", ")+")")
	}
	g.simple = append(g.simple, "restrict("+strings.Join(parts, ", ")+")")
	return nil
}

func stripXS(t string) string {
	if b, ok := builtins[t]; ok {
		return "builtin:" + b
	}
	return t
}

func (g *gen) emit(opt Options) ([]byte, error) {
	sort.Strings(g.complex)
	sort.Strings(g.simple)
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by xsdgen from %s; DO NOT EDIT.\n\n", opt.Source)
	fmt.Fprintf(&b, "package %s\n\n", opt.Package)
	fmt.Fprintf(&b, "// %s is the %s schema (%s) as validation tables.\n", opt.Var, g.ns[strings.LastIndex(g.ns, ":")+1:], opt.Source)
	fmt.Fprintf(&b, "var %s = newSchema(%q, %q, %q,\n", opt.Var, g.ns, g.rootName, g.rootType)
	b.WriteString("[]complexType{\n")
	for _, c := range g.complex {
		b.WriteString(c + ",\n")
	}
	b.WriteString("},\n[]simpleType{\n")
	for _, s := range g.simple {
		b.WriteString(s + ",\n")
	}
	b.WriteString("})\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("xsdgen: format: %w", err)
	}
	return out, nil
}
