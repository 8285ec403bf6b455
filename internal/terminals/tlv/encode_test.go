package tlv

import (
	"bytes"
	"errors"
	"testing"
)

// TestEncodeRoundTrip checks encode(parse(x)) == x for canonical encodings.
func TestEncodeRoundTrip(t *testing.T) {
	tests := []string{
		"5A 08 4242424242424242",
		"9F26 08 0102030405060708 9F27 01 80",
		"DF8101 00",
		"5F50 81 80" + hexRepeat("41", 0x80),
		"5F50 82 0100" + hexRepeat("41", 0x100),
		"70 06 5A 01 01 9C 01 00",
		"6F 08 A5 06 BF0C 03 87 01 01",
		"77 00",
		"70 81 84 5F50 81 80" + hexRepeat("42", 0x80),
	}
	for _, in := range tests {
		x := unhex(t, in)
		l, err := Parse(x)
		if err != nil {
			t.Fatalf("Parse(%s): %v", in, err)
		}
		got, err := Encode(l)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		if !bytes.Equal(got, x) {
			t.Errorf("encode(parse(%s)) = %X", in, got)
		}
	}
}

// TestEncodeCanonicalises checks that padding and long lengths are dropped.
func TestEncodeCanonicalises(t *testing.T) {
	l, err := Parse(unhex(t, "00 FF 5A 81 01 01 70 82 0004 00 9C 01 00 00 00"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, "5A 01 01 70 03 9C 01 00"); !bytes.Equal(got, want) {
		t.Errorf("Encode = %X, want %X", got, want)
	}
}

func TestEncodeBuilt(t *testing.T) {
	l := List{
		Constructed(0x70, Primitive(0x5A, []byte{0x42}), Constructed(0xBF0C)),
		{Tag: 0x77, Value: []byte{0x9C, 0x01, 0x00}}, // raw contents when Children is nil
	}
	got, err := Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, "70 06 5A 01 42 BF0C 00 77 03 9C 01 00"); !bytes.Equal(got, want) {
		t.Errorf("Encode = %X, want %X", got, want)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		l    List
	}{
		{"zero tag", List{Primitive(0, nil)}},
		{"incomplete tag", List{Primitive(0x9F, nil)}},
		{"padding tag", List{Primitive(0xFF, nil)}},
		{"primitive with children", List{{Tag: 0x5A, Children: List{Primitive(0x9C, nil)}}}},
		{"bad nested tag", List{Constructed(0x70, Primitive(0x1F, nil))}},
	}
	for _, tt := range tests {
		if _, err := Encode(tt.l); !errors.Is(err, ErrInvalidTag) {
			t.Errorf("%s: Encode error = %v, want ErrInvalidTag", tt.name, err)
		}
	}
}

func hexRepeat(b string, n int) string {
	return string(bytes.Repeat([]byte(b), n))
}
