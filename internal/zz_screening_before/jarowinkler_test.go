package screening

import (
	"math"
	"strings"
	"testing"
)

func TestJaroWinkler(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"MARTHA", "MARHTA", 0.9611},
		{"DWAYNE", "DUANE", 0.8400},
		{"DIXON", "DICKSONX", 0.8133},
		{"HASAN", "HASAN", 1},
		{"ABC", "XYZ", 0},
		{"", "", 1},
		{"A", "", 0},
		{"ЖУК", "ЖУК", 1},
	}
	for _, tt := range tests {
		got := jaroWinkler([]rune(tt.a), []rune(tt.b))
		back := jaroWinkler([]rune(tt.b), []rune(tt.a))
		if math.Abs(got-tt.want) > 1e-4 || got != back {
			t.Errorf("jaroWinkler(%q, %q) = %.4f (reversed %.4f), want %.4f", tt.a, tt.b, got, back, tt.want)
		}
	}
}

func TestJaroWinklerLongWords(t *testing.T) {
	a := []rune(strings.Repeat("AB", 50))
	b := []rune(strings.Repeat("AB", 49) + "AC")
	if got := jaroWinkler(a, b); got < 0.98 || got >= 1 {
		t.Errorf("jaroWinkler of 100-rune words = %.4f, want just below 1", got)
	}
}

func BenchmarkJaroWinkler(b *testing.B) {
	x, y := []rune("MUHAMAD"), []rune("MUHAMADI")
	for b.Loop() {
		jaroWinkler(x, y)
	}
}
