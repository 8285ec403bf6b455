package portal

import (
	"net/http"

	"github.com/payd/payd/internal/banking"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/pagination"
)

// complianceLimit is how many held items of each kind the queue shows; the
// full lists are one click away.
const complianceLimit = 100

type complianceData struct {
	Transfers     []*banking.Transfer
	MoreTransfers bool
	TransfersOn   bool
	Payouts       any
	MorePayouts   bool
	PayoutsOn     bool
}

// addCompliance adds the compliance queue page once, whichever capability
// asks first; it shows what is wired.
func (p *Portal) addCompliance() {
	if p.complianceOn {
		return
	}
	p.complianceOn = true
	p.addCapability(capability{
		nav: navItem{Section: "compliance", Label: "Compliance queue", Path: "compliance"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/compliance", p.page(roleViewer, p.compliancePage))
		},
	})
}

// compliancePage lists what waits for a compliance decision: payouts held by
// sanctions screening (with the matched list entries and scores) and bank
// transfers held ACWP where this merchant is the creditor agent that
// reviews them. Each has its release and reject forms, with a note.
func (p *Portal) compliancePage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	d := complianceData{}
	page := pagination.Page{Limit: complianceLimit}
	if p.banking != nil {
		_, err := p.banking().Caller(ctx, c.principal())
		if e := errs.As(err); err != nil && (e == nil || e.Kind != errs.KindPermission) {
			return err
		}
		if err == nil {
			d.TransfersOn = true
			list, more, err := p.banking().List(ctx, c.principal(), banking.ListParams{Page: page, Status: banking.StatusACWP, Role: "creditor"})
			if err != nil {
				return err
			}
			d.Transfers, d.MoreTransfers = list, more
		}
	}
	if p.heldPayouts != nil {
		d.PayoutsOn = true
		var err error
		if d.Payouts, d.MorePayouts, err = p.heldPayouts(r, c, page); err != nil {
			return err
		}
	}
	p.render(w, r, c, http.StatusOK, "compliance", &view{Title: "Compliance queue", Section: "compliance", Data: d})
	return nil
}
