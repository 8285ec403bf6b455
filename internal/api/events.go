package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/webhooks"
)

func registerEvents(s *Server, h webhookHandlers) {
	s.Handle("GET /v1/events", h.listEvents)
	s.Handle("GET /v1/events/stream", h.streamEvents)
	s.Handle("GET /v1/events/{id}", h.getEvent)
	s.HandleClaimed("POST /v1/events/{id}/redeliver", h.redeliver)
	s.Handle("GET /v1/events/{id}/deliveries", h.listDeliveries)
	s.HandleClaimed("POST /v1/sandbox/webhooks/trigger", h.trigger, TestModeOnly())
}

func envelopes(evs []events.Event) []events.Envelope {
	out := make([]events.Envelope, len(evs))
	for i, ev := range evs {
		out[i] = ev.Envelope()
	}
	return out
}

func (h webhookHandlers) listEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, err := pagination.Parse(q)
	if err != nil {
		return err
	}
	f := webhooks.EventFilter{Type: q.Get("type"), RelatedObjectID: q.Get("related_object_id")}
	evs, more, err := h.svc.ListEvents(r.Context(), owner(r), f, page)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(envelopes(evs), more))
	return nil
}

func (h webhookHandlers) getEvent(w http.ResponseWriter, r *http.Request) error {
	ev, err := h.svc.GetEvent(r.Context(), owner(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, ev.Envelope())
	return nil
}

func (h webhookHandlers) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	page, err := pagination.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	ds, more, err := h.svc.ListDeliveries(r.Context(), owner(r), r.PathValue("id"), page)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, pagination.NewList(ds, more))
	return nil
}

func (h webhookHandlers) redeliver(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var req struct {
		EndpointID *string `json:"endpoint_id"`
	}
	if err := DecodeOptionalJSON(r, &req); err != nil {
		return err
	}
	target := ""
	if req.EndpointID != nil {
		target = *req.EndpointID
		if target == "" {
			return errs.Invalid("endpoint_id", "parameter_invalid", "endpoint_id must be a webhook endpoint id (we_...), or be left out for every subscribed endpoint")
		}
	}
	ds, err := h.svc.Redeliver(r.Context(), cl, owner(r), r.PathValue("id"), target)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusAccepted, pagination.NewList(ds, false))
	return nil
}

func (h webhookHandlers) trigger(w http.ResponseWriter, r *http.Request, cl store.Claim) error {
	var req struct {
		EventType       *string `json:"event_type"`
		RelatedObjectID *string `json:"related_object_id"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.EventType == nil {
		return errs.Missing("event_type")
	}
	ev, err := h.svc.Trigger(r.Context(), cl, owner(r), webhooks.TriggerParams{EventType: *req.EventType, RelatedObjectID: req.RelatedObjectID})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, ev.Envelope())
	return nil
}

// streamEvents serves the merchant's events as server-sent events (what
// `payd listen` reads): "id: evt_...", "event: <type>", "data: <envelope>".
// Query: types (comma-separated); resume with the Last-Event-ID header (or
// last_event_id). Errors found before the stream starts answer as usual.
func (h webhookHandlers) streamEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var types []string
	for _, t := range strings.Split(q.Get("types"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = q.Get("last_event_id")
	}
	sink := &sseSink{w: w, rc: http.NewResponseController(w)}
	err := h.svc.Stream(r.Context(), owner(r), webhooks.StreamParams{Types: types, LastEventID: last,
		Principal: auth.Must(r.Context()).ID}, sink)
	if !sink.started {
		return err
	}
	if err != nil && !errors.Is(err, webhooks.ErrStreamClosed) && r.Context().Err() == nil && !sink.writeFailed {
		LoggerFrom(r.Context()).Warn("event stream ended", "err", err)
	}
	return nil
}

type sseSink struct {
	w           http.ResponseWriter
	rc          *http.ResponseController
	started     bool
	writeFailed bool
}

func (s *sseSink) start() {
	if s.started {
		return
	}
	s.started = true
	hd := s.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

func (s *sseSink) write(b []byte) error {
	s.start()
	if _, err := s.w.Write(b); err != nil {
		s.writeFailed = true
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.writeFailed = true
		return err
	}
	return nil
}

func (s *sseSink) Ping() error { return s.write([]byte(": ping\n\n")) }

func (s *sseSink) Event(ev events.Event) error {
	data, err := json.Marshal(ev.Envelope())
	if err != nil {
		return err
	}
	return s.write([]byte(fmt.Sprintf("id: %s\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, data)))
}
