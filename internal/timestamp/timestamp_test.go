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
