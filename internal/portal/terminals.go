package portal

import (
	"net/http"
	"strings"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/terminals"
)

// WithTerminals adds the terminal pages: list, register, and each
// terminal's page with activate and deregister.
func (p *Portal) WithTerminals(get func() *terminals.Service) {
	p.terminals = get
	p.addCapability(capability{
		nav: navItem{Section: "terminals", Label: "Terminals", Path: "terminals"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/terminals", p.page(roleViewer, p.terminalsList))
			m.Handle("POST /portal/{mode}/terminals", p.page(roleApprover, p.registerTerminal))
			m.Handle("GET /portal/{mode}/terminals/{id}", p.page(roleViewer, p.terminalPage))
			m.Handle("POST /portal/{mode}/terminals/{id}/activate", p.page(roleApprover, p.activateTerminal))
			m.Handle("POST /portal/{mode}/terminals/{id}/deregister", p.page(roleApprover, p.deregisterTerminal))
		},
	})
}

type terminalsData struct {
	listData[terminals.Terminal]
	Statuses []string
	Models   []string
}

func (p *Portal) terminalsList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderTerminals(w, r, c, http.StatusOK, &view{Form: r.URL.Query()})
}

func (p *Portal) renderTerminals(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	lp := terminals.ListParams{Page: page, Status: q.Get("status"), OutletID: q.Get("outlet_id")}
	list, more, err := p.terminals().List(r.Context(), c.principal(), lp)
	if err != nil {
		return err
	}
	d := terminalsData{listData: newList(list, more, page, func(t terminals.Terminal) string { return t.ID }),
		Statuses: []string{string(terminals.Inactive), string(terminals.Active), string(terminals.Deregistered)}}
	for _, m := range terminals.Models {
		d.Models = append(d.Models, string(m))
	}
	d.Filters = map[string]string{}
	for _, k := range []string{"status", "outlet_id"} {
		if x := q.Get(k); x != "" {
			d.Filters[k] = x
		}
	}
	v.Title, v.Section, v.Data = "Terminals", "terminals", d
	p.render(w, r, c, status, "terminals", v)
	return nil
}

// registerTerminal registers a terminal (inactive) from the form's serial
// number, model, outlet and label; a bad field is shown next to it.
func (p *Portal) registerTerminal(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	opt := func(k string) *string {
		v := strings.TrimSpace(r.PostFormValue(k))
		if v == "" {
			return nil
		}
		return &v
	}
	in := terminals.RegisterParams{SerialNumber: opt("serial_number"), Model: opt("model"), OutletID: opt("outlet_id"), Label: opt("label")}
	t, err := p.terminals().Register(r.Context(), store.NoClaim, c.principal(), in)
	p.audit(r.Context(), c, "terminal.register", t.ID, err, r.PostFormValue("serial_number"))
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error {
			v.Form = r.PostForm
			return p.renderTerminals(w, r, c, statusOf(err), v)
		})
	}
	return redirect(w, r, c.path("terminals", t.ID), "terminal_registered")
}

type terminalData struct {
	T terminals.Terminal
}

func (p *Portal) terminalPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderTerminal(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderTerminal(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	t, err := p.terminals().Get(r.Context(), c.principal(), r.PathValue("id"))
	if err != nil {
		return err
	}
	v.Title, v.Section, v.Data = "Terminal "+t.ID, "terminals", terminalData{T: t}
	p.render(w, r, c, status, "terminal", v)
	return nil
}

func (p *Portal) activateTerminal(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	var in terminals.ActivateParams
	if ksn := strings.TrimSpace(r.PostFormValue("ksn")); ksn != "" {
		in.KSN = &ksn
	}
	_, err := p.terminals().Activate(r.Context(), store.NoClaim, c.principal(), id, in)
	p.audit(r.Context(), c, "terminal.activate", id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderTerminal(w, r, c, statusOf(err), v) })
	}
	return redirect(w, r, c.path("terminals", id), "terminal_activated")
}

func (p *Portal) deregisterTerminal(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.terminals().Deregister(r.Context(), c.principal(), id)
	p.audit(r.Context(), c, "terminal.deregister", id, err, "")
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderTerminal(w, r, c, statusOf(err), v) })
	}
	return redirect(w, r, c.path("terminals", id), "terminal_deregistered")
}
