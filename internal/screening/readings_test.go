package screening

import (
	"strings"
	"testing"
)

func TestHangulReadings(t *testing.T) {
	tests := []struct {
		in   string
		want [3]string // North Korean, McCune-Reischauer, Revised Romanization
	}{
		{"박영식", [3]string{"PAK YONG SIK", "PAK YONG SIK", "BAK YEONG SIK"}},
		{"정경택", [3]string{"JONG KYONG THAEK", "CHONG KYONG TAEK", "JEONG GYEONG TAEK"}},
		{"최룡해", [3]string{"CHOE RYONG HAE", "CHOE RYONG HAE", "CHOE RYONG HAE"}},
		{"김정은 Kim", [3]string{"KIM JONG UN Kim", "KIM CHONG UN Kim", "GIM JEONG EUN Kim"}},
	}
	for _, tt := range tests {
		for sys := range hangulSystems {
			if got := strings.Join(strings.Fields(hangulReading(tt.in, sys)), " "); got != tt.want[sys] {
				t.Errorf("hangulReading(%q, %d) = %q, want %q", tt.in, sys, got, tt.want[sys])
			}
		}
	}
}

func TestHebrewReadings(t *testing.T) {
	tests := []struct {
		in       string
		vav      rune
		clusters bool
		want     string
	}{
		{"ניקולס מדורו", 'O', true, "NIKOLAS MADORO"},
		{"ניקולס מדורו", 'U', true, "NIKULAS MADURU"},
		{"ניקולס מדורו", 'O', false, "NIKOLS MDORO"},
		{"אוסאמה בן לאדן", 'O', true, "OSAMA BAN LADAN"},
		{"איגור סצ׳ין", 'O', true, "IGOR SACHIN"},
		{"בשאר אסד", 'O', true, "BASHAR ASAD"},
		{"ויקטור", 'O', true, "VIKTOR"}, // vav at the start is V
	}
	for _, tt := range tests {
		if got := hebrewReading(tt.in, tt.vav, tt.clusters); got != tt.want {
			t.Errorf("hebrewReading(%q, %c, %v) = %q, want %q", tt.in, tt.vav, tt.clusters, got, tt.want)
		}
	}
}

func TestJapaneseReading(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"高山清司", "TAKAYAMA KIYOSHI", true},
		{"清田次郎", "KIYO TA JIRO", true},    // 清 inside a run is not the name KIYOSHI
		{"高山清", "TAKAYAMA KIYOSHI", true}, // ... at its end it is
		{"佐々木健", "SASAKI KEN", true},      // the repetition mark
		{"山田・太郎", "YAMADA TARO", true},
		{"李方伟", "", false}, // a Chinese name: no Japanese reading
	}
	for _, tt := range tests {
		got, ok := japaneseReading(tt.in)
		if got = strings.Join(strings.Fields(got), " "); ok != tt.ok || got != tt.want {
			t.Errorf("japaneseReading(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
