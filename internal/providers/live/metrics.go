package live

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd/payd/internal/providers"
)

// metrics are the per-provider series of docs/providers.md.
type metrics struct {
	duration   *prometheus.HistogramVec
	errors     *prometheus.CounterVec
	breakers   *prometheus.GaugeVec
	inFlight   *prometheus.GaugeVec
	callbacks  *prometheus.CounterVec
	reconciled *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "payd_provider_call_duration_seconds",
			Help:    "Duration of calls to live providers, retries included, by provider, operation and outcome.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"provider", "operation", "outcome"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_provider_call_errors_total",
			Help: "Failed calls to live providers by provider and kind (server_error, timeout, connection, auth, breaker_open, saturated)."},
			[]string{"provider", "kind"}),
		breakers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "payd_provider_breakers_open",
			Help: "Merchant connections whose circuit breaker for the provider is open or half-open."}, []string{"provider"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "payd_provider_calls_in_flight",
			Help: "Calls to the provider in flight from this process."}, []string{"provider"}),
		callbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_provider_callbacks_total",
			Help: "Provider callbacks received, by provider and result (applied, duplicate, rejected, error)."}, []string{"provider", "result"}),
		reconciled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_provider_reconciled_total",
			Help: "Objects reconciliation asked a provider about, by kind and the status they were left in."}, []string{"kind", "outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.duration, m.errors, m.breakers, m.inFlight, m.callbacks, m.reconciled)
	}
	return m
}

// CallbackReceived counts one callback by its result.
func (c *Connections) CallbackReceived(provider, result string) {
	if !providers.Known(provider, providers.All) {
		return // labels come from the fixed provider list only
	}
	c.metrics.callbacks.WithLabelValues(provider, result).Inc()
}

// Reconciled counts one object reconciliation asked about.
func (c *Connections) Reconciled(kind, outcome string) {
	c.metrics.reconciled.WithLabelValues(kind, outcome).Inc()
}
