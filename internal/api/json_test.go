package api

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/payd/payd/internal/errs"
)

type strictInner struct {
	Reference string `json:"reference"`
	Note      string
}

type strictHidden struct {
	Secret string `json:"secret"`
}

type strictParams struct {
	Currency    string            `json:"currency"`
	AmountMinor *int64            `json:"amount_minor"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Items       []struct {
		Name string `json:"name"`
	} `json:"items"`
	Ignored string `json:"-"`
	Dash    string `json:"-,"`
	Plain   int
	strictInner
	*strictHidden
	Named   strictInner `json:"named"`
	private int
}

// outcome reduces a decoding result to what a client sees.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	e := errs.As(err)
	if e == nil {
		return "not an errs.Error: " + err.Error()
	}
	return fmt.Sprintf("%d %s param=%q %s", e.Kind, e.Code, e.Param, e.Message)
}

func TestDecodeStrictAnswersAsEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"currency":"DJF","amount_minor":5}`,
		`{"CURRENCY":"DJF","Amount_Minor":5}`,
		`{"colour":"red"}`,
		`{"currency":"DJF","colour":"red","amount_minor":"x"}`,
		`{"amount_minor":"x","colour":"red"}`,
		`{"metadata":{"k":1},"colour":"red"}`,
		`{"items":[{"name":"a","size":2}],"colour":"red"}`,
		`{"named":{"reference":"r","extra":1},"colour":"red"}`,
		`{"Ignored":"x"}`,
		`{"-":"x","plain":1,"PLAIN":2}`,
		`{"reference":"r","note":"n","Note":"n","strictInner":{}}`,
		`{"secret":"s"}`,
		`{"private":1}`,
		`{"strictHidden":{}}`,
		`{"currency":"DJF"}{"colour":1}`,
		`{"currency":"DJF"} {}`,
		`{"currency":"DJF"} x`,
		`{"ſecret":"s","\u212aey":1}`,
		`{"a\"b":1}`,
		`{"\ud800":1}`,
		`[]`, `null`, `"x"`, `{}`, `{"currency":null,"colour":null}`,
	}
	for _, body := range bodies {
		var got, want strictParams
		g, w := outcome(decodeStrict([]byte(body), &got)), outcome(decodeWhole([]byte(body), &want))
		if g != w {
			t.Errorf("%s:\n got  %s\n want %s", body, g, w)
		}
	}
	// A destination decoded otherwise than field by field is left to encoding/json.
	for _, body := range []string{`{"colour":"red"}`, `{"a":1,"b":`} {
		var m map[string]any
		if g, w := outcome(decodeStrict([]byte(body), &m)), outcome(decodeWhole([]byte(body), &m)); g != w {
			t.Errorf("map %s: got %s, want %s", body, g, w)
		}
	}
}

// selfDecoding counts the values decoded into it.
type selfDecoding struct{ n *int }

func (s *selfDecoding) UnmarshalJSON([]byte) error {
	*s.n++
	return nil
}

func TestDecodeStrictStopsAtTheFirstUnknownMember(t *testing.T) {
	// What follows the unknown member is not read: malformed, it is still the
	// unknown member that is refused.
	for _, body := range []string{
		`{"currency":"DJF","colour":"red",`,
		`{"currency":"DJF","colour":`,
		`{"colour":"red","amount_minor":]]]`,
		`{"colour" "red"}`,
	} {
		var v strictParams
		got := errs.As(decodeStrict([]byte(body), &v))
		if got == nil || got.Code != "parameter_unknown" || got.Param != "colour" || got.Message != "unknown parameter: colour" {
			t.Errorf("%s: got %v, want parameter_unknown naming colour", body, got)
		}
	}
	// Nor is any value after it decoded, while the ones before it are.
	n := 0
	var v struct {
		Count selfDecoding `json:"count"`
	}
	v.Count.n = &n
	body := `{"count":1,"count":2,"colour":"red"` + strings.Repeat(`,"count":3`, 1000) + `}`
	if got := errs.As(decodeStrict([]byte(body), &v)); got == nil || got.Code != "parameter_unknown" || got.Param != "colour" {
		t.Fatalf("got %v, want parameter_unknown naming colour", got)
	}
	if n != 2 {
		t.Errorf("%d values decoded, want the 2 before the unknown member", n)
	}
	// Errors before the unknown member keep their precedence.
	var p strictParams
	if got := errs.As(decodeStrict([]byte(`{"amount_minor":"5","colour":"red",`), &p)); got == nil || got.Code != "parameter_invalid" || got.Param != "amount_minor" {
		t.Errorf("got %v, want parameter_invalid naming amount_minor", got)
	}
}

// manyUnknownKeys is a body of n unknown members, as a hostile client sends.
func manyUnknownKeys(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%07d":%d`, i, i)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// BenchmarkDecodeStrictManyUnknownKeys decodes a body of 20,000 unknown
// members (about 270 KB); "whole" is encoding/json alone over the whole body.
func BenchmarkDecodeStrictManyUnknownKeys(b *testing.B) {
	body := manyUnknownKeys(20000)
	for _, c := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"strict", decodeStrict}, {"whole", decodeWhole}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var v strictParams
				if e := errs.As(c.decode(body, &v)); e == nil || e.Code != "parameter_unknown" {
					b.Fatalf("got %v", e)
				}
			}
		})
	}
}

// BenchmarkDecodeStrictKnownMembers decodes an ordinary well-formed body.
func BenchmarkDecodeStrictKnownMembers(b *testing.B) {
	body := []byte(`{"currency":"DJF","amount_minor":5000,"metadata":{"order":"A-1","customer":"C-9"},"reference":"inv-1","items":[{"name":"a"},{"name":"b"}]}`)
	for _, c := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"strict", decodeStrict}, {"whole", decodeWhole}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v strictParams
				if err := c.decode(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
