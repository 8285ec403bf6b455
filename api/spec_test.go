package api

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// load parses and validates the document; kin-openapi's validation includes
// every example against its schema.
func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatalf("load openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid (examples included): %v", err)
	}
	return doc
}

var operationID = regexp.MustCompile(`^[a-z]+[A-Z][A-Za-z]*$`)

// TestEveryOperationIsNamed checks what SDK generators and the /docs page rely
// on: each operation has a unique lowerCamelCase verbNoun operationId, a
// summary and at least one tag.
func TestEveryOperationIsNamed(t *testing.T) {
	doc := load(t)
	seen := map[string]string{}
	count := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			count++
			where := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s has no operationId", where)
			} else if !operationID.MatchString(op.OperationID) {
				t.Errorf("%s: operationId %q is not lowerCamelCase verbNoun", where, op.OperationID)
			} else if other, dup := seen[op.OperationID]; dup {
				t.Errorf("operationId %q is used by %s and %s", op.OperationID, other, where)
			}
			seen[op.OperationID] = where
			if strings.TrimSpace(op.Summary) == "" {
				t.Errorf("%s (%s) has no summary", where, op.OperationID)
			}
			if len(op.Tags) == 0 {
				t.Errorf("%s (%s) has no tag", where, op.OperationID)
			}
		}
	}
	if count < 79 {
		t.Errorf("only %d operations found; the document lost some", count)
	}
}

// TestEveryOperationHasExamples checks that path parameters, JSON request
// bodies and JSON success responses carry examples, and that every list
// response names the type of its items.
func TestEveryOperationHasExamples(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path + " (" + op.OperationID + ")"
			params := append(openapi3.Parameters{}, item.Parameters...)
			params = append(params, op.Parameters...)
			for _, p := range params {
				if p.Value.In == openapi3.ParameterInPath && p.Value.Example == nil && len(p.Value.Examples) == 0 {
					t.Errorf("%s: path parameter %s has no example", where, p.Value.Name)
				}
			}
			if op.RequestBody != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					if ct == "application/json" && mt.Example == nil && len(mt.Examples) == 0 {
						t.Errorf("%s: the JSON request body has no example", where)
					}
				}
			}
			for code, resp := range op.Responses.Map() {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				for ct, mt := range resp.Value.Content {
					if ct != "application/json" {
						continue
					}
					if mt.Example == nil && len(mt.Examples) == 0 {
						t.Errorf("%s: the %s JSON response has no example", where, code)
					}
					s := mt.Schema.Value
					if obj := s.Properties["object"]; obj != nil && obj.Value.Const == "list" {
						data := s.Properties["data"]
						if data == nil || data.Value.Items == nil || data.Value.Items.Ref == "" {
							t.Errorf("%s: the %s list response does not name its items' schema", where, code)
						}
					}
				}
			}
		}
	}
}

// TestTagsDeclared checks that every tag an operation uses is declared (the
// /docs page groups operations by the declared tags, in their order).
func TestTagsDeclared(t *testing.T) {
	doc := load(t)
	declared := map[string]bool{}
	for _, tag := range doc.Tags {
		declared[tag.Name] = true
		if tag.Description == "" {
			t.Errorf("tag %s has no description", tag.Name)
		}
	}
	var missing []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, tag := range op.Tags {
				if !declared[tag] {
					missing = append(missing, tag+" ("+method+" "+path+")")
				}
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("undeclared tags: %v", missing)
	}
}
