package screening

import (
	"context"
	"strings"
	"testing"
)

// benchNames are screened in BenchmarkScreen: listed names with variations
// (hits) and common names that are not listed (clear).
var benchNames = map[string][]string{
	"hit": {
		"Hasan Dahir Awees", "Osama bin Laden", "Nicolás Maduro Moros", "Artem Lifshits",
		"Banco Nacional de Cuba", "Mohammed Hamza al-Zubaidi", "Igor Strelkov",
	},
	"clear": {
		"Fatouma Ahmed Houssein", "Abebe Kebede Tesfaye", "Jean-Pierre Dubois",
		"Abdirahman Mohamed Farah", "Société Djiboutienne de Commerce", "Mohamed Ali Hassan Youssouf",
	},
}

// BenchmarkScreen measures screening one name against the full 2021 SDN
// list, with the word cache warm (names whose words were screened before) and
// emptied before every name (words never seen).
func BenchmarkScreen(b *testing.B) {
	l := fullList(b)
	for _, kind := range []string{"hit", "clear"} {
		names := benchNames[kind]
		for _, cached := range []bool{true, false} {
			label := kind + "/cached"
			if !cached {
				label = kind + "/uncached"
			}
			b.Run(label, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if !cached {
						l.words.reset()
					}
					l.Screen(names[i%len(names)], Options{})
					i++
				}
			})
		}
	}
}

// BenchmarkLoad measures loading and indexing the full 2021 SDN list with its
// aliases from disk.
func BenchmarkLoad(b *testing.B) {
	path := fullListPath(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(context.Background(), path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScreenVaried screens the 10,000 varied names of the latency
// helper (listed names with typos, dropped and swapped words; invented names
// of the region) in turn, with the word cache emptied before each: the cost
// of a name whose words were never seen.
func BenchmarkScreenVaried(b *testing.B) {
	l := fullList(b)
	names := latencyNames(l, 10_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.words.reset()
		l.Screen(names[i%len(names)], Options{})
		i++
	}
}

// readingNames are names screened in more than one reading (Hangul, Hebrew
// and kanji readings, letters spelled out, initials, a surname alone), and
// the costliest names of 140 characters (the most payd's callers accept)
// found for these readings: 140 Hangul syllables (four readings of 64
// words), a run of 64 spelled-out letters (divided by the list's words) and
// a mix of every script read more ways.
var readingNames = []struct{ label, name string }{
	{"hangul", "박영식"},
	{"hebrew", "ניקולס מדורו"},
	{"kanji", "高山清司"},
	{"spelled", "U S A M A B I N L A D I N"},
	{"initials", "N. Maduro Moros"},
	{"surname", "maduro"},
	{"worst-hangul140", string([]rune(strings.Repeat("박영식정경택", 24))[:140])},
	{"worst-spelled64", strings.Join(strings.Split("USAMABINLADINNICOLASMADUROMOROSHASANDAHIRAWEYSABCDEFGHIJKLMNOPQR", ""), " ")},
	{"worst-mix140", string([]rune(strings.Repeat("박영식 ניקולס 高山清司 ニコラス Us-ama La-din ", 6))[:140])},
}

// BenchmarkScreenReadings screens each of readingNames against the full
// list with the word cache emptied before every name.
func BenchmarkScreenReadings(b *testing.B) {
	l := fullList(b)
	for _, n := range readingNames {
		b.Run(n.label, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.words.reset()
				l.Screen(n.name, Options{})
			}
		})
	}
}
