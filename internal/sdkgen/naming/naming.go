// Package naming holds the rules by which payd's SDK generator (package
// sdkgen) names methods, types and fields in Go, TypeScript and Python. It
// imports nothing but the standard library, so the API reference can name
// the SDKs' methods in its code samples exactly as the SDKs do.
package naming

import "strings"

// PythonKeywords are Python's reserved words: a field named after one cannot be
// written in a TypedDict's class syntax.
var PythonKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

var initialisms = map[string]string{
	"id": "ID", "url": "URL", "uetr": "UETR", "otp": "OTP", "ksn": "KSN", "http": "HTTP",
	"msisdn": "MSISDN", "bic": "BIC", "api": "API", "ms": "Ms",
}

// Pascal turns snake_case, kebab-case, lowerCamel and "created[gte]" into
// PascalCase with Go initialisms.
func Pascal(s string) string {
	var words []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '-' || r == '[' || r == ']' || r == '.' || r == ' ':
			flush()
		case r >= 'A' && r <= 'Z' && i > 0:
			flush()
			cur.WriteRune(r)
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	var out strings.Builder
	for _, w := range words {
		if in, ok := initialisms[strings.ToLower(w)]; ok {
			out.WriteString(in)
			continue
		}
		out.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return out.String()
}

// Camel is Pascal with a lower-case first word (TypeScript property names
// keep their JSON spelling; this is for identifiers).
func Camel(s string) string {
	p := Pascal(s)
	for k, v := range initialisms {
		if strings.HasPrefix(p, v) && strings.EqualFold(s[:min(len(s), len(k))], k) {
			return k + p[len(v):]
		}
	}
	return strings.ToLower(p[:1]) + p[1:]
}

// Snake turns lowerCamel, PascalCase, kebab-case and "created[gte]" into a
// Python snake_case identifier ("createPaymentIntent" → "create_payment_intent").
func Snake(s string) string {
	var out strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r >= 'A' && r <= 'Z':
			// A new word starts at an upper-case letter after a lower-case one or
			// a digit, or at the last capital of an acronym ("UETRs" stays one word).
			if i > 0 && out.Len() > 0 && !strings.HasSuffix(out.String(), "_") {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z' && rs[i+1] != 's'
				if (prev >= 'a' && prev <= 'z') || (prev >= '0' && prev <= '9') || (prev >= 'A' && prev <= 'Z' && nextLower) {
					out.WriteByte('_')
				}
			}
			out.WriteRune(r - 'A' + 'a')
		case (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			out.WriteRune(r)
		default:
			if out.Len() > 0 && !strings.HasSuffix(out.String(), "_") {
				out.WriteByte('_')
			}
		}
	}
	id := strings.TrimSuffix(out.String(), "_")
	if PythonKeywords[id] {
		id += "_"
	}
	return id
}
