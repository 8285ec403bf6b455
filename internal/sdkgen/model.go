// Package sdkgen reads api/openapi.yaml and writes the generated halves of
// payd's SDKs: the Go types and methods of package client, and the
// TypeScript types and methods of sdk/typescript. The hand-written halves
// (transport, retries, errors, pagination) live beside them. Tests compare
// the committed files with what Generate produces, so an SDK cannot drift
// from the document.
package sdkgen

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/payd/payd/internal/sdkgen/naming"
)

// Model is what both SDKs are generated from.
type Model struct {
	Types []*Type
	Ops   []*Op
	byKey map[string]*Type // component name or synthesized name
}

// Type is a named type: a struct (Fields) or a string enum (Enum).
type Type struct {
	Name   string
	Doc    string
	Fields []*Field
	Enum   []string // a named string type with these values
	Input  bool     // reachable from a request body or query: optional scalars are pointers in Go
}

// Field is one property of a struct type.
type Field struct {
	JSON     string
	Doc      string
	Ref      TypeRef
	Required bool
}

// TypeRef is a use of a type.
type TypeRef struct {
	Kind     string // "string","int","int64","number","bool","time","raw","map","array","named","any"
	Named    string // for "named"
	Elem     *TypeRef
	Nullable bool
	Enum     []string // inline string enum (TypeScript only; Go uses string)
}

// StatusResult is the schema one success status answers.
type StatusResult struct {
	Status int
	Ref    TypeRef
}

// Param is a query parameter.
type Param struct {
	Name     string
	Ref      TypeRef
	Required bool
	Doc      string
}

// Op is one operation of the document.
type Op struct {
	Name       string // lowerCamel, e.g. createPaymentIntent
	Method     string
	Path       string
	Summary    string
	PathParams []string
	Query      []Param
	Headers    []Param // header parameters other than Idempotency-Key
	Body       *TypeRef
	BodyAlt    []string       // other request content types the operation accepts
	Result     *TypeRef       // nil: no body
	Results    []StatusResult // when 2xx statuses answer different schemas
	Stream     bool           // text/event-stream
	ListItem   *TypeRef       // a list: the type of data's items
	Cursor     string         // JSON name of the item's cursor field
	Paginated  bool           // has starting_after
	AltStatus  []int          // non-2xx statuses whose body is the result type
	Public     bool           // security: [] (no key needed)
	NeedsIdem  bool           // Idempotency-Key required
	QueryName  string         // name of the query params type
	Deprecated bool
}

// Key returns "METHOD /path".
func (o *Op) Key() string { return o.Method + " " + o.Path }

// Load reads the document at path.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api/openapi.yaml: %w", err)
	}
	return build(doc)
}

// Operations lists "METHOD /path" of every operation of the document at
// path, the set the SDKs must cover (CORS preflights excluded: browsers send
// those themselves).
func Operations(path string) ([]string, error) {
	m, err := Load(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range m.Ops {
		out = append(out, o.Key())
	}
	return out, nil
}

type builder struct {
	doc *openapi3.T
	m   *Model
	src map[string]*openapi3.Schema
}

var methodOrder = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

func build(doc *openapi3.T) (*Model, error) {
	b := &builder{doc: doc, m: &Model{byKey: map[string]*Type{}}, src: map[string]*openapi3.Schema{}}
	paths := doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	names := map[string]string{}
	for _, p := range keys {
		item := paths[p]
		for _, method := range methodOrder {
			op := item.GetOperation(method)
			if op == nil {
				continue
			}
			o, err := b.op(method, p, item, op)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, p, err)
			}
			if prev, dup := names[o.Name]; dup {
				return nil, fmt.Errorf("%s %s: name %s already used by %s", method, p, o.Name, prev)
			}
			names[o.Name] = o.Key()
			b.m.Ops = append(b.m.Ops, o)
		}
	}
	for _, o := range b.m.Ops {
		o := o
		b.m.markInput(o.Body)
		for i := range o.Query {
			b.m.markInput(&o.Query[i].Ref)
		}
	}
	sort.SliceStable(b.m.Types, func(i, j int) bool { return b.m.Types[i].Name < b.m.Types[j].Name })
	return b.m, nil
}

func (b *builder) op(method, path string, item *openapi3.PathItem, op *openapi3.Operation) (*Op, error) {
	o := &Op{Method: method, Path: path, Summary: strings.TrimSpace(op.Summary), Deprecated: op.Deprecated}
	// Methods are named after operationIds, so the SDKs and the document
	// speak of an operation by one name.
	o.Name = op.OperationID
	if o.Name == "" {
		return nil, fmt.Errorf("no operationId")
	}
	if op.Security != nil && len(*op.Security) == 0 {
		o.Public = true
	}
	params := append(openapi3.Parameters{}, item.Parameters...)
	params = append(params, op.Parameters...)
	for _, pr := range params {
		p := pr.Value
		switch p.In {
		case "path":
			if !slices.Contains(o.PathParams, p.Name) {
				o.PathParams = append(o.PathParams, p.Name)
			}
		case "query":
			ref, err := b.ref(p.Schema, pascal(o.Name)+pascal(p.Name))
			if err != nil {
				return nil, err
			}
			o.Query = append(o.Query, Param{Name: p.Name, Ref: ref, Required: p.Required, Doc: firstLine(p.Description)})
			if p.Name == "starting_after" {
				o.Paginated = true
			}
		case "header":
			if p.Name == "Idempotency-Key" {
				o.NeedsIdem = p.Required
				continue
			}
			o.Headers = append(o.Headers, Param{Name: p.Name, Required: p.Required, Doc: firstLine(p.Description)})
		}
	}
	// Path parameters in the order the path names them.
	var ordered []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			ordered = append(ordered, strings.Trim(seg, "{}"))
		}
	}
	o.PathParams = ordered
	if len(o.Query) > 0 {
		o.QueryName = pascal(o.Name) + "Params"
	}
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		var cts []string
		for ct := range rb.Value.Content {
			cts = append(cts, ct)
		}
		sort.Strings(cts)
		for _, ct := range cts {
			mt := rb.Value.Content[ct]
			if ct != "application/json" {
				o.BodyAlt = append(o.BodyAlt, ct)
				continue
			}
			ref, err := b.ref(mt.Schema, pascal(o.Name)+"Request")
			if err != nil {
				return nil, err
			}
			o.Body = &ref
		}
		if o.Body == nil && len(o.BodyAlt) > 0 {
			return nil, fmt.Errorf("request body without application/json")
		}
	}
	// The result: the first 2xx response with JSON or an event stream.
	codes := op.Responses.Map()
	var statuses []string
	for c := range codes {
		statuses = append(statuses, c)
	}
	sort.Strings(statuses)
	var resultSchema *openapi3.SchemaRef
	type answer struct {
		status int
		schema *openapi3.SchemaRef
	}
	var answers []answer
	multi := false
	for _, c := range statuses {
		if !strings.HasPrefix(c, "2") || codes[c].Value == nil {
			continue
		}
		content := codes[c].Value.Content
		if _, ok := content["text/event-stream"]; ok {
			o.Stream = true
			continue
		}
		mt, ok := content["application/json"]
		if !ok || mt.Schema == nil {
			continue
		}
		var n int
		fmt.Sscanf(c, "%d", &n)
		answers = append(answers, answer{n, mt.Schema})
		if resultSchema == nil {
			resultSchema = mt.Schema
		} else if refName(resultSchema) != refName(mt.Schema) {
			multi = true
		}
	}
	if multi {
		for _, a := range answers {
			ref, err := b.ref(a.schema, pascal(trimVerb(o.Name))+"Result")
			if err != nil {
				return nil, err
			}
			if ref.Kind != "named" {
				return nil, fmt.Errorf("2xx responses with different schemas, not all named")
			}
			o.Results = append(o.Results, StatusResult{Status: a.status, Ref: ref})
		}
		return o, nil
	}
	if resultSchema != nil {
		if item, cursor, ok := b.listOf(resultSchema); ok {
			ref, err := b.ref(item, pascal(trimVerb(o.Name))+"Item")
			if err != nil {
				return nil, err
			}
			o.ListItem, o.Cursor = &ref, cursor
		} else {
			ref, err := b.ref(resultSchema, pascal(trimVerb(o.Name))+"Result")
			if err != nil {
				return nil, err
			}
			o.Result = &ref
		}
		for _, c := range statuses {
			if strings.HasPrefix(c, "2") || c == "default" || codes[c].Value == nil {
				continue
			}
			if mt, ok := codes[c].Value.Content["application/json"]; ok && mt.Schema != nil && refName(mt.Schema) == refName(resultSchema) && refName(mt.Schema) != "" {
				var n int
				fmt.Sscanf(c, "%d", &n)
				o.AltStatus = append(o.AltStatus, n)
			}
		}
	}
	return o, nil
}

// listOf reports whether s is a list body and returns its item schema and
// the item's cursor field.
func (b *builder) listOf(s *openapi3.SchemaRef) (*openapi3.SchemaRef, string, bool) {
	props, _ := b.flatten(s)
	data, ok := props["data"]
	_, hasMore := props["has_more"]
	if !ok || !hasMore || data.Value.Items == nil {
		return nil, "", false
	}
	// the last data definition with items wins (allOf of List and its items)
	item := data.Value.Items
	ip, _ := b.flatten(item)
	cursor := "id"
	if _, ok := ip["id"]; !ok {
		if _, ok := ip["uetr"]; ok {
			cursor = "uetr"
		} else {
			cursor = ""
		}
	}
	return item, cursor, true
}

// prop is a property and the name of the component that declares it.
type prop struct {
	schema *openapi3.SchemaRef
	owner  string
}

// flatten returns the properties and required names of an object schema,
// merging allOf (every part) and oneOf/anyOf variants (required only when
// every variant requires it).
func (b *builder) flatten(s *openapi3.SchemaRef) (map[string]*openapi3.SchemaRef, map[string]bool) {
	props, req := b.flattenOwned(s, "")
	out := map[string]*openapi3.SchemaRef{}
	for k, p := range props {
		out[k] = p.schema
	}
	return out, req
}

func (b *builder) flattenOwned(s *openapi3.SchemaRef, owner string) (map[string]prop, map[string]bool) {
	if n := refName(s); n != "" {
		owner = n
	}
	props := map[string]prop{}
	req := map[string]bool{}
	v := s.Value
	for name, p := range v.Properties {
		props[name] = prop{p, owner}
	}
	for _, r := range v.Required {
		req[r] = true
	}
	for _, part := range v.AllOf {
		pp, pr := b.flattenOwned(part, owner)
		for name, p := range pp {
			if old, ok := props[name]; ok && p.schema.Value.Items == nil && old.schema.Value.Items != nil {
				continue
			}
			props[name] = p
		}
		for r := range pr {
			req[r] = true
		}
	}
	var variants openapi3.SchemaRefs
	for _, x := range append(append(openapi3.SchemaRefs{}, v.OneOf...), v.AnyOf...) {
		if len(x.Value.Properties) > 0 || len(x.Value.AllOf) > 0 {
			variants = append(variants, x)
		}
	}
	if len(variants) > 0 {
		counts := map[string]int{}
		for _, x := range variants {
			pp, pr := b.flattenOwned(x, owner)
			for name, p := range pp {
				if _, ok := props[name]; !ok {
					props[name] = p
				}
			}
			for r := range pr {
				counts[r]++
			}
		}
		for r, n := range counts {
			if n == len(variants) {
				req[r] = true
			}
		}
	}
	return props, req
}

func refName(s *openapi3.SchemaRef) string {
	if s == nil || s.Ref == "" {
		return ""
	}
	return s.Ref[strings.LastIndex(s.Ref, "/")+1:]
}

// nullable splits off null: type [X, null] or oneOf/anyOf [null, X].
func nullable(s *openapi3.SchemaRef) (*openapi3.SchemaRef, bool) {
	v := s.Value
	if v.Type != nil && v.Type.Includes("null") {
		if v.Type.Is("null") {
			return s, true
		}
		c := *v
		t := openapi3.Types{}
		for _, x := range v.Type.Slice() {
			if x != "null" {
				t = append(t, x)
			}
		}
		c.Type = &t
		return &openapi3.SchemaRef{Value: &c}, true
	}
	for _, alts := range []openapi3.SchemaRefs{v.OneOf, v.AnyOf} {
		if len(alts) == 2 {
			for i, a := range alts {
				if a.Value.Type != nil && a.Value.Type.Is("null") {
					return alts[1-i], true
				}
			}
		}
	}
	if v.Nullable {
		return s, true
	}
	return s, false
}

func isNullOnly(s *openapi3.SchemaRef) bool {
	return s.Value.Type != nil && s.Value.Type.Is("null")
}

// ref turns a schema into a type use, registering named types as needed.
func (b *builder) ref(s *openapi3.SchemaRef, hint string) (TypeRef, error) {
	inner, null := nullable(s)
	var r TypeRef
	var err error
	if isNullOnly(inner) {
		r = TypeRef{Kind: "any"}
	} else {
		r, err = b.nonNull(inner, hint)
	}
	if null {
		r.Nullable = true
	}
	return r, err
}

func (b *builder) nonNull(s *openapi3.SchemaRef, hint string) (TypeRef, error) {
	v := s.Value
	if name := refName(s); name != "" {
		// Components that are only a name for a simpler type are inlined.
		switch {
		case name == "List" || name == "Error":
			return TypeRef{Kind: "raw"}, nil
		case v.Type != nil && v.Type.Is("string") && len(v.Enum) > 0:
			return TypeRef{Kind: "named", Named: name}, b.enum(name, v)
		case isObjectLike(v) && len(v.Properties)+len(v.AllOf)+len(v.OneOf)+len(v.AnyOf) > 0:
			return TypeRef{Kind: "named", Named: name}, b.object(name, s)
		default:
			c := *s
			c.Ref = ""
			return b.ref(&c, name)
		}
	}
	if len(v.AnyOf)+len(v.OneOf) > 0 && len(v.Properties) == 0 {
		alts := append(append(openapi3.SchemaRefs{}, v.OneOf...), v.AnyOf...)
		allString := true
		for _, a := range alts {
			if a.Value.Type == nil || !a.Value.Type.Is("string") {
				allString = false
			}
		}
		if allString {
			return TypeRef{Kind: "string"}, nil
		}
		hasObj := false
		for _, a := range alts {
			if isObjectLike(a.Value) && (len(a.Value.Properties) > 0 || refName(a) != "") {
				hasObj = true
			}
		}
		if hasObj {
			return TypeRef{Kind: "named", Named: hint}, b.object(hint, s)
		}
		return TypeRef{Kind: "raw"}, nil
	}
	if len(v.AllOf) > 0 {
		return TypeRef{Kind: "named", Named: hint}, b.object(hint, s)
	}
	t := ""
	if v.Type != nil && len(v.Type.Slice()) == 1 {
		t = v.Type.Slice()[0]
	}
	switch t {
	case "string":
		if v.Format == "date-time" {
			return TypeRef{Kind: "time"}, nil
		}
		var enum []string
		for _, e := range v.Enum {
			enum = append(enum, fmt.Sprint(e))
		}
		if c, ok := v.Const.(string); ok {
			enum = []string{c}
		}
		return TypeRef{Kind: "string", Enum: enum}, nil
	case "integer":
		if v.Format == "int64" {
			return TypeRef{Kind: "int64"}, nil
		}
		return TypeRef{Kind: "int"}, nil
	case "number":
		return TypeRef{Kind: "number"}, nil
	case "boolean":
		return TypeRef{Kind: "bool"}, nil
	case "array":
		if v.Items == nil {
			return TypeRef{Kind: "array", Elem: &TypeRef{Kind: "raw"}}, nil
		}
		e, err := b.ref(v.Items, singular(hint))
		return TypeRef{Kind: "array", Elem: &e}, err
	case "object", "":
		// An object that admits any key is a map, even when it documents a
		// few keys (metadata with well-known entries).
		if ap := v.AdditionalProperties.Schema; ap != nil {
			e, err := b.ref(ap, singular(hint))
			return TypeRef{Kind: "map", Elem: &e}, err
		}
		if len(v.Properties) > 0 {
			return TypeRef{Kind: "named", Named: hint}, b.object(hint, s)
		}
		return TypeRef{Kind: "raw"}, nil
	}
	return TypeRef{Kind: "raw"}, nil
}

func isObjectLike(v *openapi3.Schema) bool {
	return v.Type == nil || v.Type.Includes("object")
}

func (b *builder) enum(name string, v *openapi3.Schema) error {
	if _, ok := b.m.byKey[name]; ok {
		return nil
	}
	t := &Type{Name: name, Doc: firstLine(v.Description)}
	for _, e := range v.Enum {
		t.Enum = append(t.Enum, fmt.Sprint(e))
	}
	b.m.byKey[name] = t
	b.m.Types = append(b.m.Types, t)
	return nil
}

func (b *builder) object(name string, s *openapi3.SchemaRef) error {
	if t, ok := b.m.byKey[name]; ok {
		if b.src[name] != s.Value {
			return fmt.Errorf("two different schemas would both be named %s", name)
		}
		_ = t
		return nil
	}
	t := &Type{Name: name, Doc: firstLine(s.Value.Description)}
	b.m.byKey[name] = t
	b.src[name] = s.Value
	b.m.Types = append(b.m.Types, t)
	props, req := b.flattenOwned(s, name)
	names := make([]string, 0, len(props))
	for pn := range props {
		names = append(names, pn)
	}
	sort.Strings(names)
	for _, pn := range names {
		p := props[pn].schema
		r, err := b.ref(p, props[pn].owner+pascal(pn))
		if err != nil {
			return err
		}
		t.Fields = append(t.Fields, &Field{JSON: pn, Doc: firstLine(p.Value.Description), Ref: r, Required: req[pn]})
	}
	return nil
}

// markInput marks the types a request can carry: their optional scalars
// become pointers in Go, so that false and 0 can be sent.
func (m *Model) markInput(r *TypeRef) {
	if r == nil {
		return
	}
	switch r.Kind {
	case "array", "map":
		m.markInput(r.Elem)
	case "named":
		t := m.byKey[r.Named]
		if t == nil || t.Input {
			return
		}
		t.Input = true
		for _, f := range t.Fields {
			m.markInput(&f.Ref)
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func trimVerb(name string) string {
	for _, v := range []string{"list", "get", "create", "update", "delete", "retrieve"} {
		if strings.HasPrefix(name, v) && len(name) > len(v) {
			return name[len(v):]
		}
	}
	return name
}

func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "ches"), strings.HasSuffix(s, "sses"):
		return s[:len(s)-2]
	case strings.HasSuffix(s, "s") && !strings.HasSuffix(s, "ss"):
		return s[:len(s)-1]
	}
	return s + "Item"
}

// pascal, camel and snake are the SDKs' naming rules, kept in package naming
// so the API reference's samples name methods as the SDKs do.
func pascal(s string) string { return naming.Pascal(s) }
func camel(s string) string  { return naming.Camel(s) }
func snake(s string) string  { return naming.Snake(s) }
