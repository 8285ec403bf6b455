package webhook

import "sync"

// Dedup remembers the most recent event ids a receiver has processed, so a
// repeated delivery of an event can be acknowledged without acting twice. It
// is in memory and bounded: a receiver running several processes, or one that
// must survive restarts, should record event ids in its own database instead
// (a unique key on the event id, written in the same transaction as the
// effect).
type Dedup struct {
	mu    sync.Mutex
	seen  map[string]struct{}
	order []string
	next  int
}

// NewDedup remembers up to n event ids (oldest forgotten first).
func NewDedup(n int) *Dedup {
	if n < 1 {
		n = 1
	}
	return &Dedup{seen: make(map[string]struct{}, n), order: make([]string, 0, n)}
}

// FirstTime records eventID and reports whether it had not been seen before.
func (d *Dedup) FirstTime(eventID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[eventID]; ok {
		return false
	}
	if len(d.order) < cap(d.order) {
		d.order = append(d.order, eventID)
	} else {
		delete(d.seen, d.order[d.next])
		d.order[d.next] = eventID
		d.next = (d.next + 1) % len(d.order)
	}
	d.seen[eventID] = struct{}{}
	return true
}
