package portal

import (
	"context"
	"html/template"
	"strconv"
	"strings"
	"time"
)

// chartDays is how many days the dashboard's history chart covers (today
// included).
const chartDays = 30

// dailyChart is one currency's succeeded payment volume per UTC day over the
// last chartDays days, drawn as a server-rendered SVG column chart: no
// script, no outside asset, readable without styles.
type dailyChart struct {
	Currency string
	First    time.Time  // the first day (midnight UTC)
	Days     []dayPoint // chartDays entries, oldest first; days without payments are zero
}

// dayPoint is one day of a dailyChart.
type dayPoint struct {
	Day       time.Time
	Minor     int64
	Succeeded int
}

// Total is the period's succeeded volume.
func (c *dailyChart) Total() int64 {
	var t int64
	for _, d := range c.Days {
		t += d.Minor
	}
	return t
}

// SVG draws one column per day, its height the day's volume against the
// period's busiest day, with the busiest day's amount and the first, middle
// and last dates written along the axis. Every column has a title (hover, and
// screen readers) with its date, amount and count. Numbers reach the SVG only
// through strconv, names only through escaping.
func (c *dailyChart) SVG() template.HTML {
	const width, height, left, bottom, top = 640, 200, 8, 24, 22
	plotW, plotH := width-2*left, height-bottom-top
	colW := plotW / len(c.Days)
	var max int64 = 1
	for _, d := range c.Days {
		if d.Minor > max {
			max = d.Minor
		}
	}
	cur := template.HTMLEscapeString(c.Currency)
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="daily-title-` + cur + `" width="` + strconv.Itoa(width) +
		`" height="` + strconv.Itoa(height) + `" viewBox="0 0 ` + strconv.Itoa(width) + ` ` + strconv.Itoa(height) + `">`)
	b.WriteString(`<title id="daily-title-` + cur + `">Succeeded payments per day, last ` + strconv.Itoa(len(c.Days)) + ` days (` + cur + `)</title>`)
	b.WriteString(`<text x="` + strconv.Itoa(left) + `" y="14" font-size="12" fill="#555">busiest day ` +
		template.HTMLEscapeString(formatMoney(max, c.Currency)) + `</text>`)
	base := top + plotH
	b.WriteString(`<line x1="` + strconv.Itoa(left) + `" y1="` + strconv.Itoa(base) + `" x2="` + strconv.Itoa(left+plotW) + `" y2="` + strconv.Itoa(base) + `" stroke="#999"></line>`)
	for i, d := range c.Days {
		h := int(d.Minor * int64(plotH) / max)
		if d.Minor > 0 && h < 2 {
			h = 2
		}
		x := left + i*colW
		b.WriteString(`<g class="day"><title>` + d.Day.Format("2 Jan 2006") + `: ` + template.HTMLEscapeString(formatMoney(d.Minor, c.Currency)) +
			`, ` + strconv.Itoa(d.Succeeded) + ` succeeded</title>`)
		b.WriteString(`<rect x="` + strconv.Itoa(x+1) + `" y="` + strconv.Itoa(base-h) + `" width="` + strconv.Itoa(colW-2) +
			`" height="` + strconv.Itoa(h) + `" fill="#3b6fd8"></rect></g>`)
		if i == 0 || i == len(c.Days)/2 || i == len(c.Days)-1 {
			anchor := "middle"
			switch i {
			case 0:
				anchor = "start"
			case len(c.Days) - 1:
				anchor = "end"
			}
			tx := x + colW/2
			if anchor == "start" {
				tx = x
			} else if anchor == "end" {
				tx = x + colW
			}
			b.WriteString(`<text x="` + strconv.Itoa(tx) + `" y="` + strconv.Itoa(height-6) + `" font-size="11" fill="#555" text-anchor="` + anchor + `">` +
				d.Day.Format("2 Jan") + `</text>`)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// dailySource computes the 30-day charts; set when payments are wired.
type dailySource func(ctx context.Context, c *reqCtx) ([]*dailyChart, error)

// paymentDaily builds one chart per currency the merchant took payments in
// over the last chartDays UTC days, every day present.
func (p *Portal) paymentDaily(ctx context.Context, c *reqCtx) ([]*dailyChart, error) {
	today := p.now().UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -(chartDays - 1))
	vols, err := p.payments().DailyVolumeSince(ctx, c.principal(), first)
	if err != nil {
		return nil, err
	}
	var out []*dailyChart
	byCur := map[string]*dailyChart{}
	for _, v := range vols {
		ch := byCur[v.Currency]
		if ch == nil {
			ch = &dailyChart{Currency: v.Currency, First: first, Days: make([]dayPoint, chartDays)}
			for i := range ch.Days {
				ch.Days[i].Day = first.AddDate(0, 0, i)
			}
			byCur[v.Currency] = ch
			out = append(out, ch)
		}
		i := int(v.Day.Sub(first) / (24 * time.Hour))
		if i >= 0 && i < chartDays {
			ch.Days[i].Minor += v.SucceededMinor
			ch.Days[i].Succeeded += v.Succeeded
		}
	}
	return out, nil
}
