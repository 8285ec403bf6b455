package portal

import (
	"context"
	"html/template"
	"strconv"
	"strings"
)

// volumeChart is today's payment volume and success rate per provider, drawn
// as a server-rendered SVG bar chart (no script needed to see it).
type volumeChart struct {
	Currency string
	Rows     []volumeRow
}

// volumeRow is one provider's day.
type volumeRow struct {
	Provider    string
	VolumeMinor int64 // succeeded amount
	Attempts    int
	Succeeded   int
}

// SuccessRate is the share of today's intents that succeeded, in percent.
func (v volumeRow) SuccessRate() int {
	if v.Attempts == 0 {
		return 0
	}
	return v.Succeeded * 100 / v.Attempts
}

// SVG draws one horizontal bar per provider, its length the volume, with
// the success rate written beside it. Numbers only reach the SVG through
// strconv and names through template escaping.
func (c *volumeChart) SVG() template.HTML {
	const rowH, labelW, barW, width = 28, 110, 300, 560
	var max int64 = 1
	for _, r := range c.Rows {
		if r.VolumeMinor > max {
			max = r.VolumeMinor
		}
	}
	h := rowH*len(c.Rows) + 10
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="chart-title" width="` + strconv.Itoa(width) + `" height="` + strconv.Itoa(h) + `" viewBox="0 0 ` + strconv.Itoa(width) + ` ` + strconv.Itoa(h) + `">`)
	b.WriteString(`<title id="chart-title">Today's volume (` + template.HTMLEscapeString(c.Currency) + `) and success rate per provider</title>`)
	for i, r := range c.Rows {
		y := 5 + i*rowH
		w := int(r.VolumeMinor * barW / max)
		if r.VolumeMinor > 0 && w < 2 {
			w = 2
		}
		name := template.HTMLEscapeString(r.Provider)
		b.WriteString(`<g><title>` + name + `: ` + template.HTMLEscapeString(formatMoney(r.VolumeMinor, c.Currency)) + `, ` +
			strconv.Itoa(r.Succeeded) + ` of ` + strconv.Itoa(r.Attempts) + ` succeeded</title>`)
		b.WriteString(`<text x="0" y="` + strconv.Itoa(y+17) + `" font-size="13" fill="#222">` + name + `</text>`)
		b.WriteString(`<rect x="` + strconv.Itoa(labelW) + `" y="` + strconv.Itoa(y+4) + `" width="` + strconv.Itoa(w) + `" height="18" fill="#3b6fd8"></rect>`)
		b.WriteString(`<text x="` + strconv.Itoa(labelW+w+6) + `" y="` + strconv.Itoa(y+17) + `" font-size="12" fill="#222">` +
			template.HTMLEscapeString(formatMoney(r.VolumeMinor, c.Currency)) + ` · ` + strconv.Itoa(r.SuccessRate()) + `% ok</text></g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// volumeSource computes the chart; set when payments are wired.
type volumeSource func(ctx context.Context, c *reqCtx) ([]*volumeChart, error)
