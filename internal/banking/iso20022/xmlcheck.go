package iso20022

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Security limits applied to every XML and JSON body before anything else.
const (
	// MaxMessageBytes is the largest body accepted, in bytes.
	MaxMessageBytes = 2 << 20
	// MaxElementDepth is the deepest element nesting accepted (the envelope
	// counts). The schemas nest at most 14 levels (camt.056; pacs.008: 12)
	// outside the supplementary-data wildcard.
	MaxElementDepth = 40
	// maxAttributes bounds the attributes of one element (namespace
	// declarations included); ISO 20022 elements carry at most a handful.
	maxAttributes = 64
)

const (
	xsiNamespace        = "http://www.w3.org/2001/XMLSchema-instance"
	xmlNamespace        = "http://www.w3.org/XML/1998/namespace"
	isoNamespacePrefix  = "urn:iso:std:iso:20022:tech:xsd:"
	headNamespacePrefix = isoNamespacePrefix + "head.001.001."
)

var isoMessageNamespace = regexp.MustCompile(`^urn:iso:std:iso:20022:tech:xsd:([a-z]{4}\.[0-9]{3}\.[0-9]{3}\.[0-9]{2})$`)

// scanResult is what one pass over an XML body found.
type scanResult struct {
	schema   *schema // the message's schema
	wrapped  bool    // the Document sat in an envelope after an AppHdr
	docDepth int     // the level of the Document element: 1 bare, 2 in an envelope, 4 in FedNow's
	fedNow   string  // the FedNow message wrapper element the Document sat in, if any
	problems []FieldError
}

// envState follows the envelope around the Document.
type envState uint8

const (
	envStart envState = iota
	envWantHeader
	envInHeader
	envWantDocument
	envInDocument
	envAfterDocument
	// FedNow's envelope: FedNowIncoming, an optional FedNowTechnicalHeader,
	// then FedNowIncomingMessage holding one message wrapper (for a pacs.008
	// FedNowCustomerCreditTransfer) with the AppHdr and the Document.
	envFedNowRoot
	envFedNowTechHeader
	envFedNowMessage
)

// FedNow envelope elements, as FedNow publishes them.
const (
	fedNowRoot       = "FedNowIncoming"
	fedNowTechHeader = "FedNowTechnicalHeader"
	fedNowMessage    = "FedNowIncomingMessage"
	fedNowDepth      = 4 // the level of the AppHdr and the Document in a FedNow envelope
)

// fedNowWrappers names, per message namespace, the FedNow wrapper element
// that holds it.
var fedNowWrappers = map[string]string{
	NamespacePacs008:    "FedNowCustomerCreditTransfer",
	NamespacePacs004:    "FedNowPaymentReturn",
	NamespacePacs004v10: "FedNowPaymentReturn",
	NamespaceCamt056:    "FedNowReturnRequest",
}

type openElement struct {
	raw      xml.Name // Space holds the prefix
	bindings int      // namespace bindings this element declared
}

type nsBinding struct{ prefix, uri string }

// frame is one element being validated inside the Document.
type frame struct {
	decl       *elementDecl
	skip       bool // not validated: wildcard content or after the first problem
	pos, count int  // content-model cursor: particle index and its occurrences
	text       []byte
	segment    string
}

// scanner makes one streaming pass over an XML body: it enforces the security
// limits, resolves namespaces itself (so an undeclared prefix is an error),
// follows the envelope, and validates the Document against its schema.
type scanner struct {
	accept   []*schema
	open     []openElement
	ns       []nsBinding
	env      envState
	envDepth int  // the level of the AppHdr and the Document in the envelope
	techSeen bool // a FedNowTechnicalHeader was read
	docDepth int
	frames   []frame
	res      scanResult
}

// scanXML checks body and reports which accepted schema its Document uses.
// A *ParseError means the body is unusable; schema problems are returned in
// the result, since the caller still answers those with a status report.
func scanXML(body []byte, accept ...*schema) (*scanResult, error) {
	if len(body) > MaxMessageBytes {
		return nil, &ParseError{Kind: ErrTooLarge, Reason: "over " + strconv.Itoa(MaxMessageBytes) + " bytes"}
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = true
	s := &scanner{accept: accept}
	first, rootDone := true, false
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ParseError{Kind: ErrMalformed, Reason: syntaxReason(err)}
		}
		switch t := tok.(type) {
		case xml.ProcInst:
			if t.Target != "xml" || !first {
				return nil, &ParseError{Kind: ErrForbiddenMarkup, Reason: "processing instruction"}
			}
		case xml.Directive:
			return nil, &ParseError{Kind: ErrForbiddenMarkup, Reason: "DOCTYPE or other declaration"}
		case xml.Comment:
		case xml.StartElement:
			if rootDone {
				return nil, &ParseError{Kind: ErrMalformed, Reason: "content after the root element"}
			}
			if err := s.start(t); err != nil {
				return nil, err
			}
		case xml.EndElement:
			if err := s.end(t); err != nil {
				return nil, err
			}
			rootDone = len(s.open) == 0
		case xml.CharData:
			if err := s.chars(t); err != nil {
				return nil, err
			}
		}
		first = false
	}
	if !rootDone {
		if len(s.open) == 0 {
			return nil, &ParseError{Kind: ErrMalformed, Reason: "no root element"}
		}
		return nil, &ParseError{Kind: ErrMalformed, Reason: "unexpected end of input"}
	}
	return &s.res, nil
}

// syntaxReason keeps the decoder's message but never the offending text.
func syntaxReason(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return "line " + strconv.Itoa(se.Line) + ": not well-formed"
	}
	return "not well-formed"
}

func (s *scanner) start(t xml.StartElement) error {
	if len(s.open)+1 > MaxElementDepth {
		return &ParseError{Kind: ErrTooDeep, Reason: "more than " + strconv.Itoa(MaxElementDepth) + " nested elements"}
	}
	if len(t.Attr) > maxAttributes {
		return &ParseError{Kind: ErrMalformed, Reason: "too many attributes"}
	}
	name, attrs, err := s.bind(t)
	if err != nil {
		return err
	}
	depth := len(s.open)
	switch {
	case depth == 1:
		if name.Local == "Document" {
			return s.startDocument(name, attrs, 1)
		}
		s.res.wrapped = true
		s.env, s.envDepth = envWantHeader, 2
		if name.Local == fedNowRoot {
			s.env, s.envDepth = envFedNowRoot, fedNowDepth
		}
	case s.env == envFedNowTechHeader:
		// The technical header's content is FedNow's own: not read.
	case s.env == envFedNowRoot && depth == 2:
		switch {
		case name.Local == fedNowTechHeader && !s.techSeen:
			s.env, s.techSeen = envFedNowTechHeader, true
		case name.Local == fedNowMessage:
			s.env = envFedNowMessage
		default:
			return &ParseError{Kind: ErrUnsupportedMessage, Path: safeName(name.Local), Reason: "a FedNow envelope holds an optional FedNowTechnicalHeader and then FedNowIncomingMessage"}
		}
	case s.env == envFedNowMessage && depth == 3:
		if !strings.HasPrefix(name.Local, "FedNow") {
			return &ParseError{Kind: ErrUnsupportedMessage, Path: safeName(name.Local), Reason: "FedNowIncomingMessage holds one FedNow message wrapper"}
		}
		s.res.fedNow = name.Local
		s.env = envWantHeader
	case s.env == envWantHeader && depth == s.envDepth:
		if name.Local != "AppHdr" || !validHeadNamespace(name.Space) {
			return &ParseError{Kind: ErrUnsupportedMessage, Path: safeName(name.Local), Reason: "an envelope must hold a head.001 AppHdr and then the Document"}
		}
		s.env = envInHeader
	case s.env == envWantDocument && depth == s.envDepth:
		if name.Local != "Document" {
			return &ParseError{Kind: ErrUnsupportedMessage, Path: safeName(name.Local), Reason: "the AppHdr must be followed by the Document"}
		}
		if s.res.fedNow != "" && fedNowWrappers[name.Space] != s.res.fedNow {
			return &ParseError{Kind: ErrUnsupportedMessage, Path: safeName(s.res.fedNow), Reason: "the FedNow wrapper does not hold this message"}
		}
		return s.startDocument(name, attrs, s.envDepth)
	case s.env == envAfterDocument && depth <= s.envDepth:
		return &ParseError{Kind: ErrUnsupportedMessage, Path: safeName(name.Local), Reason: "nothing may follow the Document in the envelope"}
	case s.env == envInDocument:
		s.startChild(name, attrs)
	case s.res.wrapped && depth < s.envDepth:
		return &ParseError{Kind: ErrUnsupportedMessage, Path: safeName(name.Local), Reason: "an envelope must hold a head.001 AppHdr and then the Document"}
	}
	return nil
}

func validHeadNamespace(ns string) bool {
	v, ok := strings.CutPrefix(ns, headNamespacePrefix)
	return ok && len(v) == 2 && v[0] >= '0' && v[0] <= '9' && v[1] >= '0' && v[1] <= '9'
}

func (s *scanner) startDocument(name xml.Name, attrs []xml.Attr, depth int) error {
	for _, sc := range s.accept {
		if sc.namespace == name.Space {
			s.res.schema = sc
			s.env = envInDocument
			s.docDepth = depth
			s.res.docDepth = depth
			s.frames = append(s.frames[:0], frame{decl: &sc.root, segment: "Document"})
			s.checkAttributes(&s.frames[0], attrs)
			return nil
		}
	}
	reason := "the Document's namespace is not accepted here"
	if m := isoMessageNamespace.FindStringSubmatch(name.Space); m != nil {
		reason = m[1] + " is not accepted here"
	}
	return &ParseError{Kind: ErrUnsupportedMessage, Path: "Document", Reason: reason}
}

func (s *scanner) end(t xml.EndElement) error {
	n := len(s.open)
	if n == 0 {
		return &ParseError{Kind: ErrMalformed, Reason: "unexpected end tag"}
	}
	top := s.open[n-1]
	if top.raw != t.Name {
		return &ParseError{Kind: ErrMalformed, Reason: "end tag does not match its start tag"}
	}
	switch {
	case s.env == envInDocument:
		s.endChild()
		if n == s.docDepth {
			s.env = envAfterDocument
		}
	case s.env == envFedNowTechHeader:
		if n == 2 {
			s.env = envFedNowRoot
		}
	case s.env == envInHeader && n == s.envDepth:
		s.env = envWantDocument
	case s.res.wrapped && n < s.envDepth && s.env != envAfterDocument:
		return &ParseError{Kind: ErrUnsupportedMessage, Reason: "the envelope holds no Document"}
	}
	s.ns = s.ns[:len(s.ns)-top.bindings]
	s.open = s.open[:n-1]
	return nil
}

func (s *scanner) chars(t xml.CharData) error {
	depth := len(s.open)
	switch {
	case depth == 0 || (s.res.wrapped && depth < s.envDepth && s.env != envFedNowTechHeader):
		if len(bytes.Trim(t, xmlSpace)) != 0 {
			return &ParseError{Kind: ErrMalformed, Reason: "text outside the Document"}
		}
	case s.env == envInDocument:
		s.text(t)
	}
	return nil
}

// bind applies the element's namespace declarations and resolves the prefixes
// of the element and its attributes.
func (s *scanner) bind(t xml.StartElement) (xml.Name, []xml.Attr, error) {
	el := openElement{raw: t.Name}
	for _, a := range t.Attr {
		switch {
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			s.ns = append(s.ns, nsBinding{"", a.Value})
			el.bindings++
		case a.Name.Space == "xmlns":
			if a.Value == "" || a.Name.Local == "xmlns" || (a.Name.Local == "xml") != (a.Value == xmlNamespace) {
				return xml.Name{}, nil, &ParseError{Kind: ErrMalformed, Reason: "invalid namespace declaration"}
			}
			s.ns = append(s.ns, nsBinding{a.Name.Local, a.Value})
			el.bindings++
		}
	}
	s.open = append(s.open, el)
	space, ok := s.lookup(t.Name.Space)
	if !ok {
		return xml.Name{}, nil, &ParseError{Kind: ErrMalformed, Reason: "undeclared namespace prefix"}
	}
	name := xml.Name{Space: space, Local: t.Name.Local}
	attrs := make([]xml.Attr, 0, len(t.Attr))
	for _, a := range t.Attr {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		rn := a.Name
		if rn.Space != "" {
			if rn.Space, ok = s.lookup(rn.Space); !ok || rn.Space == "" {
				return xml.Name{}, nil, &ParseError{Kind: ErrMalformed, Reason: "undeclared namespace prefix"}
			}
		}
		for _, b := range attrs {
			if b.Name == rn {
				return xml.Name{}, nil, &ParseError{Kind: ErrMalformed, Reason: "duplicate attribute"}
			}
		}
		attrs = append(attrs, xml.Attr{Name: rn, Value: a.Value})
	}
	return name, attrs, nil
}

func (s *scanner) lookup(prefix string) (string, bool) {
	if prefix == "xml" {
		return xmlNamespace, true
	}
	for i := len(s.ns) - 1; i >= 0; i-- {
		if s.ns[i].prefix == prefix {
			return s.ns[i].uri, true
		}
	}
	return "", prefix == ""
}

// fail records the first schema problem; the rest of the Document is only
// scanned for well-formedness and the security limits.
func (s *scanner) fail(path, reason string) {
	if len(s.res.problems) == 0 {
		s.res.problems = append(s.res.problems, FieldError{Path: path, Code: ReasonFF01, Reason: reason})
	}
}

func (s *scanner) failed() bool { return len(s.res.problems) > 0 }

func (s *scanner) path(extra string) string {
	segs := make([]string, 0, len(s.frames)+1)
	for _, f := range s.frames {
		segs = append(segs, f.segment)
	}
	if extra != "" {
		segs = append(segs, extra)
	}
	if len(segs) > 2 {
		segs = segs[2:]
	}
	return strings.Join(segs, "/")
}

func (s *scanner) startChild(name xml.Name, attrs []xml.Attr) {
	parent := &s.frames[len(s.frames)-1]
	if s.failed() || parent.skip {
		s.frames = append(s.frames, frame{skip: true})
		return
	}
	ct := parent.decl.complex
	switch {
	case ct == nil || ct.kind == textContent:
		s.fail(s.path(safeName(name.Local)), "element not allowed inside a text-only element")
	case ct.kind == anyContent:
		parent.count++
		if parent.count > 1 {
			s.fail(s.path(safeName(name.Local)), "the supplementary data envelope holds exactly one element")
		}
	case name.Space != s.res.schema.namespace:
		s.fail(s.path(safeName(name.Local)), "element is not in the message's namespace")
	default:
		decl, index, reason := parent.accept(name.Local)
		if decl == nil {
			s.fail(s.path(safeName(name.Local)), reason)
			break
		}
		seg := decl.name
		if decl.max != 1 {
			seg += "[" + strconv.Itoa(index) + "]"
		}
		s.frames = append(s.frames, frame{decl: decl, segment: seg})
		s.checkAttributes(&s.frames[len(s.frames)-1], attrs)
		return
	}
	s.frames = append(s.frames, frame{skip: true})
}

// accept moves the content-model cursor over a child element named local. It
// returns the child's declaration and 1-based occurrence, or a reason.
func (f *frame) accept(local string) (*elementDecl, int, string) {
	els := f.decl.complex.elements
	if f.decl.complex.kind == choiceContent {
		if f.count == 0 {
			for i := range els {
				if els[i].name == local {
					f.pos, f.count = i, 1
					return &els[i], 1, ""
				}
			}
			return nil, 0, "element not allowed here; expected one of " + names(els)
		}
		e := &els[f.pos]
		if e.name == local && (e.max < 0 || f.count < e.max) {
			f.count++
			return e, f.count, ""
		}
		return nil, 0, "element not allowed after the choice of " + e.name
	}
	for f.pos < len(els) {
		e := &els[f.pos]
		if e.name == local && (e.max < 0 || f.count < e.max) {
			f.count++
			return e, f.count, ""
		}
		if f.count < e.min {
			return nil, 0, "element not allowed here; expected " + e.name
		}
		f.pos++
		f.count = 0
	}
	return nil, 0, "element not allowed here"
}

// missing names a required child that never came, or "".
func (f *frame) missing() string {
	ct := f.decl.complex
	switch ct.kind {
	case sequenceContent:
		for i := f.pos; i < len(ct.elements); i++ {
			n := 0
			if i == f.pos {
				n = f.count
			}
			if n < ct.elements[i].min {
				return "missing " + ct.elements[i].name
			}
		}
	case choiceContent:
		if f.count == 0 {
			return "missing one of " + names(ct.elements)
		}
	case anyContent:
		if f.count == 0 {
			return "the supplementary data envelope holds exactly one element"
		}
	}
	return ""
}

func names(els []elementDecl) string {
	out := make([]string, len(els))
	for i := range els {
		out[i] = els[i].name
	}
	return strings.Join(out, ", ")
}

func (s *scanner) text(t xml.CharData) {
	f := &s.frames[len(s.frames)-1]
	if f.skip || s.failed() {
		return
	}
	if f.decl.simple != nil || f.decl.complex.kind == textContent {
		f.text = append(f.text, t...)
		return
	}
	if len(bytes.Trim(t, xmlSpace)) != 0 {
		s.fail(s.path(""), "text not allowed in "+f.decl.name)
	}
}

func (s *scanner) endChild() {
	f := &s.frames[len(s.frames)-1]
	if !f.skip && !s.failed() {
		var reason string
		switch {
		case f.decl.simple != nil:
			reason = f.decl.simple.check(string(f.text))
		case f.decl.complex.kind == textContent:
			reason = f.decl.complex.text.check(string(f.text))
		default:
			reason = f.missing()
		}
		if reason != "" {
			s.fail(s.path(""), reason)
		}
	}
	s.frames = s.frames[:len(s.frames)-1]
}

// checkAttributes allows namespace declarations and xsi schema locations
// everywhere, and otherwise only the attributes a simple-content type
// declares (Ccy on amounts).
func (s *scanner) checkAttributes(f *frame, attrs []xml.Attr) {
	var declared []attributeDecl
	if ct := f.decl.complex; ct != nil && ct.kind == textContent {
		declared = ct.attributes
	}
	seen := make([]bool, len(declared))
	for _, a := range attrs {
		if a.Name.Space == xsiNamespace && (a.Name.Local == "schemaLocation" || a.Name.Local == "noNamespaceSchemaLocation") {
			continue
		}
		found := false
		if a.Name.Space == "" {
			for i := range declared {
				if declared[i].name == a.Name.Local {
					found, seen[i] = true, true
					if reason := declared[i].simple.check(a.Value); reason != "" {
						s.fail(s.path("@"+declared[i].name), reason)
					}
				}
			}
		}
		if !found {
			s.fail(s.path(""), "attribute not allowed: "+safeName(a.Name.Local))
		}
	}
	for i := range declared {
		if declared[i].required && !seen[i] {
			s.fail(s.path(""), "missing attribute "+declared[i].name)
		}
	}
}
