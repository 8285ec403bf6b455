package iso20022

import (
	"fmt"
	"regexp"
	"strings"
)

// The schema tables below are produced by internal/xsdgen from the official
// ISO 20022 XSD files (go generate). They describe every complex and simple
// type of a message, so the streaming checker in xmlcheck.go validates the
// whole Document, not only the parts payd reads.

// contentKind is how a complex type's children are arranged.
type contentKind uint8

const (
	// sequenceContent: the declared elements, in order, each within its
	// minOccurs..maxOccurs.
	sequenceContent contentKind = iota
	// choiceContent: exactly one of the declared elements (repeated within its
	// maxOccurs).
	choiceContent
	// textContent: simple content (text of a simple type) with attributes.
	textContent
	// anyContent: one element of any namespace, not validated (xs:any lax).
	anyContent
)

// builtinType is the XML Schema built-in a simple type restricts.
type builtinType uint8

const (
	xsString builtinType = iota
	xsDecimal
	xsBoolean
	xsDate
	xsDateTime
	xsTime
	// xsBase64Binary is binary data in base64; its length facets count the
	// decoded octets.
	xsBase64Binary
)

// elementDecl is one element of a content model.
type elementDecl struct {
	name     string
	typeName string
	min, max int // max < 0 is unbounded

	complex *complexType // resolved typeName, when complex
	simple  *simpleType  // resolved typeName, when simple
}

// attributeDecl is an attribute of a simple-content complex type.
type attributeDecl struct {
	name     string
	typeName string
	required bool
	simple   *simpleType
}

// complexType is a named XSD complex type.
type complexType struct {
	name       string
	kind       contentKind
	elements   []elementDecl
	base       string // textContent: the simple type of the text
	attributes []attributeDecl

	text *simpleType // resolved base
}

// simpleType is a named XSD simple type: a built-in restricted by facets.
// Absent numeric facets are -1.
type simpleType struct {
	name           string
	base           builtinType
	minLength      int
	maxLength      int
	totalDigits    int
	fractionDigits int
	minInclusive   string
	pattern        string
	enumeration    []string

	re      *regexp.Regexp
	allowed map[string]bool
}

// schema is one message schema: its namespace and its types.
type schema struct {
	namespace string
	root      elementDecl
	complex   map[string]*complexType
	simple    map[string]*simpleType
}

// newSchema links the generated type lists into a schema. A dangling type
// reference is a bug in the generator, so it panics at package start.
func newSchema(namespace, rootName, rootType string, complexTypes []complexType, simpleTypes []simpleType) *schema {
	s := &schema{
		namespace: namespace,
		complex:   make(map[string]*complexType, len(complexTypes)),
		simple:    make(map[string]*simpleType, len(simpleTypes)),
	}
	patterns := map[string]*regexp.Regexp{}
	for i := range simpleTypes {
		st := &simpleTypes[i]
		if st.pattern != "" {
			re, ok := patterns[st.pattern]
			if !ok {
				re = regexp.MustCompile("^(?:" + st.pattern + ")$")
				patterns[st.pattern] = re
			}
			st.re = re
		}
		if len(st.enumeration) > 0 {
			st.allowed = make(map[string]bool, len(st.enumeration))
			for _, v := range st.enumeration {
				st.allowed[v] = true
			}
		}
		s.simple[st.name] = st
	}
	for i := range complexTypes {
		s.complex[complexTypes[i].name] = &complexTypes[i]
	}
	for _, ct := range s.complex {
		for i := range ct.elements {
			s.resolve(&ct.elements[i])
		}
		for i := range ct.attributes {
			ct.attributes[i].simple = s.mustSimple(ct.attributes[i].typeName)
		}
		if ct.kind == textContent {
			ct.text = s.mustSimple(ct.base)
		}
	}
	s.root = elementDecl{name: rootName, typeName: rootType, min: 1, max: 1}
	s.resolve(&s.root)
	return s
}

func (s *schema) resolve(e *elementDecl) {
	if ct, ok := s.complex[e.typeName]; ok {
		e.complex = ct
		return
	}
	e.simple = s.mustSimple(e.typeName)
}

func (s *schema) mustSimple(name string) *simpleType {
	if b, ok := strings.CutPrefix(name, "builtin:"); ok {
		st := restrict(name, builtinByName(b))
		return &st
	}
	st, ok := s.simple[name]
	if !ok {
		panic(fmt.Sprintf("iso20022: schema %s: unknown type %q", s.namespace, name))
	}
	return st
}

func builtinByName(name string) builtinType {
	switch name {
	case "xsDecimal":
		return xsDecimal
	case "xsBoolean":
		return xsBoolean
	case "xsDate":
		return xsDate
	case "xsDateTime":
		return xsDateTime
	case "xsTime":
		return xsTime
	case "xsBase64Binary":
		return xsBase64Binary
	}
	return xsString
}

// The constructors below are what the generated tables are written in.

func el(name, typeName string, min, max int) elementDecl {
	return elementDecl{name: name, typeName: typeName, min: min, max: max}
}

func sequenceOf(name string, elements ...elementDecl) complexType {
	return complexType{name: name, kind: sequenceContent, elements: elements}
}

func choiceOf(name string, elements ...elementDecl) complexType {
	return complexType{name: name, kind: choiceContent, elements: elements}
}

func anyElement(name string) complexType {
	return complexType{name: name, kind: anyContent}
}

func attr(name, typeName string, required bool) attributeDecl {
	return attributeDecl{name: name, typeName: typeName, required: required}
}

func textWithAttributes(name, base string, attributes ...attributeDecl) complexType {
	return complexType{name: name, kind: textContent, base: base, attributes: attributes}
}

// facet sets one restriction on a simple type.
type facet func(*simpleType)

func restrict(name string, base builtinType, facets ...facet) simpleType {
	st := simpleType{name: name, base: base, minLength: -1, maxLength: -1, totalDigits: -1, fractionDigits: -1}
	for _, f := range facets {
		f(&st)
	}
	return st
}

func minLength(n int) facet      { return func(s *simpleType) { s.minLength = n } }
func maxLength(n int) facet      { return func(s *simpleType) { s.maxLength = n } }
func totalDigits(n int) facet    { return func(s *simpleType) { s.totalDigits = n } }
func fractionDigits(n int) facet { return func(s *simpleType) { s.fractionDigits = n } }
func minInclusive(v string) facet {
	return func(s *simpleType) { s.minInclusive = v }
}
func pattern(p string) facet { return func(s *simpleType) { s.pattern = p } }
func enumeration(values ...string) facet {
	return func(s *simpleType) { s.enumeration = values }
}
