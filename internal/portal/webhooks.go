package portal

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/webhooks"
)

// WithWebhooks adds the webhook endpoint pages (deliveries, attempt logs,
// redeliver) and each event's page, over the webhooks service; the events
// list and the dashboard's recent activity then read through it too.
func (p *Portal) WithWebhooks(get func() *webhooks.Service) {
	p.webhooks = get
	p.addCapability(capability{
		nav: navItem{Section: "webhook_endpoints", Label: "Webhooks", Path: "webhook_endpoints"},
		routes: func(m *http.ServeMux) {
			m.Handle("GET /portal/{mode}/webhook_endpoints", p.page(roleViewer, p.endpointsList))
			m.Handle("POST /portal/{mode}/webhook_endpoints", p.page(roleAdmin, p.createEndpoint))
			m.Handle("GET /portal/{mode}/webhook_endpoints/{id}", p.page(roleViewer, p.endpointPage))
			m.Handle("POST /portal/{mode}/webhook_endpoints/{id}/redeliver", p.page(roleApprover, p.redeliverToEndpoint))
			m.Handle("POST /portal/{mode}/webhook_endpoints/{id}/disable", p.page(roleAdmin, p.setEndpointDisabled(true)))
			m.Handle("POST /portal/{mode}/webhook_endpoints/{id}/enable", p.page(roleAdmin, p.setEndpointDisabled(false)))
			m.Handle("POST /portal/{mode}/webhook_endpoints/{id}/delete", p.page(roleAdmin, p.deleteEndpoint))
			m.Handle("POST /portal/{mode}/webhook_endpoints/{id}/rotate_secret", p.page(roleAdmin, p.rotateEndpointSecret))
			m.Handle("POST /portal/{mode}/webhook_endpoints/{id}/max_rate", p.page(roleAdmin, p.setEndpointMaxRate))
			m.Handle("POST /portal/{mode}/webhook_endpoints/{id}/recover", p.page(roleApprover, p.recoverEndpoint))
			m.Handle("GET /portal/{mode}/events/{id}", p.page(roleViewer, p.eventPage))
			m.Handle("POST /portal/{mode}/events/{id}/redeliver", p.page(roleApprover, p.redeliverEvent))
		},
	})
}

func owner(c *reqCtx) webhooks.Owner {
	return webhooks.Owner{MerchantID: c.sess.MerchantID, Livemode: c.live}
}

type endpointsData struct {
	listData[webhooks.Endpoint]
	EventTypes []string
	Checked    map[string]bool
}

func (p *Portal) endpointsList(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderEndpoints(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderEndpoints(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	list, more, err := p.webhooks().ListEndpoints(r.Context(), owner(c), page)
	if err != nil {
		return err
	}
	d := endpointsData{listData: newList(list, more, page, func(e webhooks.Endpoint) string { return e.ID }),
		EventTypes: webhooks.EventTypes(), Checked: map[string]bool{}}
	for _, t := range v.Form["enabled_events"] {
		d.Checked[t] = true
	}
	if len(d.Checked) == 0 {
		d.Checked["*"] = true
	}
	v.Title, v.Section, v.Data = "Webhook endpoints", "webhook_endpoints", d
	p.render(w, r, c, status, "webhook_endpoints", v)
	return nil
}

// createEndpoint registers an endpoint and shows its signing secret once.
func (p *Portal) createEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	u, desc := strings.TrimSpace(r.PostFormValue("url")), r.PostFormValue("description")
	params := webhooks.EndpointParams{URL: &u, Description: &desc, EnabledEvents: r.PostForm["enabled_events"]}
	if len(params.EnabledEvents) == 0 {
		params.EnabledEvents = []string{"*"}
	}
	ep, _, err := p.webhooks().CreateEndpoint(r.Context(), owner(c), params, nil)
	p.audit(r.Context(), c, "webhook_endpoint.create", ep.ID, err, u)
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error {
			v.Form = r.PostForm
			return p.renderEndpoints(w, r, c, statusOf(err), v)
		})
	}
	return p.renderEndpoint(w, r, c, http.StatusCreated, &view{}, ep.ID, ep.Secret)
}

type endpointData struct {
	E          webhooks.Endpoint
	Secret     string // only in the answer to its creation or a rotation
	Rotated    bool   // Secret is a rotation's
	Deliveries listData[webhooks.Delivery]
	Waiting    int // pending deliveries (counted up to webhooks.MaxPendingPerEndpoint) when payd disabled it
}

func (p *Portal) endpointPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderEndpoint(w, r, c, http.StatusOK, &view{}, r.PathValue("id"), "")
}

// renderEndpoint shows an endpoint and its deliveries, newest first, each
// with its attempts (time, HTTP status, latency, error) and a redeliver
// button.
func (p *Portal) renderEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view, id, secret string) error {
	if err := p.renderEndpointInto(r, c, v, id, secret); err != nil {
		return err
	}
	p.render(w, r, c, status, "webhook_endpoint", v)
	return nil
}

// renderEndpointInto fills v with the endpoint page's data.
func (p *Portal) renderEndpointInto(r *http.Request, c *reqCtx, v *view, id, secret string) error {
	ctx := r.Context()
	ep, err := p.webhooks().GetEndpoint(ctx, owner(c), id)
	if err != nil {
		return err
	}
	page, err := pageOf(r)
	if err != nil {
		return err
	}
	if r.Method == http.MethodPost {
		page = pagination.Page{Limit: 25}
	}
	ds, more, err := p.webhooks().ListEndpointDeliveries(ctx, owner(c), id, page)
	if err != nil {
		return err
	}
	waiting := 0
	if ep.Paused() {
		if waiting, err = p.webhooks().WaitingDeliveries(ctx, owner(c), id); err != nil {
			return err
		}
	}
	v.Title, v.Section = "Webhook endpoint "+ep.ID, "webhook_endpoints"
	v.Data = endpointData{E: ep, Secret: secret, Waiting: waiting, Deliveries: newList(ds, more, page, func(d webhooks.Delivery) string { return d.ID })}
	return nil
}

// renderEndpointRotated is the endpoint page showing a rotation's new
// secret once.
func (p *Portal) renderEndpointRotated(w http.ResponseWriter, r *http.Request, c *reqCtx, id, secret string) error {
	v := &view{}
	if err := p.renderEndpointInto(r, c, v, id, secret); err != nil {
		return err
	}
	d := v.Data.(endpointData)
	d.Rotated = true
	v.Data = d
	p.render(w, r, c, http.StatusOK, "webhook_endpoint", v)
	return nil
}

// redeliverToEndpoint sends one event again to this endpoint (a new
// delivery with its own attempts).
func (p *Portal) redeliverToEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id, eventID := r.PathValue("id"), r.PostFormValue("event_id")
	ds, err := p.webhooks().Redeliver(r.Context(), store.NoClaim, owner(c), eventID, id)
	p.audit(r.Context(), c, "webhook.redeliver", eventID, err, "to "+id+deliveryIDs(ds))
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderEndpoint(w, r, c, statusOf(err), v, id, "") })
	}
	return redirect(w, r, c.path("webhook_endpoints", id), "redelivered")
}

func deliveryIDs(ds []webhooks.Delivery) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(" " + d.ID)
	}
	return b.String()
}

func (p *Portal) setEndpointDisabled(disabled bool) pageHandler {
	return func(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
		id := r.PathValue("id")
		_, err := p.webhooks().UpdateEndpoint(r.Context(), store.NoClaim, owner(c), id, webhooks.EndpointParams{Disabled: &disabled})
		action := "webhook_endpoint.enable"
		if disabled {
			action = "webhook_endpoint.disable"
		}
		p.audit(r.Context(), c, action, id, err, "")
		if err != nil {
			return p.actionError(w, r, c, err, func(v *view) error { return p.renderEndpoint(w, r, c, statusOf(err), v, id, "") })
		}
		notice := ""
		if !disabled {
			notice = "endpoint_enabled"
		}
		return redirect(w, r, c.path("webhook_endpoints", id), notice)
	}
}

// rotateEndpointSecret gives the endpoint a new signing secret, shown once;
// the old one signs beside it for the grace chosen (grace_seconds).
func (p *Portal) rotateEndpointSecret(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	grace := webhooks.DefaultSecretGrace
	if v := r.PostFormValue("grace_seconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			n = -1 // refused by RotateSecret, naming the field
		}
		grace = time.Duration(n) * time.Second
	}
	ep, _, err := p.webhooks().RotateSecret(r.Context(), owner(c), id, grace, nil, "")
	p.audit(r.Context(), c, webhooks.AuditRotateSecret, id, err, "old secret signs for "+grace.String())
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderEndpoint(w, r, c, statusOf(err), v, id, "") })
	}
	return p.renderEndpointRotated(w, r, c, id, ep.Secret)
}

// setEndpointMaxRate sets the endpoint's max_rate (empty: no limit).
func (p *Portal) setEndpointMaxRate(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	rate := &webhooks.MaxRate{}
	if v := strings.TrimSpace(r.PostFormValue("max_rate")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			n = -1 // refused by UpdateEndpoint, naming the field
		}
		rate.Value = &n
	}
	_, err := p.webhooks().UpdateEndpoint(r.Context(), store.NoClaim, owner(c), id, webhooks.EndpointParams{MaxRate: rate})
	p.audit(r.Context(), c, "webhook_endpoint.max_rate", id, err, r.PostFormValue("max_rate"))
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderEndpoint(w, r, c, statusOf(err), v, id, "") })
	}
	return redirect(w, r, c.path("webhook_endpoints", id), "max_rate_set")
}

// recoverEndpoint sends again the endpoint's deliveries that failed in the
// last since_hours hours.
func (p *Portal) recoverEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	hours, err := strconv.Atoi(r.PostFormValue("since_hours"))
	if err != nil || hours < 1 {
		hours = 24
	}
	rec, err := p.webhooks().Recover(r.Context(), store.NoClaim, owner(c), id, time.Now().Add(-time.Duration(hours)*time.Hour))
	p.audit(r.Context(), c, "webhook_endpoint.recover", id, err, fmt.Sprintf("last %d h: %d queued", hours, rec.Queued))
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderEndpoint(w, r, c, statusOf(err), v, id, "") })
	}
	notice := "recovered"
	if rec.HasMore {
		notice = "recovered_more"
	}
	return redirect(w, r, c.path("webhook_endpoints", id), notice)
}

func (p *Portal) deleteEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	_, err := p.webhooks().DeleteEndpoint(r.Context(), owner(c), id)
	p.audit(r.Context(), c, "webhook_endpoint.delete", id, err, "")
	if err != nil {
		return err
	}
	return redirect(w, r, c.path("webhook_endpoints"), "endpoint_deleted")
}

type eventData struct {
	E          events.Event
	JSON       string
	Deliveries []webhooks.Delivery
	More       bool
}

// eventPage shows one event: its payload and every delivery of it, with a
// button to send it again to every subscribed endpoint.
func (p *Portal) eventPage(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	return p.renderEvent(w, r, c, http.StatusOK, &view{})
}

func (p *Portal) renderEvent(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, v *view) error {
	ctx := r.Context()
	ev, err := p.webhooks().GetEvent(ctx, owner(c), r.PathValue("id"))
	if err != nil {
		return err
	}
	ds, more, err := p.webhooks().ListDeliveries(ctx, owner(c), ev.ID, pagination.Page{Limit: 50})
	if err != nil {
		return err
	}
	v.Title, v.Section = "Event "+ev.ID, "events"
	v.Data = eventData{E: ev, JSON: prettyJSON(ev.Envelope()), Deliveries: ds, More: more}
	p.render(w, r, c, status, "event", v)
	return nil
}

func (p *Portal) redeliverEvent(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	id := r.PathValue("id")
	ds, err := p.webhooks().Redeliver(r.Context(), store.NoClaim, owner(c), id, "")
	p.audit(r.Context(), c, "webhook.redeliver", id, err, "to every subscribed endpoint:"+deliveryIDs(ds))
	if err != nil {
		return p.actionError(w, r, c, err, func(v *view) error { return p.renderEvent(w, r, c, statusOf(err), v) })
	}
	return redirect(w, r, c.path("events", id), "redelivered")
}
