package apidocs

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Search is answered by the server: the form in the navigation sends
// GET /docs?q=..., and the answer is a short page of the operations that
// match, each linking to its section of the reference. It needs no script
// and makes no request anywhere but to this server.

// maxQuery bounds what a search reads of its query (in bytes) and how many
// words it weighs: the page is public.
const (
	maxQuery = 200
	maxTerms = 8
)

// searchEntry is what an operation is found by.
type searchEntry struct {
	id, method, path, summary, tag string
}

func searchForm(q string) string {
	return `<form class="search" action="/docs" method="get" role="search"><input type="search" name="q" value="` + esc(q) +
		`" placeholder="Search operations" aria-label="Search operations by name or path"><button type="submit">Search</button></form>`
}

// matches reports whether every term of the query is found in the entry:
// in its summary, operationId, tag or method (case-insensitive), or, for a
// term that starts with "/", in its path, where a concrete path such as
// /v1/refunds/re_123 matches the template /v1/refunds/{id}.
func (e searchEntry) matches(terms []string) bool {
	hay := strings.ToLower(e.summary + " " + e.id + " " + e.tag + " " + e.method + " " + e.path)
	for _, t := range terms {
		if strings.HasPrefix(t, "/") && pathMatches(e.path, t) {
			continue
		}
		if !strings.Contains(hay, t) {
			return false
		}
	}
	return true
}

// pathMatches reports whether a concrete path is an instance of a template
// (the template's "{...}" segments match any one segment), or a prefix of
// one segment by segment.
func pathMatches(template, path string) bool {
	ts := strings.Split(strings.Trim(template, "/"), "/")
	ps := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) > len(ts) {
		return false
	}
	for i, p := range ps {
		t := ts[i]
		if strings.HasPrefix(t, "{") || strings.EqualFold(t, p) {
			continue
		}
		if i == len(ps)-1 && strings.HasPrefix(strings.ToLower(t), strings.ToLower(p)) {
			continue // the last segment typed so far
		}
		return false
	}
	return true
}

func queryTerms(q string) []string {
	if len(q) > maxQuery {
		q = q[:maxQuery]
		for !utf8.ValidString(q) {
			q = q[:len(q)-1]
		}
	}
	terms := strings.Fields(strings.ToLower(q))
	if len(terms) > maxTerms {
		terms = terms[:maxTerms]
	}
	return terms
}

// Search returns the operationIds of the operations that match q, in the
// page's order.
func (ref *Reference) Search(q string) []string {
	var ids []string
	for _, e := range ref.search(q) {
		ids = append(ids, e.id)
	}
	return ids
}

func (ref *Reference) search(q string) []searchEntry {
	terms := queryTerms(q)
	if len(terms) == 0 {
		return nil
	}
	var out []searchEntry
	for _, e := range ref.index {
		if e.matches(terms) {
			out = append(out, e)
		}
	}
	return out
}

// serveSearch answers GET /docs?q=: the operations that match, linked to
// their sections.
func (ref *Reference) serveSearch(w http.ResponseWriter, q string) {
	if len(q) > maxQuery {
		q = q[:maxQuery]
		for !utf8.ValidString(q) {
			q = q[:len(q)-1]
		}
	}
	found := ref.search(q)
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><meta name=\"referrer\" content=\"no-referrer\">" +
		"<title>Search: " + esc(q) + " · " + esc(ref.title) + " reference</title><style>" + styleSheet + "</style></head><body>\n" +
		"<nav aria-label=\"Search\"><p class=\"brand\"><a href=\"/docs\">" + esc(ref.title) + "</a></p>" + searchForm(q) + "</nav>\n<main>")
	b.WriteString("<h1>Search</h1><p class=\"lead\">")
	switch len(found) {
	case 0:
		b.WriteString("No operation matches <code>" + esc(q) + "</code>. Words are looked for in each operation's summary, operationId, tag and method; a word starting with <code>/</code> in its path (<code>/v1/refunds/re_123</code> finds <code>/v1/refunds/{id}</code>).")
	case 1:
		b.WriteString("1 operation matches <code>" + esc(q) + "</code>.")
	default:
		b.WriteString(strconv.Itoa(len(found)) + " operations match <code>" + esc(q) + "</code>.")
	}
	b.WriteString("</p><ol class=\"results\">")
	for _, e := range found {
		b.WriteString("<li><a class=\"result\" href=\"/docs#" + esc(e.id) + "\"><span class=\"m m-" + strings.ToLower(e.method) + "\">" +
			e.method + "</span> " + esc(e.summary) + "</a><br><code class=\"path\">" + esc(e.path) + "</code> · <code>" + esc(e.id) +
			"</code> · " + esc(e.tag) + "</li>")
	}
	b.WriteString("</ol><p><a href=\"/docs\">The whole reference</a></p></main></body></html>\n")
	page := b.String()
	h := w.Header()
	h.Set("Content-Security-Policy", ref.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(page)))
	_, _ = w.Write([]byte(page))
}
