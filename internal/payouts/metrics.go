package payouts

import "github.com/prometheus/client_golang/prometheus"

// metrics are the payouts' Prometheus series.
type metrics struct {
	screening prometheus.Histogram
	outcomes  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		screening: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "payd_payout_screening_seconds",
			Help:    "Time to screen one recipient name against the sanctions list.",
			Buckets: []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1},
		}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_payout_rail_answers_total",
			Help: "Answers of the payout rails, by outcome (succeeded, failed, held, unknown).",
		}, []string{"outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.screening, m.outcomes)
	}
	return m
}
