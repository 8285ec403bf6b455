package portal

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payd/payd/internal/store"
)

// The search box in the portal's header: GET /portal/{mode}/search?q=…
//
//   - an id (pi_…, po_…, re_…, cus_…, sub_…, in_…, dp_…, evt_…, batch_…,
//     po_bulk_…, term_…, we_…, clock_…) goes straight to its object's page when
//     the object is the signed-in merchant's, in the page's mode;
//   - an e-mail address finds the customers that have it (any case), and their
//     subscriptions, invoices and the payment intents those invoices made;
//   - key:value finds the objects whose metadata has that key with that value;
//   - anything else is text: customer names and e-mails, the descriptions of
//     payment intents, payouts and batches, payout recipients and references.
//
// Every lookup is the merchant's and mode's only, at most searchPerType hits
// a type. An id is read by its primary key and an e-mail through an index;
// text and metadata read at most the newest searchScan rows of each type
// (a bounded scan over the type's (merchant_id, livemode, id) index).
const (
	maxSearchQuery = 200  // bytes
	minSearchText  = 2    // characters of a text search
	searchPerType  = 10   // hits shown per type
	searchScan     = 2000 // newest rows of each type a text or metadata search reads
)

// searchKind is what the box understood the query as.
type searchKind string

const (
	searchID       searchKind = "id"
	searchEmail    searchKind = "email"
	searchMetadata searchKind = "metadata"
	searchText     searchKind = "text"
)

// searchType is one kind of object the search reads. cols are five
// expressions over the table (alias t): id, status, amount in minor units,
// currency and a label.
type searchType struct {
	key, label, table string
	cols              string
	text              []string // columns a text search matches
	metadata          bool     // has a metadata column
	live              bool     // false: exists in test mode only
	extra             string   // a further condition on t
	path              func(mode, id, label string) string
}

func collectionPath(collection string) func(mode, id, _ string) string {
	return func(mode, id, _ string) string {
		return "/portal/" + mode + "/" + collection + "/" + url.PathEscape(id)
	}
}

// searchTypes, in the order the results page shows them.
var searchTypes = []searchType{
	{key: "customers", label: "Customers", table: "customers", live: true, metadata: true, extra: "t.deleted_at IS NULL",
		cols: "t.id, '', 0, '', t.name || CASE WHEN t.email IS NULL THEN '' ELSE ' <' || t.email || '>' END",
		text: []string{"t.name", "t.email"}, path: collectionPath("customers")},
	{key: "payment_intents", label: "Payments", table: "payment_intents", live: true, metadata: true,
		cols: "t.id, t.status, t.amount_minor, t.currency, COALESCE(t.description, '')",
		text: []string{"t.description"}, path: collectionPath("payment_intents")},
	{key: "payouts", label: "Payouts", table: "payouts", live: true, metadata: true,
		cols: "t.id, t.status, t.amount, t.currency, COALESCE(t.recipient_name, t.recipient_msisdn, t.recipient_account, '') || ' · ' || t.reference",
		text: []string{"t.description", "t.recipient_name", "t.reference"}, path: collectionPath("payouts")},
	{key: "batches", label: "Payout batches", table: "payout_batches", live: true,
		cols: "t.id, t.status, t.total_amount_minor, COALESCE(t.currency, ''), COALESCE(t.description, '')",
		text: []string{"t.description"}, path: collectionPath("batches")},
	{key: "refunds", label: "Refunds", table: "refunds", live: true, metadata: true,
		cols: "t.id, t.status, t.amount_minor, t.currency, t.payment_intent",
		path: func(mode, id, intent string) string {
			return "/portal/" + mode + "/payment_intents/" + url.PathEscape(intent) + "#refund-" + url.PathEscape(id)
		}},
	{key: "subscriptions", label: "Subscriptions", table: "subscriptions", live: true, metadata: true,
		cols: "t.id, t.status, 0, '', t.customer_id", path: collectionPath("subscriptions")},
	{key: "invoices", label: "Invoices", table: "invoices", live: true,
		cols: "t.id, t.status, t.amount_due, t.currency, COALESCE(t.number, '')", path: collectionPath("invoices")},
	{key: "disputes", label: "Disputes", table: "disputes", live: true, metadata: true,
		cols: "t.id, t.status, t.amount_minor, t.currency, t.reason", path: collectionPath("disputes")},
	{key: "events", label: "Events", table: "events", live: true,
		cols: "t.id, '', 0, '', t.type", path: collectionPath("events")},
	{key: "terminals", label: "Terminals", table: "terminals", live: true,
		cols: "t.id, t.status, 0, '', ''", path: collectionPath("terminals")},
	{key: "webhook_endpoints", label: "Webhook endpoints", table: "webhook_endpoints", live: true,
		cols: "t.id, t.status, 0, '', t.url", path: collectionPath("webhook_endpoints")},
	{key: "test_clocks", label: "Test clocks", table: "test_clocks",
		cols: "t.id, t.status, 0, '', COALESCE(t.name, '')", path: collectionPath("test_clocks")},
}

// idPrefixes maps an id's prefix to its type; the longer prefix of two that
// share a start comes first (po_bulk_ before po_).
var idPrefixes = []struct{ prefix, typ string }{
	{"po_bulk_", "batches"}, {"batch_", "batches"}, {"pi_", "payment_intents"}, {"po_", "payouts"},
	{"re_", "refunds"}, {"cus_", "customers"}, {"sub_", "subscriptions"}, {"in_", "invoices"},
	{"dp_", "disputes"}, {"evt_", "events"}, {"term_", "terminals"}, {"we_", "webhook_endpoints"},
	{"clock_", "test_clocks"},
}

func typeByKey(key string) *searchType {
	for i := range searchTypes {
		if searchTypes[i].key == key {
			return &searchTypes[i]
		}
	}
	return nil
}

// idType returns the type of an id the box was given, or nil when q is not
// one: a single word of letters, digits and _ that starts with a known
// prefix followed by something.
func idType(q string) *searchType {
	for _, r := range q {
		if !(r == '_' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return nil
		}
	}
	for _, p := range idPrefixes {
		if strings.HasPrefix(q, p.prefix) && len(q) > len(p.prefix) {
			return typeByKey(p.typ)
		}
	}
	return nil
}

// classify says what q is: an id, an e-mail address, key:value, or text.
func classify(q string) searchKind {
	switch {
	case idType(q) != nil:
		return searchID
	case strings.Contains(q, "@") && !strings.ContainsFunc(q, unicode.IsSpace) && !strings.Contains(q, ":"):
		return searchEmail
	}
	if k, v, ok := strings.Cut(q, ":"); ok && k != "" && strings.TrimSpace(v) != "" && !strings.ContainsFunc(k, unicode.IsSpace) {
		return searchMetadata
	}
	return searchText
}

type searchHit struct {
	ID       string
	Path     string
	Status   string
	Amount   int64
	Currency string
	Label    string
}

type searchGroup struct {
	Key, Label string
	Hits       []searchHit
	More       bool // more than searchPerType matched
}

type searchData struct {
	Query  string
	Kind   searchKind
	Groups []searchGroup
	Scan   int  // the bound of a text or metadata search
	Missed bool // an id of a known kind that is not here
}

// searchPage answers the search box: an id of the merchant's in this mode
// redirects to its page; anything else lists what matched, grouped by type.
func (p *Portal) searchPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	d := &searchData{Query: q, Scan: searchScan}
	v := &view{Title: "Search", Section: "search", Form: url.Values{"q": {q}}, Data: d}
	fail := func(msg string) error {
		v.Error, v.ErrorCode, v.FieldErrors = msg, "parameter_invalid", map[string]string{"q": msg}
		p.render(w, r, c, http.StatusBadRequest, "search", v)
		return nil
	}
	switch {
	case q == "":
		p.render(w, r, c, http.StatusOK, "search", v)
		return nil
	case len(q) > maxSearchQuery:
		return fail("The search is at most 200 characters long.")
	case !utf8.ValidString(q) || strings.ContainsRune(q, 0):
		return fail("The search must be text.")
	}
	ctx := r.Context()
	d.Kind = classify(q)
	var err error
	switch d.Kind {
	case searchID:
		var path string
		if path, err = p.findByID(ctx, c, idType(q), q); err == nil && path != "" {
			http.Redirect(w, r, path, http.StatusSeeOther)
			return nil
		}
		d.Missed = true
	case searchEmail:
		d.Groups, err = p.searchEmail(ctx, c, strings.ToLower(q))
	case searchMetadata:
		key, val, _ := strings.Cut(q, ":")
		d.Groups, err = p.searchMetadata(ctx, c, key, strings.TrimSpace(val))
	default:
		if utf8.RuneCountInString(q) < minSearchText {
			return fail("Type at least 2 characters, an id, an e-mail address or key:value.")
		}
		d.Groups, err = p.searchText(ctx, c, strings.ToLower(q))
	}
	if err != nil {
		return err
	}
	p.render(w, r, c, http.StatusOK, "search", v)
	return nil
}

// findByID returns the page of the object with this id when it is the
// signed-in merchant's in this mode, "" otherwise. It reads the row by its
// primary key alone and checks merchant and mode here (see
// docs/architecture.md on reads by id).
func (p *Portal) findByID(ctx context.Context, c *reqCtx, st *searchType, id string) (string, error) {
	if st == nil || (!st.live && c.live) {
		return "", nil
	}
	cond := ""
	if st.extra != "" {
		cond = " AND " + st.extra
	}
	var mid string
	var live bool
	var h searchHit
	err := p.cfg.DB.QueryRow(ctx, "SELECT t.merchant_id, t.livemode, "+st.cols+" FROM "+st.table+" t WHERE t.id = ?"+cond, id).
		Scan(&mid, &live, &h.ID, &h.Status, &h.Amount, &h.Currency, &h.Label)
	if store.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if mid != c.sess.MerchantID || live != c.live {
		return "", nil
	}
	return st.path(c.mode, h.ID, h.Label), nil
}

// searchQuery runs one type's search and returns its group (nil when nothing
// matched). from is the rows the search reads (aliased t), cond their
// condition and args its arguments, after the merchant and mode. The whole
// match is cond: every row the query answers is a hit, so the LIMIT bounds
// hits, never candidates a later check could still turn down.
func (p *Portal) searchQuery(ctx context.Context, c *reqCtx, st *searchType, from, cond string, args []any) (*searchGroup, error) {
	if !st.live && c.live {
		return nil, nil
	}
	if st.extra != "" {
		cond += " AND " + st.extra
	}
	rows, err := p.cfg.DB.Query(ctx, "SELECT "+st.cols+" FROM "+from+" WHERE "+cond+" ORDER BY t.id DESC LIMIT ?", append(args, searchPerType+1)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	g := &searchGroup{Key: st.key, Label: st.label}
	for rows.Next() {
		var h searchHit
		if err := rows.Scan(&h.ID, &h.Status, &h.Amount, &h.Currency, &h.Label); err != nil {
			return nil, err
		}
		if len(g.Hits) == searchPerType {
			g.More = true
			break
		}
		h.Path = st.path(c.mode, h.ID, h.Label)
		g.Hits = append(g.Hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(g.Hits) == 0 {
		return nil, nil
	}
	return g, nil
}

// newest is the bounded scan a text or metadata search reads: the newest
// searchScan rows of the merchant's table in this mode (by the table's
// (merchant_id, livemode, id) index).
func newest(table string) string {
	return "(SELECT * FROM " + table + " WHERE merchant_id = ? AND livemode = ? ORDER BY id DESC LIMIT ?) t"
}

func appendGroup(out []searchGroup, g *searchGroup, err error) ([]searchGroup, error) {
	if err != nil || g == nil {
		return out, err
	}
	return append(out, *g), nil
}

// searchEmail finds the customers with this e-mail address (any case) and,
// through them, their subscriptions, their invoices and the payment intents
// those invoices made. Payouts have no customer, so an address finds none.
func (p *Portal) searchEmail(ctx context.Context, c *reqCtx, email string) ([]searchGroup, error) {
	mid, live := c.sess.MerchantID, c.live
	customers := "SELECT id FROM customers WHERE merchant_id = ? AND livemode = ? AND LOWER(email) = ? AND deleted_at IS NULL"
	cargs := []any{mid, live, email}
	var out []searchGroup
	g, err := p.searchQuery(ctx, c, typeByKey("customers"), "customers t",
		"t.merchant_id = ? AND t.livemode = ? AND LOWER(t.email) = ?", []any{mid, live, email})
	if out, err = appendGroup(out, g, err); err != nil {
		return nil, err
	}
	for _, key := range []string{"subscriptions", "invoices"} {
		st := typeByKey(key)
		g, err := p.searchQuery(ctx, c, st, st.table+" t", "t.customer_id IN ("+customers+") AND t.merchant_id = ? AND t.livemode = ?",
			append(append([]any{}, cargs...), mid, live))
		if out, err = appendGroup(out, g, err); err != nil {
			return nil, err
		}
	}
	g, err = p.searchQuery(ctx, c, typeByKey("payment_intents"), "payment_intents t",
		"t.invoice_id IN (SELECT i.id FROM invoices i WHERE i.customer_id IN ("+customers+") AND i.merchant_id = ? AND i.livemode = ?) AND t.merchant_id = ? AND t.livemode = ?",
		append(append([]any{}, cargs...), mid, live, mid, live))
	return appendGroup(out, g, err)
}

// likeEscape escapes LIKE's wildcards (the queries say ESCAPE '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// searchMetadata finds, among the newest searchScan objects of each type
// with metadata, those whose metadata holds key with exactly value (case
// included). The match is the query's own condition, over the members of
// the stored JSON (Engine.JSONMembers), so a match is found wherever it is
// among the rows scanned: none is dropped after the LIMIT.
func (p *Portal) searchMetadata(ctx context.Context, c *reqCtx, key, val string) ([]searchGroup, error) {
	cond := "EXISTS (SELECT 1 FROM " + p.cfg.DB.Engine().JSONMembers("t.metadata") + " j WHERE j.key = ? AND j.value = ?)"
	var out []searchGroup
	for i := range searchTypes {
		st := &searchTypes[i]
		if !st.metadata {
			continue
		}
		g, err := p.searchQuery(ctx, c, st, newest(st.table), cond, []any{c.sess.MerchantID, c.live, searchScan, key, val})
		if out, err = appendGroup(out, g, err); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// searchText finds text (already lower-cased) in the text columns of the
// newest searchScan objects of each type that has some. Case is ignored
// for ASCII letters on both engines (SQLite's LOWER folds only those).
func (p *Portal) searchText(ctx context.Context, c *reqCtx, text string) ([]searchGroup, error) {
	pattern := "%" + likeEscape(text) + "%"
	var out []searchGroup
	for i := range searchTypes {
		st := &searchTypes[i]
		if len(st.text) == 0 {
			continue
		}
		var conds []string
		args := []any{c.sess.MerchantID, c.live, searchScan}
		for _, col := range st.text {
			conds = append(conds, "LOWER("+col+`) LIKE ? ESCAPE '\'`)
			args = append(args, pattern)
		}
		g, err := p.searchQuery(ctx, c, st, newest(st.table), "("+strings.Join(conds, " OR ")+")", args)
		if out, err = appendGroup(out, g, err); err != nil {
			return nil, err
		}
	}
	return out, nil
}
