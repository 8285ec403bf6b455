package sdkgen

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

var tsIdent = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func tsKey(k string) string {
	if tsIdent.MatchString(k) {
		return k
	}
	return fmt.Sprintf("%q", k)
}

func (m *Model) tsType(r TypeRef) string {
	var t string
	switch r.Kind {
	case "string":
		if len(r.Enum) > 0 {
			var lits []string
			for _, e := range r.Enum {
				lits = append(lits, fmt.Sprintf("%q", e))
			}
			t = strings.Join(lits, " | ")
		} else {
			t = "string"
		}
	case "int", "int64", "number":
		t = "number"
	case "bool":
		t = "boolean"
	case "time":
		t = "string"
	case "raw", "any":
		t = "unknown"
	case "array":
		e := m.tsType(*r.Elem)
		if strings.ContainsAny(e, "| ") {
			e = "(" + e + ")"
		}
		t = e + "[]"
	case "map":
		t = "Record<string, " + m.tsType(*r.Elem) + ">"
	case "named":
		t = r.Named
	}
	if r.Nullable && t != "unknown" {
		t += " | null"
	}
	return t
}

func tsDoc(b *bytes.Buffer, indent, text string) {
	if text == "" {
		return
	}
	fmt.Fprintf(b, "%s/** %s */\n", indent, strings.ReplaceAll(text, "*/", "* /"))
}

// TSFile returns sdk/typescript/src/generated.ts.
func (m *Model) TSFile() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n/* eslint-disable */\n\nimport type { List, OperationSpec, RequestOptions, EventStream } from \"./core.js\";\nimport { BaseClient } from \"./core.js\";\n\n", header)
	for _, t := range m.Types {
		if t.Enum != nil {
			tsDoc(&b, "", t.Doc)
			var lits []string
			for _, e := range t.Enum {
				lits = append(lits, fmt.Sprintf("%q", e))
			}
			fmt.Fprintf(&b, "export type %s = %s;\n\n", t.Name, strings.Join(lits, " | "))
			continue
		}
		tsDoc(&b, "", t.Doc)
		fmt.Fprintf(&b, "export interface %s {\n", t.Name)
		for _, f := range t.Fields {
			tsDoc(&b, "  ", f.Doc)
			opt := ""
			if !f.Required {
				opt = "?"
			}
			fmt.Fprintf(&b, "  %s%s: %s;\n", tsKey(f.JSON), opt, m.tsType(f.Ref))
		}
		b.WriteString("}\n\n")
	}
	// Query parameter types.
	for _, o := range m.Ops {
		if o.QueryName == "" {
			continue
		}
		fmt.Fprintf(&b, "/** The query parameters of %s. */\nexport interface %s {\n", o.Name, o.QueryName)
		for _, q := range o.Query {
			tsDoc(&b, "  ", q.Doc)
			opt := "?"
			if q.Required {
				opt = ""
			}
			fmt.Fprintf(&b, "  %s%s: %s;\n", tsKey(q.Name), opt, m.tsType(q.Ref))
		}
		b.WriteString("}\n\n")
	}
	// The operation table.
	b.WriteString("/** Every operation of the API, by method name. */\nexport const operations = {\n")
	for _, o := range m.Ops {
		var alt []string
		for _, s := range o.AltStatus {
			alt = append(alt, fmt.Sprint(s))
		}
		fmt.Fprintf(&b, "  %s: { name: %q, method: %q, path: %q, pathParams: [%s], idempotencyRequired: %v, public: %v, alsoDecode: [%s] },\n",
			o.Name, o.Name, o.Method, o.Path, quoteList(o.PathParams), o.NeedsIdem, o.Public, strings.Join(alt, ", "))
	}
	b.WriteString("} as const satisfies Record<string, OperationSpec>;\n\n")

	b.WriteString("/** The methods of every operation; the transport is BaseClient's. */\nexport abstract class GeneratedClient extends BaseClient {\n")
	for _, o := range m.Ops {
		var params, pathObj []string
		for _, p := range o.PathParams {
			params = append(params, camel(p)+": string")
			pathObj = append(pathObj, fmt.Sprintf("%s: %s", tsKey(p), camel(p)))
		}
		args := []string{"path: {" + strings.Join(pathObj, ", ") + "}"}
		if o.Body != nil {
			params = append(params, "params: "+m.tsType(*o.Body))
			args = append(args, "body: params")
		}
		if o.QueryName != "" {
			req := false
			for _, q := range o.Query {
				req = req || q.Required
			}
			if req {
				params = append(params, "query: "+o.QueryName)
			} else {
				params = append(params, "query: "+o.QueryName+" = {}")
			}
			args = append(args, "query")
		}
		params = append(params, "options: RequestOptions = {}")
		argObj := "{ " + strings.Join(args, ", ") + " }"
		doc := o.Summary
		if doc == "" {
			doc = "Sends " + o.Key() + "."
		}
		doc += " `" + o.Key() + "`"
		if len(o.AltStatus) > 0 {
			doc += " (a refusal throws a PaydError whose `body` is the answer)"
		}
		tsDoc(&b, "  ", doc)
		op := "operations." + o.Name
		switch {
		case len(o.Results) > 0:
			var ts []string
			seen := map[string]bool{}
			for _, r := range o.Results {
				if !seen[r.Ref.Named] {
					seen[r.Ref.Named] = true
					ts = append(ts, r.Ref.Named)
				}
			}
			fmt.Fprintf(&b, "  %s(%s): Promise<%s> {\n    return this.request(%s, %s, options);\n  }\n\n", o.Name, strings.Join(params, ", "), strings.Join(ts, " | "), op, argObj)
		case o.Stream:
			fmt.Fprintf(&b, "  %s(%s): Promise<EventStream<Event>> {\n    return this.openStream(%s, %s, options);\n  }\n\n", o.Name, strings.Join(params, ", "), op, argObj)
		case o.ListItem != nil:
			item := m.tsType(*o.ListItem)
			fmt.Fprintf(&b, "  %s(%s): Promise<List<%s>> {\n    return this.request(%s, %s, options);\n  }\n\n", o.Name, strings.Join(params, ", "), item, op, argObj)
			if o.Paginated && o.Cursor != "" {
				all := "all" + strings.TrimPrefix(pascal(o.Name), "List")
				tsDoc(&b, "  ", "Every item "+o.Name+" pages through, fetching pages as the loop needs them (newest first; backwards from ending_before when set).")
				fmt.Fprintf(&b, "  %s(%s): AsyncGenerator<%s> {\n    return this.paginate<%s>(%s, %s, %q, options);\n  }\n\n", all, strings.Join(params, ", "), item, item, op, argObj, o.Cursor)
			}
		case o.Result != nil:
			fmt.Fprintf(&b, "  %s(%s): Promise<%s> {\n    return this.request(%s, %s, options);\n  }\n\n", o.Name, strings.Join(params, ", "), m.tsType(*o.Result), op, argObj)
		default:
			fmt.Fprintf(&b, "  async %s(%s): Promise<void> {\n    await this.request(%s, %s, options);\n  }\n\n", o.Name, strings.Join(params, ", "), op, argObj)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func quoteList(xs []string) string {
	var q []string
	for _, x := range xs {
		q = append(q, fmt.Sprintf("%q", x))
	}
	return strings.Join(q, ", ")
}
