package portal

import (
	"context"
	"fmt"
	"net/http"

	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/webhooks"
)

// goLiveStep is one line of the go-live checklist: what live money needs,
// whether the merchant has it, and the page (relative to the live mode's
// root) or the person that gets it done.
type goLiveStep struct {
	ID     string
	Title  string
	Done   bool
	Detail string
	Link   string // "" when only payd's operator can do it
	Must   bool   // live payments or payouts are refused without it
}

type goLiveData struct {
	Steps     []goLiveStep
	Done, All int
	Ready     bool // every Must step is done
}

// goLiveChecklist reads, for the signed-in merchant, what taking live money
// needs: the operator's KYC approval, a connected live provider, a live
// secret key, a live webhook endpoint, the four-eyes threshold, two-factor
// sign-in for every admin, and (for payouts and transfers) a sanctions list.
// Each step is read from the same state the API checks, so the list cannot
// say done while the API refuses.
func (p *Portal) goLiveChecklist(ctx context.Context, c *reqCtx) (goLiveData, error) {
	var d goLiveData
	mid := c.sess.MerchantID
	m, err := p.cfg.Merchants.Get(ctx, mid)
	if err != nil {
		return d, err
	}
	add := func(s goLiveStep) {
		d.Steps = append(d.Steps, s)
		d.All++
		if s.Done {
			d.Done++
		}
	}
	add(goLiveStep{ID: "kyc", Title: "Business verified", Must: true, Done: m.KYCStatus == "approved",
		Detail: fmt.Sprintf("KYC status: %s. payd's operator approves it once your documents are checked; live payments are refused until then.", m.KYCStatus)})

	provs, err := p.cfg.Merchants.ConnectedProviders(ctx, mid)
	if err != nil {
		return d, err
	}
	pd := "No live provider is connected: payd's operator connects your provider accounts (payd provider connect)."
	if len(provs) > 0 {
		pd = fmt.Sprintf("Connected: %v.", provs)
	}
	add(goLiveStep{ID: "provider", Title: "A live provider connected", Must: true, Done: len(provs) > 0, Detail: pd})

	keys, err := p.cfg.Merchants.ListKeys(ctx, mid, true)
	if err != nil {
		return d, err
	}
	secret := 0
	for _, k := range keys {
		if k.Kind == "secret" && k.RevokedAt == nil {
			secret++
		}
	}
	add(goLiveStep{ID: "keys", Title: "A live secret key for your server", Must: true, Done: secret > 0, Link: "api_keys",
		Detail: fmt.Sprintf("%d live secret keys in use. Create one on the API keys page and keep it in your server's secrets store.", secret)})

	enabled := 0
	if wh := p.webhooks; wh != nil && wh() != nil {
		eps, _, err := wh().ListEndpoints(ctx, webhooks.Owner{MerchantID: mid, Livemode: true}, pagination.Page{Limit: 100})
		if err != nil {
			return d, err
		}
		for _, e := range eps {
			if e.Status == "enabled" {
				enabled++
			}
		}
	}
	add(goLiveStep{ID: "webhooks", Title: "A live webhook endpoint", Done: enabled > 0, Link: "webhook_endpoints",
		Detail: fmt.Sprintf("%d live endpoints enabled. Outcomes (succeeded, failed, refunded, disputed) reach your systems this way.", enabled)})

	st, err := p.cfg.Merchants.Settings(ctx, store.NoClaim, mid, true)
	if err != nil {
		return d, err
	}
	td := "No approval threshold: any one person can send a live payout or refund of any size."
	if st.ApprovalThresholdMinor != nil {
		td = fmt.Sprintf("Payouts and refunds above %d minor units need a second person's approval.", *st.ApprovalThresholdMinor)
	}
	add(goLiveStep{ID: "four_eyes", Title: "Four-eyes approval threshold", Done: st.ApprovalThresholdMinor != nil, Link: "settings", Detail: td})

	users, err := p.cfg.Merchants.ListUsers(ctx, mid)
	if err != nil {
		return d, err
	}
	admins, with := 0, 0
	for _, u := range users {
		if u.Role != "admin" || u.DisabledAt != nil {
			continue
		}
		admins++
		var n int
		if err := p.cfg.DB.QueryRow(ctx, "SELECT COUNT(*) FROM portal_totp WHERE user_id = ? AND enabled_at IS NOT NULL", u.ID).Scan(&n); err != nil {
			return d, err
		}
		if n > 0 {
			with++
		}
	}
	add(goLiveStep{ID: "two_factor", Title: "Two-factor sign-in for every admin", Done: admins > 0 && with == admins, Link: "account",
		Detail: fmt.Sprintf("%d of %d admins sign in with a second factor. Each admin turns it on under Account.", with, admins)})

	if p.cfg.SanctionsReady != nil {
		ok := p.cfg.SanctionsReady()
		add(goLiveStep{ID: "screening", Title: "Sanctions screening list loaded", Must: true, Done: ok,
			Detail: "Live payouts and bank transfers are screened against the list payd's operator configures (PAYD_SANCTIONS_LIST); without one they are refused."})
	}
	d.Ready = true
	for _, s := range d.Steps {
		if s.Must && !s.Done {
			d.Ready = false
		}
	}
	return d, nil
}

// goLivePage is GET /portal/{mode}/go-live.
func (p *Portal) goLivePage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	d, err := p.goLiveChecklist(r.Context(), c)
	if err != nil {
		return err
	}
	p.render(w, r, c, http.StatusOK, "golive", &view{Title: "Go-live checklist", Section: "golive", Data: d})
	return nil
}
