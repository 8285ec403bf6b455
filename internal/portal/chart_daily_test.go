package portal

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDailyChartSVG: one column per day, heights proportional to the day's
// volume against the busiest day, a title per column, and nothing the page
// would fetch (no link, image or script; the only URL is the SVG namespace).
func TestDailyChartSVG(t *testing.T) {
	first := time.Date(2026, 10, 28, 0, 0, 0, 0, time.UTC)
	c := &dailyChart{Currency: "DJF", First: first, Days: make([]dayPoint, chartDays)}
	for i := range c.Days {
		c.Days[i].Day = first.AddDate(0, 0, i)
	}
	c.Days[3] = dayPoint{Day: c.Days[3].Day, Minor: 40000, Succeeded: 4}
	c.Days[29] = dayPoint{Day: c.Days[29].Day, Minor: 10000, Succeeded: 1}
	svg := string(c.SVG())
	if n := strings.Count(svg, `<g class="day">`); n != chartDays {
		t.Fatalf("%d columns, want %d", n, chartDays)
	}
	heights := regexp.MustCompile(`<rect [^>]*height="(\d+)"`).FindAllStringSubmatch(svg, -1)
	if len(heights) != chartDays || heights[3][1] != "154" || heights[29][1] != "38" || heights[0][1] != "0" {
		t.Fatalf("column heights %v (want day 4 full at 154, day 30 a quarter, empty days 0)", heights)
	}
	if !strings.Contains(svg, "<title>31 Oct 2026: DJF 40,000, 4 succeeded</title>") {
		t.Fatalf("no title for the busiest day:\n%s", svg)
	}
	if c.Total() != 50000 {
		t.Fatalf("total %d", c.Total())
	}
	rest := strings.Replace(svg, `xmlns="http://www.w3.org/2000/svg"`, "", 1)
	for _, bad := range []string{"http", "href", "<image", "<script", "url(", "<foreignObject"} {
		if strings.Contains(rest, bad) {
			t.Errorf("the chart contains %q", bad)
		}
	}
}
