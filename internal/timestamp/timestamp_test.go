package timestamp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type inner struct {
	At time.Time `json:"at"`
}

type hidden struct {
	PromotedAt time.Time `json:"promoted_at"`
}

type object struct {
	hidden
	ID       string            `json:"id"`
	Created  time.Time         `json:"created_at"`
	Done     *time.Time        `json:"done_at"`
	Items    []inner           `json:"items"`
	ByName   map[string]inner  `json:"by_name"`
	Any      any               `json:"any"`
	Metadata map[string]string `json:"metadata"`
	private  time.Time
}

func TestSecondsTruncatesEveryTimeAndLeavesTheOriginal(t *testing.T) {
	at := time.Date(2026, 11, 29, 4, 5, 6, 789123000, time.FixedZone("EAT", 3*3600))
	done := at.Add(time.Second)
	in := &object{hidden: hidden{PromotedAt: at}, ID: "x", Created: at, Done: &done,
		Items: []inner{{At: at}}, ByName: map[string]inner{"a": {At: at}},
		Any: map[string]any{"deep": []any{inner{At: at}}}, Metadata: map[string]string{"k": "2026-01-01T00:00:00.5Z"}, private: at}
	b, err := json.Marshal(Seconds(in))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, ".789") || strings.Contains(s, "+03:00") {
		t.Fatalf("a timestamp kept its fraction or zone: %s", s)
	}
	for _, want := range []string{`"created_at":"2026-11-29T01:05:06Z"`, `"done_at":"2026-11-29T01:05:07Z"`,
		`"promoted_at":"2026-11-29T01:05:06Z"`, `"at":"2026-11-29T01:05:06Z"`, `"k":"2026-01-01T00:00:00.5Z"`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in %s", want, s)
		}
	}
	if in.Created != at || *in.Done != done || in.Items[0].At != at || in.ByName["a"].At != at || in.PromotedAt != at || in.private != at {
		t.Fatal("Seconds modified its argument")
	}
}

func TestSecondsReturnsTimelessValuesAsIs(t *testing.T) {
	m := map[string]string{"a": "b"}
	if got := Seconds(m).(map[string]string); &got == nil || len(got) != 1 {
		t.Fatal("lost the value")
	}
	if Seconds(nil) != nil {
		t.Fatal("nil")
	}
}

func TestFormat(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 999999999, time.FixedZone("X", -3600))
	if got := Format(at); got != "2026-01-02T04:04:05Z" {
		t.Fatal(got)
	}
}

// An object whose times are all already as the wire shows them is returned
// as is, without a copy; one time off the wire form anywhere it can be seen
// makes Seconds copy and fix it, as before.
func TestSecondsSkipsTheCopyOnlyWhenEveryTimeIsWireForm(t *testing.T) {
	wire := time.Date(2026, 11, 29, 1, 5, 6, 0, time.UTC)
	type flat struct {
		hidden
		ID      string     `json:"id"`
		Created time.Time  `json:"created_at"`
		Done    *time.Time `json:"done_at"`
		Items   []inner    `json:"items"`
		Arr     [2]inner   `json:"arr"`
		private time.Time
	}
	done := wire
	ok := flat{hidden: hidden{PromotedAt: wire}, ID: "x", Created: wire, Done: &done, Items: []inner{{At: wire}}, Arr: [2]inner{{At: wire}, {At: wire}},
		private: wire.Add(time.Nanosecond)} // unexported: encoding/json never sees it
	if got := Seconds(&ok).(*flat); got != &ok {
		t.Fatal("a pointer to a wire-form object was copied")
	}
	if n := testing.AllocsPerRun(10, func() { _ = Seconds(ok) }); n > 1 { // the boxing of ok
		t.Fatalf("a wire-form object cost %v allocations", n)
	}
	frac := wire.Add(500 * time.Millisecond)
	zoned := wire.In(time.FixedZone("EAT", 3*3600))
	for name, bad := range map[string]func(*flat){
		"field":    func(f *flat) { f.Created = frac },
		"zone":     func(f *flat) { f.Created = zoned },
		"pointer":  func(f *flat) { f.Done = &frac },
		"slice":    func(f *flat) { f.Items = []inner{{At: wire}, {At: frac}} },
		"array":    func(f *flat) { f.Arr[1].At = frac },
		"embedded": func(f *flat) { f.PromotedAt = frac },
	} {
		f := ok
		bad(&f)
		b, err := json.Marshal(Seconds(f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), ".5") || strings.Contains(string(b), "+03:00") {
			t.Errorf("%s: a time kept its fraction or zone: %s", name, b)
		}
	}
	// Maps and interfaces are not looked into: copied whenever they may hold a time.
	m := map[string]inner{"a": {At: frac}}
	if b, _ := json.Marshal(Seconds(m)); strings.Contains(string(b), ".5") {
		t.Fatalf("map: %s", b)
	}
}
