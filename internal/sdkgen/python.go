package sdkgen

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/payd/payd/internal/sdkgen/naming"
)

// PythonFile is the path, from the repository root, of the generated half of
// the Python SDK.
const PythonFile = "sdk/python/src/payd/_generated.py"

var pyIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var pyKeywords = naming.PythonKeywords

// pyReserved are the names the generated module imports or defines itself: a
// schema may not take one.
var pyReserved = map[string]bool{
	"Any": true, "Dict": true, "Iterator": true, "List": true, "Literal": true, "Mapping": true, "Optional": true,
	"TypedDict": true, "Union": true, "BaseClient": true, "EventStream": true, "Operation": true,
	"GeneratedClient": true, "OPERATIONS": true, "Page": true,
}

func pyFieldName(k string) bool { return pyIdent.MatchString(k) && !pyKeywords[k] }

// pyType is the annotation of a type use. Named types are referred to by
// name: the module uses postponed evaluation of annotations, so their order
// does not matter.
func (m *Model) pyType(r TypeRef) string {
	var t string
	switch r.Kind {
	case "string":
		if len(r.Enum) > 0 {
			t = "Literal[" + pyStrings(r.Enum) + "]"
		} else {
			t = "str"
		}
	case "int", "int64":
		t = "int"
	case "number":
		t = "float"
	case "bool":
		t = "bool"
	case "time":
		t = "str"
	case "raw", "any":
		return "Any"
	case "array":
		t = "List[" + m.pyType(*r.Elem) + "]"
	case "map":
		t = "Dict[str, " + m.pyType(*r.Elem) + "]"
	case "named":
		t = r.Named
	}
	if r.Nullable {
		t = "Optional[" + t + "]"
	}
	return t
}

func pyStrings(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

func pyTuple(xs []string) string {
	switch len(xs) {
	case 0:
		return "()"
	case 1:
		return "(" + strconv.Quote(xs[0]) + ",)"
	}
	return "(" + pyStrings(xs) + ")"
}

func pyComment(b *bytes.Buffer, indent, text string) {
	if text != "" {
		fmt.Fprintf(b, "%s#: %s\n", indent, text)
	}
}

func pyDocstring(text string) string {
	text = strings.ReplaceAll(text, `\`, `\\`)
	text = strings.ReplaceAll(text, `"""`, `\"\"\"`)
	if strings.HasSuffix(text, `"`) {
		text += " " // a quote before the closing quotes would end the string early
	}
	return `"""` + text + `"""`
}

// pyTypedDict writes one TypedDict. Fields whose JSON names are not Python
// identifiers need the functional form, which cannot mark some keys required
// and others not: such a type is total=False.
func (m *Model) pyTypedDict(b *bytes.Buffer, name, doc string, fields []*Field) {
	functional := false
	var req, opt []*Field
	for _, f := range fields {
		if !pyFieldName(f.JSON) {
			functional = true
		}
		if f.Required {
			req = append(req, f)
		} else {
			opt = append(opt, f)
		}
	}
	if functional {
		if doc != "" {
			fmt.Fprintf(b, "# %s\n", doc)
		}
		fmt.Fprintf(b, "%s = TypedDict(\n    %q,\n    {\n", name, name)
		for _, f := range fields {
			fmt.Fprintf(b, "        %q: %q,\n", f.JSON, m.pyType(f.Ref))
		}
		b.WriteString("    },\n    total=False,\n)\n\n\n")
		return
	}
	write := func(fs []*Field) {
		for _, f := range fs {
			pyComment(b, "    ", f.Doc)
			fmt.Fprintf(b, "    %s: %s\n", f.JSON, m.pyType(f.Ref))
		}
	}
	switch {
	case len(opt) == 0:
		fmt.Fprintf(b, "class %s(TypedDict):\n", name)
		if doc != "" {
			fmt.Fprintf(b, "    %s\n\n", pyDocstring(doc))
		}
		write(req)
		if len(req) == 0 {
			b.WriteString("    pass\n")
		}
	case len(req) == 0:
		fmt.Fprintf(b, "class %s(TypedDict, total=False):\n", name)
		if doc != "" {
			fmt.Fprintf(b, "    %s\n\n", pyDocstring(doc))
		}
		write(opt)
	default:
		fmt.Fprintf(b, "class _%sRequired(TypedDict):\n", name)
		write(req)
		fmt.Fprintf(b, "\n\nclass %s(_%sRequired, total=False):\n", name, name)
		if doc != "" {
			fmt.Fprintf(b, "    %s\n\n", pyDocstring(doc))
		}
		write(opt)
	}
	b.WriteString("\n\n")
}

// pyRequired reports whether a request body of this type must be given.
func (m *Model) pyRequired(r *TypeRef) bool {
	if r.Kind != "named" {
		return false
	}
	t := m.byKey[r.Named]
	if t == nil {
		return false
	}
	for _, f := range t.Fields {
		if f.Required {
			return true
		}
	}
	return false
}

// PyFile returns the generated module of the Python SDK (PythonFile): a
// TypedDict per schema, a Literal alias per string enum, a page type per list,
// the operation table and one method per operation.
func (m *Model) PyFile() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n# fmt: off\n", header)
	b.WriteString(`"""The types and methods of every operation of the payd API (generated).

Models are TypedDicts: answers are the JSON objects payd sends, read as ` + "``pi[\"status\"]``" + `,
and a field payd adds later is simply one more key. Requests are plain dicts of the same shape.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Literal, Mapping, Optional, TypedDict, Union

from ._core import BaseClient, EventStream, Operation

`)
	names := map[string]bool{}
	for _, t := range m.Types {
		if pyReserved[t.Name] || pyKeywords[t.Name] {
			return nil, fmt.Errorf("python: schema %s would hide a name the module uses", t.Name)
		}
		names[t.Name] = true
	}
	// Enums first: they are aliases evaluated at import time.
	for _, t := range m.Types {
		if t.Enum == nil {
			continue
		}
		b.WriteString("\n")
		pyComment(&b, "", t.Doc)
		fmt.Fprintf(&b, "%s = Literal[%s]\n", t.Name, pyStrings(t.Enum))
	}
	b.WriteString("\n\n")
	for _, t := range m.Types {
		if t.Enum != nil {
			continue
		}
		m.pyTypedDict(&b, t.Name, t.Doc, t.Fields)
	}
	// One page type per listed item type.
	pages := map[string]string{} // item annotation -> page type name
	for _, o := range m.Ops {
		if o.ListItem == nil {
			continue
		}
		item := m.pyType(*o.ListItem)
		if _, ok := pages[item]; ok {
			continue
		}
		name := "Page"
		if o.ListItem.Kind == "named" && !o.ListItem.Nullable {
			name = o.ListItem.Named + "Page"
		} else if item != "Any" {
			name = pascal(o.Name) + "Page"
		}
		if names[name] {
			return nil, fmt.Errorf("python: page type %s collides with a schema", name)
		}
		names[name] = true
		pages[item] = name
		m.pyTypedDict(&b, name, "One page of a list, newest first.", []*Field{
			{JSON: "object", Ref: TypeRef{Kind: "string", Enum: []string{"list"}}, Required: true},
			{JSON: "data", Ref: TypeRef{Kind: "array", Elem: o.ListItem}, Required: true},
			{JSON: "has_more", Ref: TypeRef{Kind: "bool"}, Required: true},
		})
	}
	for _, o := range m.Ops {
		if o.QueryName == "" {
			continue
		}
		var fs []*Field
		for _, q := range o.Query {
			fs = append(fs, &Field{JSON: q.Name, Doc: q.Doc, Ref: q.Ref, Required: q.Required})
		}
		if names[o.QueryName] {
			return nil, fmt.Errorf("python: query type %s collides with a schema", o.QueryName)
		}
		m.pyTypedDict(&b, o.QueryName, "The query parameters of "+snake(o.Name)+".", fs)
	}

	// The operation table.
	b.WriteString("#: Every operation of the API, by method name.\nOPERATIONS: Dict[str, Operation] = {\n")
	for _, o := range m.Ops {
		alt := make([]string, len(o.AltStatus))
		for i, s := range o.AltStatus {
			alt[i] = strconv.Itoa(s)
		}
		altT := "()"
		if len(alt) == 1 {
			altT = "(" + alt[0] + ",)"
		} else if len(alt) > 1 {
			altT = "(" + strings.Join(alt, ", ") + ")"
		}
		fmt.Fprintf(&b, "    %q: Operation(name=%q, method=%q, path=%q, path_params=%s, idempotency_required=%s, public=%s, also_decode=%s),\n",
			snake(o.Name), o.Name, o.Method, o.Path, pyTuple(o.PathParams), pyBool(o.NeedsIdem), pyBool(o.Public), altT)
	}
	b.WriteString("}\n\n\n")

	// __all__: what `from payd import *` and payd's own namespace take.
	exported := []string{"GeneratedClient", "OPERATIONS"}
	for name := range names {
		exported = append(exported, name)
	}
	for _, o := range m.Ops {
		if o.QueryName != "" {
			exported = append(exported, o.QueryName)
		}
	}
	sort.Strings(exported)
	b.WriteString("__all__ = [\n")
	for _, e := range slices.Compact(exported) {
		fmt.Fprintf(&b, "    %q,\n", e)
	}
	b.WriteString("]\n\n\n")

	// Method names: snake case must keep operations apart, and leave
	// BaseClient's own names alone.
	methods := map[string]string{"request_raw": "BaseClient", "livemode": "BaseClient"}
	add := func(name, key string) error {
		if prev, ok := methods[name]; ok {
			return fmt.Errorf("python: %s would name both %s and %s", name, prev, key)
		}
		methods[name] = key
		return nil
	}
	for _, o := range m.Ops {
		if err := add(snake(o.Name), o.Key()); err != nil {
			return nil, err
		}
		if pyIterates(o) {
			if err := add(pyAllName(o), o.Key()); err != nil {
				return nil, err
			}
		}
	}

	b.WriteString("class GeneratedClient(BaseClient):\n    \"\"\"The methods of every operation; the transport is BaseClient's.\"\"\"\n")
	for _, o := range m.Ops {
		meth := snake(o.Name)
		type arg struct {
			name, ann string
			required  bool
		}
		var args []arg
		var pathArgs []string
		for _, p := range o.PathParams {
			args = append(args, arg{snake(p), "str", true})
			pathArgs = append(pathArgs, fmt.Sprintf("%q: %s", p, snake(p)))
		}
		body, query := "None", "None"
		if o.Body != nil {
			args = append(args, arg{"params", m.pyType(*o.Body), m.pyRequired(o.Body)})
			body = "params"
		}
		if o.QueryName != "" {
			req := false
			for _, q := range o.Query {
				req = req || q.Required
			}
			args = append(args, arg{"query", o.QueryName, req})
			query = "query"
		}
		// An argument gets a default only when every one after it has one.
		tail := true
		sig := make([]string, len(args))
		for i := len(args) - 1; i >= 0; i-- {
			a := args[i]
			if !a.required && tail {
				ann := a.ann
				if !strings.HasPrefix(ann, "Optional[") && ann != "Any" {
					ann = "Optional[" + ann + "]"
				}
				sig[i] = a.name + ": " + ann + " = None"
			} else {
				tail = false
				sig[i] = a.name + ": " + a.ann
			}
		}
		opts := "headers: Optional[Mapping[str, str]] = None"
		optArgs := "headers=headers"
		if o.Method == "POST" {
			opts = "idempotency_key: Optional[str] = None, " + opts
			optArgs = "idempotency_key=idempotency_key, " + optArgs
		}
		sig = append([]string{"self"}, sig...)
		sig = append(sig, "*", opts)
		call := fmt.Sprintf("OPERATIONS[%q], {%s}, %s, %s, %s", meth, strings.Join(pathArgs, ", "), body, query, optArgs)
		doc := o.Summary
		if doc == "" {
			doc = "Sends " + o.Key() + "."
		}
		doc = strings.TrimSuffix(doc, ".") + ". ``" + o.Key() + "``"
		if len(o.AltStatus) > 0 {
			doc += " (a refusal raises a PaydError whose ``body`` is the answer)"
		}
		if o.Deprecated {
			doc += " Deprecated."
		}
		if len(o.BodyAlt) > 0 {
			doc += " The API also accepts " + strings.Join(o.BodyAlt, ", ") + " bodies: send them with ``request_raw``."
		}
		sigText := strings.Join(sig, ", ")
		ret := ""
		impl := ""
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
			ret = "Union[" + strings.Join(ts, ", ") + "]"
			impl = "return self._request(" + call + ")"
		case o.Stream:
			ret = "EventStream"
			impl = "return self._open_stream(" + call + ")"
		case o.ListItem != nil:
			ret = pages[m.pyType(*o.ListItem)]
			impl = "return self._request(" + call + ")"
		case o.Result != nil:
			ret = m.pyType(*o.Result)
			impl = "return self._request(" + call + ")"
		default:
			ret = "None"
			impl = "self._request(" + call + ")"
		}
		fmt.Fprintf(&b, "\n    def %s(%s) -> %s:\n        %s\n        %s\n", meth, sigText, ret, pyDocstring(doc), impl)
		if pyIterates(o) {
			all := pyAllName(o)
			itemT := m.pyType(*o.ListItem)
			allSig := strings.Replace(sigText, "idempotency_key: Optional[str] = None, ", "", 1)
			allCall := fmt.Sprintf("OPERATIONS[%q], {%s}, %s, %q, headers=headers", meth, strings.Join(pathArgs, ", "), query, o.Cursor)
			fmt.Fprintf(&b, "\n    def %s(%s) -> Iterator[%s]:\n        %s\n        return self._paginate(%s)\n", all, allSig, itemT,
				pyDocstring("Every item "+meth+" pages through, fetching pages as the loop needs them (newest first; backwards from ending_before when set)."), allCall)
		}
	}
	return b.Bytes(), nil
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

// pyIterates reports whether an operation gets an all_... iterator.
func pyIterates(o *Op) bool { return o.ListItem != nil && o.Paginated && o.Cursor != "" }

// pyAllName is the name of an operation's iterator: list_refunds → all_refunds.
func pyAllName(o *Op) string { return "all_" + strings.TrimPrefix(snake(o.Name), "list_") }
