package pagination

import (
	"net/url"
	"testing"
)

func TestClauseScoped(t *testing.T) {
	cases := []struct {
		q          string
		cond, tail string
	}{
		{"", "", " ORDER BY merchant_id DESC, livemode DESC, id DESC LIMIT 11"},
		{"limit=5&starting_after=pi_B", " AND id < ?", " ORDER BY merchant_id DESC, livemode DESC, id DESC LIMIT 6"},
		{"ending_before=pi_B", " AND id > ?", " ORDER BY merchant_id ASC, livemode ASC, id ASC LIMIT 11"},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.q)
		p, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		cond, _, tail := p.ClauseScoped("id", "merchant_id", "livemode")
		if cond != c.cond || tail != c.tail {
			t.Errorf("%q: got %q %q", c.q, cond, tail)
		}
	}
	p, _ := Parse(url.Values{})
	if _, _, tail := p.Clause("id"); tail != " ORDER BY id DESC LIMIT 11" {
		t.Errorf("Clause: %q", tail)
	}
	for _, bad := range []string{"limit=0", "limit=101", "limit=x", "starting_after=a&ending_before=b"} {
		q, _ := url.ParseQuery(bad)
		if _, err := Parse(q); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
