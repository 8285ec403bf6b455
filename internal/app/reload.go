package app

import "context"

// Reload re-reads what can change without a restart (SIGHUP): the sanctions
// list today.
func (m *Main) Reload(ctx context.Context) {
	for _, f := range m.reloaders {
		f(ctx)
	}
}
