package portal

import (
	"context"
	"database/sql"
	"strings"

	"github.com/payd/payd/internal/store"
)

// nameOf returns, for the signed-in merchant and mode, a person's name for
// an id the pages show: an API key (key_…) as its kind and masked display
// ("secret key sk_test_…9EQ"), a portal user (usr_…) as their email, a
// customer (cus_…) as their name, else their email. An id that is not the
// merchant's, or that no longer resolves, stays the id: the lookup never
// crosses merchants or modes. Each page memoises its lookups; a page shows
// at most a page of rows, so the lookups stay bounded.
func (p *Portal) nameOf(ctx context.Context, c *reqCtx) func(id string) string {
	memo := map[string]string{}
	return func(id string) string {
		if id == "" {
			return ""
		}
		if n, ok := memo[id]; ok {
			return n
		}
		n := p.lookupName(ctx, c, id)
		if n == "" {
			n = id
		}
		memo[id] = n
		return n
	}
}

func (p *Portal) lookupName(ctx context.Context, c *reqCtx, id string) string {
	mid := c.sess.MerchantID
	var a, b sql.NullString
	var err error
	switch {
	case strings.HasPrefix(id, "key_"):
		err = p.cfg.DB.QueryRow(ctx, "SELECT kind, display FROM api_keys WHERE id = ? AND merchant_id = ?", id, mid).Scan(&a, &b)
		if err == nil {
			return a.String + " key " + b.String
		}
	case strings.HasPrefix(id, "usr_"):
		err = p.cfg.DB.QueryRow(ctx, "SELECT email FROM users WHERE id = ? AND merchant_id = ?", id, mid).Scan(&a)
		if err == nil {
			return a.String
		}
	case strings.HasPrefix(id, "cus_"):
		err = p.cfg.DB.QueryRow(ctx, "SELECT name, email FROM customers WHERE id = ? AND merchant_id = ? AND livemode = ?", id, mid, c.live).Scan(&a, &b)
		if err == nil {
			if strings.TrimSpace(a.String) != "" {
				return a.String
			}
			return b.String
		}
	}
	if err != nil && !store.IsNotFound(err) {
		p.cfg.Logger.Warn("portal: naming an id", "id", id, "err", err)
	}
	return ""
}
