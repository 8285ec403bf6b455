package iso20022

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// The JSON envelope has no published schema, so payd checks its shape the way
// the XSD checks XML: exact member names (encoding/json alone would match
// them case-insensitively and ignore unknown ones), no duplicate members, and
// the JSON kind of every value. null counts as absent. The content rules are
// Validate's.

// jsonKind is the kind of JSON value a member holds.
type jsonKind uint8

const (
	jsonString jsonKind = iota
	jsonNumber
	jsonObject
	jsonArray
)

// jsonShape describes the JSON value expected at one place.
type jsonShape struct {
	kind    jsonKind
	members map[string]*jsonShape // jsonObject
	items   *jsonShape            // jsonArray
}

var (
	shapeString = &jsonShape{kind: jsonString}
	shapeNumber = &jsonShape{kind: jsonNumber}
	shapeParty  = &jsonShape{kind: jsonObject, members: map[string]*jsonShape{
		"name":    shapeString,
		"account": shapeString,
	}}
	transferShape = &jsonShape{kind: jsonObject, members: map[string]*jsonShape{
		"msg_id":     shapeString,
		"created_at": shapeString,
		"settlement": {kind: jsonObject, members: map[string]*jsonShape{"method": shapeString}},
		"transactions": {kind: jsonArray, items: &jsonShape{kind: jsonObject, members: map[string]*jsonShape{
			"uetr":            shapeString,
			"end_to_end_id":   shapeString,
			"amount_minor":    shapeNumber,
			"currency":        shapeString,
			"charge_bearer":   shapeString,
			"debtor":          shapeParty,
			"debtor_agent":    shapeString,
			"creditor":        shapeParty,
			"creditor_agent":  shapeString,
			"remittance_info": shapeString,
		}}},
	}}
	returnShape = &jsonShape{kind: jsonObject, members: map[string]*jsonShape{
		"reason_code":  shapeString,
		"reason_text":  shapeString,
		"amount_minor": shapeNumber,
		// references to the original transfer, checked when present
		"original_uetr":          shapeString,
		"original_msg_id":        shapeString,
		"original_end_to_end_id": shapeString,
		"original_amount_minor":  shapeNumber,
		"original_currency":      shapeString,
	}}
)

// maxJSONDepth bounds nesting; the transfer envelope needs 4 levels.
const maxJSONDepth = 8

// checkJSONShape walks body once. It returns a *ParseError when the body is
// not one well-formed JSON object (or breaks a limit), and otherwise the first
// shape problem (nil when none).
func checkJSONShape(body []byte, shape *jsonShape) (*FieldError, error) {
	if len(body) > MaxMessageBytes {
		return nil, &ParseError{Kind: ErrTooLarge, Reason: "over " + strconv.Itoa(MaxMessageBytes) + " bytes"}
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	w := jsonWalker{d: d}
	first, err := d.Token()
	if err != nil {
		return nil, jsonSyntax(err)
	}
	if delim, ok := first.(json.Delim); !ok || delim != '{' {
		return nil, &ParseError{Kind: ErrMalformed, Reason: "the body must be a JSON object"}
	}
	if err := w.object("", shape, 1); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, &ParseError{Kind: ErrMalformed, Reason: "data after the JSON object"}
	}
	return w.problem, nil
}

func jsonSyntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &ParseError{Kind: ErrMalformed, Reason: "not valid JSON at offset " + strconv.FormatInt(se.Offset, 10)}
	}
	return &ParseError{Kind: ErrMalformed, Reason: "not valid JSON"}
}

type jsonWalker struct {
	d       *json.Decoder
	problem *FieldError
}

func (w *jsonWalker) note(path, reason string) {
	if w.problem == nil {
		w.problem = &FieldError{Path: path, Code: ReasonFF01, Reason: reason}
	}
}

// object walks the members of an object whose '{' was consumed; shape may be
// nil for a value already found to be unexpected.
func (w *jsonWalker) object(path string, shape *jsonShape, depth int) error {
	seen := map[string]bool{}
	for w.d.More() {
		tok, err := w.d.Token()
		if err != nil {
			return jsonSyntax(err)
		}
		key, _ := tok.(string)
		p := key
		if safeName(key) != key {
			p = "(member)"
		}
		if path != "" {
			p = path + "." + p
		}
		var member *jsonShape
		switch {
		case shape == nil:
		case seen[key]:
			w.note(p, "duplicate member")
		case shape.members[key] == nil:
			w.note(p, "unknown member")
		default:
			member = shape.members[key]
		}
		seen[key] = true
		if err := w.value(p, member, depth); err != nil {
			return err
		}
	}
	_, err := w.d.Token() // '}'
	if err != nil {
		return jsonSyntax(err)
	}
	return nil
}

func (w *jsonWalker) array(path string, shape *jsonShape, depth int) error {
	for i := 0; w.d.More(); i++ {
		var items *jsonShape
		if shape != nil {
			items = shape.items
		}
		if err := w.value(path+"["+strconv.Itoa(i)+"]", items, depth); err != nil {
			return err
		}
	}
	_, err := w.d.Token() // ']'
	if err != nil {
		return jsonSyntax(err)
	}
	return nil
}

// value walks one value at path; shape nil means the value is walked only for
// well-formedness and the limits.
func (w *jsonWalker) value(path string, shape *jsonShape, depth int) error {
	tok, err := w.d.Token()
	if err != nil {
		return jsonSyntax(err)
	}
	var kind jsonKind
	switch t := tok.(type) {
	case nil:
		return nil // null: absent
	case string:
		kind = jsonString
	case json.Number:
		kind = jsonNumber
	case bool:
		kind = jsonKind(255)
	case json.Delim:
		if depth+1 > maxJSONDepth {
			return &ParseError{Kind: ErrTooDeep, Reason: "JSON nested more than " + strconv.Itoa(maxJSONDepth) + " levels"}
		}
		var inner *jsonShape
		if shape != nil && ((t == '{' && shape.kind == jsonObject) || (t == '[' && shape.kind == jsonArray)) {
			inner = shape
		} else if shape != nil {
			w.note(path, "wrong JSON type")
		}
		if t == '{' {
			return w.object(path, inner, depth+1)
		}
		return w.array(path, inner, depth+1)
	}
	if shape != nil && shape.kind != kind {
		w.note(path, "wrong JSON type")
	}
	return nil
}
