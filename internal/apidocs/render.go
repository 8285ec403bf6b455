package apidocs

import (
	"fmt"
	"html"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// document walks the YAML tree of an OpenAPI document in its own order (a
// decoded map would lose the order of paths, properties and example keys).
type document struct {
	root      *yaml.Node
	b         strings.Builder
	sampleSet *SampleSet
	index     []searchEntry // the operations, for /docs?q=
}

// get returns the value of key in a mapping node, or nil.
func get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// str returns the scalar value of key in a mapping node.
func str(n *yaml.Node, key string) string {
	if v := get(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// pairs calls f for each key and value of a mapping node, in order.
func pairs(n *yaml.Node, f func(key string, v *yaml.Node)) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		f(n.Content[i].Value, n.Content[i+1])
	}
}

// refName returns the last segment of a node's local $ref and the section it
// points into ("schemas", "examples", ...).
func refName(n *yaml.Node) (section, name string) {
	ref := str(n, "$ref")
	rest, ok := strings.CutPrefix(ref, "#/components/")
	if !ok {
		return "", ""
	}
	section, name, _ = strings.Cut(rest, "/")
	return section, name
}

// deref follows a local $ref (several in a row if need be).
func (d *document) deref(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n != nil; i++ {
		section, name := refName(n)
		if section == "" {
			return n
		}
		n = get(get(get(d.root, "components"), section), name)
	}
	return n
}

func (d *document) w(parts ...string) {
	for _, p := range parts {
		d.b.WriteString(p)
	}
}

func esc(s string) string { return html.EscapeString(s) }

type operation struct {
	method, path string
	item, op     *yaml.Node
}

var methods = []string{"get", "post", "put", "patch", "delete", "options"}

func (d *document) operations() []operation {
	var ops []operation
	pairs(get(d.root, "paths"), func(path string, item *yaml.Node) {
		for _, m := range methods {
			if op := get(item, m); op != nil {
				ops = append(ops, operation{method: m, path: path, item: item, op: op})
			}
		}
	})
	return ops
}

func (d *document) render() ([]byte, error) {
	info := get(d.root, "info")
	title := str(info, "title")
	ops := d.operations()
	samples, err := d.samples()
	if err != nil {
		return nil, err
	}
	d.sampleSet = samples
	byTag := map[string][]operation{}
	var tags []string
	seen := map[string]bool{}
	for _, t := range get(d.root, "tags").Content {
		tags = append(tags, str(t, "name"))
		seen[str(t, "name")] = true
	}
	for _, o := range ops {
		tag := "other"
		if t := get(o.op, "tags"); t != nil && len(t.Content) > 0 {
			tag = t.Content[0].Value
		}
		if str(o.op, "operationId") == "" {
			return nil, fmt.Errorf("apidocs: %s %s has no operationId", o.method, o.path)
		}
		if !seen[tag] {
			seen[tag] = true
			tags = append(tags, tag)
		}
		byTag[tag] = append(byTag[tag], o)
	}

	d.w("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
		"<meta name=\"referrer\" content=\"no-referrer\">",
		"<title>", esc(title), " reference</title><style>", styleSheet, "</style></head><body>\n")
	// Navigation: a search form (answered by the server, see search.go), then
	// every operation by its summary, grouped by tag.
	d.w("<nav aria-label=\"Operations\"><p class=\"brand\"><a href=\"#top\">", esc(title), "</a> <span>",
		esc(str(info, "version")), "</span></p>", searchForm(""))
	for _, tag := range tags {
		if len(byTag[tag]) == 0 {
			continue
		}
		d.w("<h2><a href=\"#tag-", esc(tag), "\">", esc(tag), "</a></h2><ul>")
		for _, o := range byTag[tag] {
			d.w("<li><a href=\"#", esc(str(o.op, "operationId")), "\" title=\"", strings.ToUpper(o.method), " ", esc(o.path),
				"\"><span class=\"m m-", o.method, "\">", strings.ToUpper(o.method), "</span> ", esc(navLabel(o)), "</a></li>")
			d.index = append(d.index, searchEntry{id: str(o.op, "operationId"), method: strings.ToUpper(o.method),
				path: o.path, summary: navLabel(o), tag: tag})
		}
		d.w("</ul>")
	}
	d.w("<h2><a href=\"#schemas\">schemas</a></h2></nav>\n<main>\n")
	// Introduction.
	d.w("<header id=\"top\"><h1>", esc(title), "</h1>")
	if s := str(info, "summary"); s != "" {
		d.w("<p class=\"lead\">", prose(s), "</p>")
	}
	d.w(markdown(str(info, "description")))
	if servers := get(d.root, "servers"); servers != nil && len(servers.Content) > 0 {
		d.w("<p>Base URL of a local payd: <code>", esc(str(servers.Content[0], "url")), "</code>. ")
	} else {
		d.w("<p>")
	}
	d.w("The document this page is made from: <a href=\"/docs/openapi.yaml\">openapi.yaml</a>.</p></header>\n")
	// Operations by tag.
	tagDesc := map[string]string{}
	for _, t := range get(d.root, "tags").Content {
		tagDesc[str(t, "name")] = str(t, "description")
	}
	for _, tag := range tags {
		if len(byTag[tag]) == 0 {
			continue
		}
		d.w("<section class=\"tag\" id=\"tag-", esc(tag), "\"><h2>", esc(tag), "</h2>")
		if s := tagDesc[tag]; s != "" {
			d.w("<p>", prose(s), "</p>")
		}
		for _, o := range byTag[tag] {
			d.operation(o)
		}
		d.w("</section>\n")
	}
	// Schemas.
	d.w("<section id=\"schemas\"><h2>Schemas</h2>")
	pairs(get(get(d.root, "components"), "schemas"), func(name string, s *yaml.Node) {
		d.w("<section class=\"schema\" id=\"schema-", esc(name), "\"><h3>", esc(name), "</h3>")
		d.schemaBlock(s, 0)
		d.w("</section>\n")
	})
	d.w("</section></main></body></html>\n")
	return []byte(d.b.String()), nil
}

// navLabel is an operation's name in the navigation: its summary without
// the final full stop and code marks, or its operationId.
func navLabel(o operation) string {
	label := strings.TrimSuffix(strings.ReplaceAll(strings.TrimSpace(str(o.op, "summary")), "`", ""), ".")
	if i := strings.IndexByte(label, '\n'); i >= 0 {
		label = label[:i]
	}
	if label == "" {
		label = str(o.op, "operationId")
	}
	return label
}

// sampleBlock renders an operation's samples, one <details> element per
// language (curl open), so no script is needed to switch between them.
func (d *document) sampleBlock(id string) {
	s, ok := d.sampleSet.Operation(id, SampleValues{})
	if !ok {
		return
	}
	d.w("<div class=\"samples\"><h4>Samples</h4>")
	for i, lang := range Languages {
		open := ""
		if i == 0 {
			open = " open"
		}
		d.w("<details class=\"sample\" data-lang=\"", esc(lang), "\"", open, "><summary>", esc(lang), "</summary><pre><code>",
			esc(s.Code[lang]), "</code></pre></details>")
	}
	d.w("</div>")
}

func (d *document) operation(o operation) {
	id := str(o.op, "operationId")
	d.w("<article class=\"op\" id=\"", esc(id), "\"><h3><span class=\"m m-", o.method, "\">", strings.ToUpper(o.method),
		"</span> <code class=\"path\">", esc(o.path), "</code></h3>")
	d.w("<p class=\"summary\">", prose(str(o.op, "summary")), "</p>")
	d.w("<p class=\"opid\">operationId <code>", esc(id), "</code>")
	if sec := get(o.op, "security"); sec != nil && sec.Kind == yaml.SequenceNode && len(sec.Content) == 0 {
		d.w(" · no authentication")
	}
	d.w("</p>")
	d.w(markdown(str(o.op, "description")))
	d.sampleBlock(id)
	// Parameters: the path item's, then the operation's.
	var params []*yaml.Node
	for _, list := range []*yaml.Node{get(o.item, "parameters"), get(o.op, "parameters")} {
		if list != nil {
			for _, p := range list.Content {
				params = append(params, d.deref(p))
			}
		}
	}
	if len(params) > 0 {
		d.w("<h4>Parameters</h4><table class=\"params\"><thead><tr><th>name</th><th>in</th><th>type</th><th>description</th><th>example</th></tr></thead><tbody>")
		for _, p := range params {
			req := ""
			if str(p, "required") == "true" {
				req = " <span class=\"req\">required</span>"
			}
			ex := str(p, "example")
			if ex == "" {
				ex = str(get(p, "schema"), "example")
			}
			d.w("<tr><td><code>", esc(str(p, "name")), "</code>", req, "</td><td>", esc(str(p, "in")), "</td><td>")
			d.schemaInline(get(p, "schema"), 1)
			d.w("</td><td>", prose(str(p, "description")), "</td><td>")
			if ex != "" {
				d.w("<code>", esc(ex), "</code>")
			}
			d.w("</td></tr>")
		}
		d.w("</tbody></table>")
	}
	if rb := d.deref(get(o.op, "requestBody")); rb != nil {
		req := ""
		if str(rb, "required") == "true" {
			req = " <span class=\"req\">required</span>"
		}
		d.w("<h4>Request body", req, "</h4>")
		if s := str(rb, "description"); s != "" {
			d.w(markdown(s))
		}
		d.content(get(rb, "content"))
	}
	d.w("<h4>Responses</h4>")
	pairs(get(o.op, "responses"), func(code string, r *yaml.Node) {
		r = d.deref(r)
		d.w("<div class=\"resp\"><p><span class=\"status s", esc(code[:1]), "\">", esc(code), "</span> ", prose(str(r, "description")), "</p>")
		if hs := get(r, "headers"); hs != nil {
			var names []string
			pairs(hs, func(name string, _ *yaml.Node) { names = append(names, "<code>"+esc(name)+"</code>") })
			d.w("<p class=\"headers\">Headers: ", strings.Join(names, ", "), "</p>")
		}
		d.content(get(r, "content"))
		d.w("</div>")
	})
	d.w("</article>\n")
}

// content renders each media type of a request body or response: its schema
// and its examples.
func (d *document) content(c *yaml.Node) {
	pairs(c, func(mediaType string, mt *yaml.Node) {
		d.w("<div class=\"media\"><p class=\"ctype\"><code>", esc(mediaType), "</code></p>")
		if s := get(mt, "schema"); s != nil {
			d.schemaBlock(s, 0)
		}
		if ex := get(mt, "example"); ex != nil {
			d.example("Example", ex)
		}
		pairs(get(mt, "examples"), func(name string, e *yaml.Node) {
			e = d.deref(e)
			label := str(e, "summary")
			if label == "" {
				label = name
			}
			d.example("Example: "+label, get(e, "value"))
		})
		d.w("</div>")
	})
}

func (d *document) example(label string, v *yaml.Node) {
	if v == nil {
		return
	}
	d.w("<details class=\"example\" open><summary>", esc(label), "</summary><pre>")
	if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
		d.w(esc(v.Value))
	} else {
		var b strings.Builder
		writeJSON(&b, v, "")
		d.w(esc(b.String()))
	}
	d.w("</pre></details>")
}

// schemaBlock renders a schema where there is room: a link for a named
// schema, a property table for an inline object, a line otherwise.
func (d *document) schemaBlock(s *yaml.Node, depth int) {
	if _, name := refName(s); name != "" {
		d.w("<p class=\"schemaref\">Schema: ", schemaLink(name), "</p>")
		return
	}
	if desc := str(s, "description"); desc != "" && depth == 0 {
		d.w("<p>", prose(desc), "</p>")
	}
	if props := get(s, "properties"); props != nil {
		d.properties(s, depth)
		return
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		if alts := get(s, kw); alts != nil {
			d.w("<p>", map[string]string{"oneOf": "One of:", "anyOf": "Any of:", "allOf": "All of:"}[kw], "</p><ul class=\"alts\">")
			for _, a := range alts.Content {
				d.w("<li>")
				if _, name := refName(a); name != "" || get(a, "properties") == nil {
					d.schemaInline(a, depth+1)
					if desc := str(a, "description"); desc != "" && name == "" {
						d.w(" — ", prose(desc))
					}
				} else {
					if desc := str(a, "description"); desc != "" {
						d.w("<p>", prose(desc), "</p>")
					}
					d.properties(a, depth+1)
				}
				d.w("</li>")
			}
			d.w("</ul>")
			return
		}
	}
	d.w("<p class=\"type\">")
	d.schemaInline(s, depth)
	d.w("</p>")
}

// properties renders an object's properties as a table; inline objects
// nested in it get their own table inside the row, up to a few levels.
func (d *document) properties(s *yaml.Node, depth int) {
	required := map[string]bool{}
	if r := get(s, "required"); r != nil {
		for _, n := range r.Content {
			required[n.Value] = true
		}
	}
	d.w("<table class=\"props\"><thead><tr><th>field</th><th>type</th><th>description</th></tr></thead><tbody>")
	pairs(get(s, "properties"), func(name string, p *yaml.Node) {
		req := ""
		if required[name] {
			req = " <span class=\"req\">required</span>"
		}
		d.w("<tr><td><code>", esc(name), "</code>", req, "</td><td>")
		d.schemaInline(p, depth+1)
		d.w("</td><td>", prose(str(p, "description")))
		if _, ref := refName(p); ref == "" && depth < 3 {
			if get(p, "properties") != nil {
				d.properties(p, depth+1)
			} else if it := get(p, "items"); it != nil && get(it, "properties") != nil {
				d.properties(it, depth+1)
			} else {
				for _, alt := range append(seq(get(p, "oneOf")), seq(get(p, "anyOf"))...) {
					if get(alt, "properties") != nil {
						d.properties(alt, depth+1)
					}
				}
			}
		}
		d.w("</td></tr>")
	})
	d.w("</tbody></table>")
	if ap := get(s, "additionalProperties"); ap != nil && ap.Kind == yaml.ScalarNode && ap.Value == "false" {
		d.w("<p class=\"note\">No other field is accepted.</p>")
	}
}

func seq(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// schemaInline renders a schema's type on one line: the type and format,
// its constraints, and links to named schemas.
func (d *document) schemaInline(s *yaml.Node, depth int) {
	if s == nil {
		d.w("any")
		return
	}
	if _, name := refName(s); name != "" {
		d.w(schemaLink(name))
		return
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		if alts := get(s, kw); alts != nil {
			sep := " | "
			if kw == "allOf" {
				sep = " &amp; "
			}
			for i, a := range alts.Content {
				if i > 0 {
					d.w(sep)
				}
				if get(a, "properties") != nil && refNameOnly(a) == "" {
					d.w("object")
				} else {
					d.schemaInline(a, depth+1)
				}
			}
			return
		}
	}
	d.w("<span class=\"t\">", esc(typeName(s)), "</span>")
	if it := get(s, "items"); it != nil {
		d.w(" of ")
		if get(it, "properties") != nil && refNameOnly(it) == "" {
			d.w("object")
		} else {
			d.schemaInline(it, depth+1)
		}
	}
	var facts []string
	if c := get(s, "const"); c != nil {
		facts = append(facts, "always <code>"+esc(c.Value)+"</code>")
	}
	if e := get(s, "enum"); e != nil {
		var vals []string
		for _, v := range e.Content {
			vals = append(vals, "<code>"+esc(v.Value)+"</code>")
		}
		facts = append(facts, "one of "+strings.Join(vals, ", "))
	}
	for _, c := range []struct{ key, label string }{{"pattern", "pattern"}, {"minimum", "≥"}, {"maximum", "≤"},
		{"minLength", "min length"}, {"maxLength", "max length"}, {"minItems", "min items"}, {"maxItems", "max items"},
		{"maxProperties", "max properties"}, {"default", "default"}} {
		if v := str(s, c.key); v != "" {
			if c.key == "pattern" || c.key == "default" {
				facts = append(facts, c.label+" <code>"+esc(v)+"</code>")
			} else {
				facts = append(facts, c.label+" "+esc(v))
			}
		}
	}
	if ex := get(s, "examples"); ex != nil && len(ex.Content) > 0 {
		var vals []string
		for _, v := range ex.Content {
			vals = append(vals, "<code>"+esc(v.Value)+"</code>")
		}
		facts = append(facts, "e.g. "+strings.Join(vals, ", "))
	}
	if ap := get(s, "additionalProperties"); ap != nil && ap.Kind == yaml.MappingNode && get(s, "properties") == nil {
		facts = append(facts, "values: "+esc(typeName(ap)))
	}
	if len(facts) > 0 {
		d.w(" <span class=\"facts\">(", strings.Join(facts, "; "), ")</span>")
	}
}

func refNameOnly(n *yaml.Node) string { _, name := refName(n); return name }

// typeName renders a schema's JSON type(s) and format: "integer (int64)",
// "string | null".
func typeName(s *yaml.Node) string {
	t := get(s, "type")
	var types []string
	switch {
	case t == nil && get(s, "properties") != nil:
		types = []string{"object"}
	case t == nil:
		if get(s, "const") != nil || get(s, "enum") != nil {
			types = []string{"value"}
		} else {
			types = []string{"any"}
		}
	case t.Kind == yaml.SequenceNode:
		for _, v := range t.Content {
			types = append(types, v.Value)
		}
	default:
		types = []string{t.Value}
	}
	name := strings.Join(types, " | ")
	if f := str(s, "format"); f != "" {
		name += " (" + f + ")"
	}
	return name
}

func schemaLink(name string) string {
	return "<a href=\"#schema-" + esc(name) + "\">" + esc(name) + "</a>"
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// prose escapes a line of text and turns `code` spans into <code>.
func prose(s string) string {
	return codeSpan.ReplaceAllString(esc(strings.TrimSpace(s)), "<code>$1</code>")
}

// markdown renders the small part of Markdown the document's descriptions
// use: paragraphs separated by blank lines, "- " bullet lists (with
// continuation lines indented), and `code` spans.
func markdown(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	var out strings.Builder
	var para []string
	var items []string
	flushPara := func() {
		if len(para) > 0 {
			out.WriteString("<p>" + prose(strings.Join(para, " ")) + "</p>")
			para = nil
		}
	}
	flushList := func() {
		if len(items) > 0 {
			out.WriteString("<ul>")
			for _, it := range items {
				out.WriteString("<li>" + prose(it) + "</li>")
			}
			out.WriteString("</ul>")
			items = nil
		}
	}
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flushPara()
			flushList()
		case strings.HasPrefix(trimmed, "- "):
			flushPara()
			items = append(items, strings.TrimPrefix(trimmed, "- "))
		case len(items) > 0 && strings.HasPrefix(line, " "):
			items[len(items)-1] += " " + trimmed
		default:
			flushList()
			para = append(para, trimmed)
		}
	}
	flushPara()
	flushList()
	return out.String()
}

// writeJSON writes a YAML value as indented JSON, keeping the order of its
// keys (the examples are written in the order a reader expects).
func writeJSON(b *strings.Builder, n *yaml.Node, indent string) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			writeJSON(b, n.Content[0], indent)
		}
	case yaml.AliasNode:
		writeJSON(b, n.Alias, indent)
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i := 0; i+1 < len(n.Content); i += 2 {
			b.WriteString(indent + "  " + jsonString(n.Content[i].Value) + ": ")
			writeJSON(b, n.Content[i+1], indent+"  ")
			if i+2 < len(n.Content) {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, v := range n.Content {
			b.WriteString(indent + "  ")
			writeJSON(b, v, indent+"  ")
			if i+1 < len(n.Content) {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "]")
	default:
		switch n.Tag {
		case "!!int", "!!float", "!!bool":
			b.WriteString(n.Value)
		case "!!null":
			b.WriteString("null")
		default:
			b.WriteString(jsonString(n.Value))
		}
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
