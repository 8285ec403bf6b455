package apidocs

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/payd/payd/internal/sdkgen/naming"
)

// Languages are the languages of every operation's samples, in the order the
// page shows them.
var Languages = []string{"curl", "Go", "TypeScript", "Python"}

// Samples are one operation's request written in each language: curl, Go
// (package client), TypeScript (@payd/payd) and Python (payd). They are
// generated from the API description: the path and method, the required
// query parameters and headers from their examples, the request body from
// the media type's example (or one built from the schema's examples), an
// Idempotency-Key where the operation requires one, and the API key unless
// the operation is public. Methods are named by the SDK generator's rules
// (package naming).
type Samples struct {
	OperationID string
	Method      string // GET, POST, ...
	Path        string // as the document writes it, "/v1/refunds/{id}"
	PathParams  []string
	Public      bool
	Idempotent  bool     // Idempotency-Key required
	Status      string   // the first success status the document lists
	Statuses    []string // every success status the document lists
	Code        map[string]string
}

// SampleValues are what samples are written with. The page uses the zero
// value (examples of the document, a local payd, $PAYD_API_KEY); the test
// that runs the samples substitutes the ids and the server it made.
type SampleValues struct {
	BaseURL        string            // default: the document's first server
	PathParams     map[string]string // default: each parameter's example
	IdempotencyKey string            // default: "order-1001"
	// Substitute, when set, replaces each string of the request (path
	// parameters, query values, header values, the body's strings) written
	// from an example: the test that runs the samples swaps the document's
	// example ids for ids of objects it made.
	Substitute func(example string) string
}

// Sample is an operation of the document with what its samples are made of.
type sampleOp struct {
	Samples
	query   [][2]string // required query parameters and their examples
	headers [][2]string // required headers other than Idempotency-Key
	body    *yaml.Node  // the JSON request body, or nil
	bodyGo  string      // the Go type of the body (package client)
	paramEx map[string]string
}

// SampleSet is every operation's samples, in the document's order.
type SampleSet struct {
	d       *document
	ops     []*sampleOp
	baseURL string
}

// LoadSamples reads an OpenAPI document and prepares the samples of its
// operations.
func LoadSamples(spec []byte) (*SampleSet, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(spec, &root); err != nil {
		return nil, fmt.Errorf("apidocs: parse OpenAPI document: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("apidocs: the OpenAPI document is not a mapping")
	}
	return (&document{root: root.Content[0]}).samples()
}

func (d *document) samples() (*SampleSet, error) {
	set := &SampleSet{d: d, baseURL: "http://127.0.0.1:8080"}
	if servers := get(d.root, "servers"); servers != nil && len(servers.Content) > 0 {
		if u := str(servers.Content[0], "url"); u != "" {
			set.baseURL = strings.TrimSuffix(u, "/")
		}
	}
	for _, o := range d.operations() {
		if o.method == "options" {
			continue // CORS preflights: browsers send those themselves
		}
		s, err := d.sampleOp(o)
		if err != nil {
			return nil, err
		}
		set.ops = append(set.ops, s)
	}
	return set, nil
}

// Operations lists every operation's samples, written with values.
func (set *SampleSet) Operations(values SampleValues) []Samples {
	var out []Samples
	for _, o := range set.ops {
		out = append(out, set.write(o, values))
	}
	return out
}

// Operation returns one operation's samples written with values.
func (set *SampleSet) Operation(operationID string, values SampleValues) (Samples, bool) {
	for _, o := range set.ops {
		if o.OperationID == operationID {
			return set.write(o, values), true
		}
	}
	return Samples{}, false
}

func (d *document) sampleOp(o operation) (*sampleOp, error) {
	id := str(o.op, "operationId")
	s := &sampleOp{Samples: Samples{OperationID: id, Method: strings.ToUpper(o.method), Path: o.path}, paramEx: map[string]string{}}
	if sec := get(o.op, "security"); sec != nil && sec.Kind == yaml.SequenceNode && len(sec.Content) == 0 {
		s.Public = true
	}
	for _, seg := range strings.Split(o.path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			s.PathParams = append(s.PathParams, strings.Trim(seg, "{}"))
		}
	}
	for _, list := range []*yaml.Node{get(o.item, "parameters"), get(o.op, "parameters")} {
		for _, p := range seq(list) {
			p = d.deref(p)
			name, in := str(p, "name"), str(p, "in")
			ex := str(p, "example")
			if ex == "" {
				ex = str(get(p, "schema"), "example")
			}
			if ex == "" {
				if e := get(get(p, "schema"), "examples"); e != nil && len(e.Content) > 0 {
					ex = e.Content[0].Value
				}
			}
			required := str(p, "required") == "true"
			switch in {
			case "path":
				s.paramEx[name] = ex
			case "query":
				if required {
					if ex == "" {
						ex = "{" + name + "}" // a placeholder the reader fills in
					}
					s.query = append(s.query, [2]string{name, ex})
				}
			case "header":
				if name == "Idempotency-Key" {
					s.Idempotent = required
				} else if required {
					s.headers = append(s.headers, [2]string{name, ex})
				}
			}
		}
	}
	for code := range pairsKeys(get(o.op, "responses")) {
		if strings.HasPrefix(code, "2") {
			if s.Status == "" {
				s.Status = code
			}
			s.Statuses = append(s.Statuses, code)
		}
	}
	if rb := d.deref(get(o.op, "requestBody")); rb != nil {
		mt := get(get(rb, "content"), "application/json")
		if mt == nil {
			return nil, fmt.Errorf("apidocs: %s: request body without application/json", id)
		}
		schema := get(mt, "schema")
		switch {
		case get(mt, "example") != nil:
			s.body = get(mt, "example")
		case get(mt, "examples") != nil && len(get(mt, "examples").Content) > 1:
			s.body = get(d.deref(get(mt, "examples").Content[1]), "value")
		default:
			s.body = d.exampleOf(schema, 0)
		}
		if s.body == nil {
			s.body = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		// The Go type of the body, as the SDK generator names it: a named
		// schema keeps its name, an inline one is named after the operation.
		if _, name := refName(schema); name != "" {
			s.bodyGo = name
		} else {
			s.bodyGo = naming.Pascal(id) + "Request"
		}
	}
	return s, nil
}

// pairsKeys returns the keys of a mapping in order, as a range function.
func pairsKeys(n *yaml.Node) func(func(string) bool) {
	return func(yield func(string) bool) {
		for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if !yield(n.Content[i].Value) {
				return
			}
		}
	}
}

// exampleOf builds a value for a schema from its examples: an object of its
// required properties, each from its example, default, const or first enum
// value. It returns nil when it cannot.
func (d *document) exampleOf(s *yaml.Node, depth int) *yaml.Node {
	s = d.deref(s)
	if s == nil || depth > 6 {
		return nil
	}
	if ex := get(s, "example"); ex != nil {
		return ex
	}
	if ex := get(s, "examples"); ex != nil && ex.Kind == yaml.SequenceNode && len(ex.Content) > 0 {
		return ex.Content[0]
	}
	for _, k := range []string{"default", "const"} {
		if v := get(s, k); v != nil {
			return v
		}
	}
	if e := get(s, "enum"); e != nil && len(e.Content) > 0 {
		return e.Content[0]
	}
	for _, kw := range []string{"allOf", "oneOf", "anyOf"} {
		for _, alt := range seq(get(s, kw)) {
			if v := d.exampleOf(alt, depth+1); v != nil {
				return v
			}
		}
	}
	if props := get(s, "properties"); props != nil {
		out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, r := range seq(get(s, "required")) {
			v := d.exampleOf(get(props, r.Value), depth+1)
			if v == nil {
				return nil
			}
			out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: r.Value}, v)
		}
		return out
	}
	return nil
}

func (set *SampleSet) write(o *sampleOp, v SampleValues) Samples {
	base := v.BaseURL
	if base == "" {
		base = set.baseURL
	}
	key := v.IdempotencyKey
	if key == "" {
		key = "order-1001"
	}
	sub := v.Substitute
	if sub == nil {
		sub = func(s string) string { return s }
	}
	param := func(name string) string {
		if x, ok := v.PathParams[name]; ok {
			return x
		}
		if x := o.paramEx[name]; x != "" {
			return sub(x)
		}
		return "{" + name + "}"
	}
	if v.Substitute != nil {
		c := *o
		c.query = nil
		for _, kv := range o.query {
			c.query = append(c.query, [2]string{kv[0], sub(kv[1])})
		}
		c.headers = nil
		for _, kv := range o.headers {
			c.headers = append(c.headers, [2]string{kv[0], sub(kv[1])})
		}
		if o.body != nil {
			c.body = substitute(o.body, sub)
		}
		o = &c
	}
	path := o.Path
	for _, p := range o.PathParams {
		path = strings.Replace(path, "{"+p+"}", param(p), 1)
	}
	s := o.Samples
	s.Code = map[string]string{
		"curl":       set.curl(o, base+path, key),
		"Go":         set.golang(o, base, key, param),
		"TypeScript": set.typescript(o, base, key, param),
		"Python":     set.python(o, base, key, param),
	}
	return s
}

// substitute copies a YAML value with sub applied to its strings.
func substitute(n *yaml.Node, sub func(string) string) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	c := *n
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "") {
		c.Value = sub(n.Value)
		return &c
	}
	c.Content = nil
	for i, e := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			c.Content = append(c.Content, e)
			continue
		}
		c.Content = append(c.Content, substitute(e, sub))
	}
	return &c
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (set *SampleSet) curl(o *sampleOp, url, idemKey string) string {
	if len(o.query) > 0 {
		var q []string
		for _, kv := range o.query {
			q = append(q, kv[0]+"="+kv[1])
		}
		url += "?" + strings.Join(q, "&")
	}
	lines := []string{"curl -sS"}
	if o.Method != "GET" {
		lines[0] += " -X " + o.Method
	}
	lines[0] += " " + shellQuote(url)
	if !o.Public {
		lines = append(lines, `-H "Authorization: Bearer $PAYD_API_KEY"`)
	}
	if o.Idempotent {
		lines = append(lines, "-H "+shellQuote("Idempotency-Key: "+idemKey))
	}
	for _, h := range o.headers {
		lines = append(lines, "-H "+shellQuote(h[0]+": "+h[1]))
	}
	if o.body != nil {
		var b strings.Builder
		writeJSON(&b, o.body, "")
		lines = append(lines, `-H "Content-Type: application/json"`, "-d "+shellQuote(b.String()))
	}
	return strings.Join(lines, " \\\n  ")
}

// goString quotes s as a Go string literal, raw when it can be.
func goString(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return fmt.Sprintf("%q", s)
}

func (set *SampleSet) golang(o *sampleOp, base, idemKey string, param func(string) string) string {
	var b strings.Builder
	name := naming.Pascal(o.OperationID)
	b.WriteString("ctx := context.Background()\n")
	key := `os.Getenv("PAYD_API_KEY")`
	fmt.Fprintf(&b, "c := client.New(%s, client.WithBaseURL(%q))\n", key, base)
	args := []string{"ctx"}
	for _, p := range o.PathParams {
		args = append(args, fmt.Sprintf("%q", param(p)))
	}
	if o.body != nil {
		var j strings.Builder
		writeJSON(&j, o.body, "")
		fmt.Fprintf(&b, "var params client.%s\nif err := json.Unmarshal([]byte(%s), &params); err != nil {\n\tlog.Fatal(err)\n}\n", o.bodyGo, goString(j.String()))
		args = append(args, "&params")
	}
	if o.hasQuery(set) {
		if len(o.query) == 0 {
			args = append(args, "nil")
		} else {
			var fields []string
			for _, kv := range o.query {
				fields = append(fields, fmt.Sprintf("%s: %s", naming.Pascal(kv[0]), set.goQueryValue(o, kv)))
			}
			args = append(args, fmt.Sprintf("&client.%sParams{%s}", name, strings.Join(fields, ", ")))
		}
	}
	if o.Idempotent {
		args = append(args, fmt.Sprintf("client.WithIdempotencyKey(%q)", idemKey))
	}
	for _, h := range o.headers {
		args = append(args, fmt.Sprintf("client.WithHeader(%q, %q)", h[0], h[1]))
	}
	if set.returnsNothing(o) {
		fmt.Fprintf(&b, "if err := c.%s(%s); err != nil {\n\tlog.Fatal(err)\n}\n", name, strings.Join(args, ", "))
		return b.String()
	}
	fmt.Fprintf(&b, "res, err := c.%s(%s)\nif err != nil {\n\tlog.Fatal(err)\n}\n", name, strings.Join(args, ", "))
	if set.streams(o) {
		b.WriteString("defer res.Close()\n")
	} else {
		b.WriteString("fmt.Printf(\"%+v\\n\", res)\n")
	}
	return b.String()
}

// hasQuery reports whether the operation takes query parameters (the SDKs
// then take a query argument).
func (o *sampleOp) hasQuery(set *SampleSet) bool {
	op := set.d.opNode(o)
	for _, list := range []*yaml.Node{get(op.item, "parameters"), get(op.op, "parameters")} {
		for _, p := range seq(list) {
			if str(set.d.deref(p), "in") == "query" {
				return true
			}
		}
	}
	return false
}

func (d *document) opNode(o *sampleOp) operation {
	item := get(get(d.root, "paths"), o.Path)
	return operation{method: strings.ToLower(o.Method), path: o.Path, item: item, op: get(item, strings.ToLower(o.Method))}
}

// goQueryValue writes a query parameter's example as a Go literal of its
// schema's type.
func (set *SampleSet) goQueryValue(o *sampleOp, kv [2]string) string {
	op := set.d.opNode(o)
	for _, list := range []*yaml.Node{get(op.item, "parameters"), get(op.op, "parameters")} {
		for _, p := range seq(list) {
			p = set.d.deref(p)
			if str(p, "name") == kv[0] && str(p, "in") == "query" {
				if t := str(set.d.deref(get(p, "schema")), "type"); t == "integer" || t == "number" || t == "boolean" {
					return kv[1]
				}
			}
		}
	}
	return fmt.Sprintf("%q", kv[1])
}

// successContent is the content of the operation's first success response.
func (set *SampleSet) successContent(o *sampleOp) *yaml.Node {
	op := set.d.opNode(o)
	return get(set.d.deref(get(get(op.op, "responses"), o.Status)), "content")
}

func (set *SampleSet) streams(o *sampleOp) bool {
	return get(set.successContent(o), "text/event-stream") != nil
}

// returnsNothing reports whether the SDK method returns no value: no JSON
// answer, no stream.
func (set *SampleSet) returnsNothing(o *sampleOp) bool {
	c := set.successContent(o)
	return get(c, "application/json") == nil && get(c, "text/event-stream") == nil
}

func (set *SampleSet) typescript(o *sampleOp, base, idemKey string, param func(string) string) string {
	var b strings.Builder
	key := "process.env.PAYD_API_KEY!"
	fmt.Fprintf(&b, "import { Payd } from \"@payd/payd\";\n\nconst payd = new Payd(%s, { baseURL: %q });\n", key, base)
	var args []string
	for _, p := range o.PathParams {
		args = append(args, fmt.Sprintf("%q", param(p)))
	}
	if o.body != nil {
		var j strings.Builder
		writeJSON(&j, o.body, "")
		args = append(args, j.String())
	}
	var opts []string
	if o.Idempotent {
		opts = append(opts, fmt.Sprintf("idempotencyKey: %q", idemKey))
	}
	if len(o.headers) > 0 {
		var hs []string
		for _, h := range o.headers {
			hs = append(hs, fmt.Sprintf("%q: %q", h[0], h[1]))
		}
		opts = append(opts, "headers: { "+strings.Join(hs, ", ")+" }")
	}
	if o.hasQuery(set) && (len(o.query) > 0 || len(opts) > 0) {
		var fields []string
		for _, kv := range o.query {
			fields = append(fields, fmt.Sprintf("%q: %s", kv[0], set.goQueryValue(o, kv)))
		}
		args = append(args, "{ "+strings.Join(fields, ", ")+" }")
	}
	if len(opts) > 0 {
		args = append(args, "{ "+strings.Join(opts, ", ")+" }")
	}
	call := fmt.Sprintf("payd.%s(%s)", naming.Camel(o.OperationID), strings.Join(args, ", "))
	switch {
	case set.returnsNothing(o):
		fmt.Fprintf(&b, "await %s;\n", call)
	case set.streams(o):
		fmt.Fprintf(&b, "const stream = await %s;\nstream.close();\n", call)
	default:
		fmt.Fprintf(&b, "const res = await %s;\nconsole.log(res);\n", call)
	}
	return b.String()
}

// pyLiteral writes a YAML value as a Python literal.
func pyLiteral(b *strings.Builder, n *yaml.Node, indent string) {
	switch n.Kind {
	case yaml.AliasNode:
		pyLiteral(b, n.Alias, indent)
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i := 0; i+1 < len(n.Content); i += 2 {
			b.WriteString(indent + "    " + jsonString(n.Content[i].Value) + ": ")
			pyLiteral(b, n.Content[i+1], indent+"    ")
			b.WriteString(",\n")
		}
		b.WriteString(indent + "}")
	case yaml.SequenceNode:
		b.WriteString("[")
		for i, v := range n.Content {
			if i > 0 {
				b.WriteString(", ")
			}
			pyLiteral(b, v, indent)
		}
		b.WriteString("]")
	default:
		switch n.Tag {
		case "!!int", "!!float":
			b.WriteString(n.Value)
		case "!!bool":
			if n.Value == "true" {
				b.WriteString("True")
			} else {
				b.WriteString("False")
			}
		case "!!null":
			b.WriteString("None")
		default:
			b.WriteString(jsonString(n.Value))
		}
	}
}

func (set *SampleSet) python(o *sampleOp, base, idemKey string, param func(string) string) string {
	var b strings.Builder
	key := `os.environ["PAYD_API_KEY"]`
	fmt.Fprintf(&b, "import os\nfrom payd import Payd\n\npayd = Payd(%s, base_url=%q)\n", key, base)
	var args []string
	for _, p := range o.PathParams {
		args = append(args, fmt.Sprintf("%q", param(p)))
	}
	if o.body != nil {
		var j strings.Builder
		pyLiteral(&j, o.body, "")
		args = append(args, j.String())
	}
	if len(o.query) > 0 {
		var fields []string
		for _, kv := range o.query {
			v := set.goQueryValue(o, kv)
			if v == "true" || v == "false" {
				v = strings.ToUpper(v[:1]) + v[1:]
			}
			fields = append(fields, fmt.Sprintf("%q: %s", kv[0], v))
		}
		args = append(args, "{"+strings.Join(fields, ", ")+"}")
	}
	if o.Idempotent {
		args = append(args, fmt.Sprintf("idempotency_key=%q", idemKey))
	}
	if len(o.headers) > 0 {
		var hs []string
		for _, h := range o.headers {
			hs = append(hs, fmt.Sprintf("%q: %q", h[0], h[1]))
		}
		args = append(args, "headers={"+strings.Join(hs, ", ")+"}")
	}
	call := fmt.Sprintf("payd.%s(%s)", naming.Snake(o.OperationID), strings.Join(args, ", "))
	switch {
	case set.returnsNothing(o):
		fmt.Fprintf(&b, "%s\n", call)
	case set.streams(o):
		fmt.Fprintf(&b, "stream = %s\nstream.close()\n", call)
	default:
		fmt.Fprintf(&b, "res = %s\nprint(res)\n", call)
	}
	return b.String()
}
