package webhooks

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	dispatched prometheus.Counter
	created    prometheus.Counter
	attempts   *prometheus.CounterVec
	finished   *prometheus.CounterVec
	latency    prometheus.Histogram
	disabled   prometheus.Counter
	refused    *prometheus.CounterVec
	recovered  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		dispatched: prometheus.NewCounter(prometheus.CounterOpts{Name: "payd_webhook_events_dispatched_total",
			Help: "Events taken from the outbox and turned into deliveries."}),
		created: prometheus.NewCounter(prometheus.CounterOpts{Name: "payd_webhook_deliveries_created_total",
			Help: "Deliveries created by the outbox dispatcher."}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_webhook_attempts_total",
			Help: "Delivery attempts by result: succeeded, non_2xx, error, sandbox_fail."}, []string{"result"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_webhook_deliveries_finished_total",
			Help: "Deliveries that reached succeeded or failed."}, []string{"status"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "payd_webhook_attempt_duration_seconds",
			Help: "Time from sending a delivery to the receiver's answer.", Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12)}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{Name: "payd_webhook_endpoints_disabled_total",
			Help: "Endpoints payd disabled after repeated failed attempts."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_webhook_redeliveries_refused_total",
			Help: "Redeliver requests refused by a cap, by code."}, []string{"code"}),
		recovered: prometheus.NewCounter(prometheus.CounterOpts{Name: "payd_webhook_deliveries_recovered_total",
			Help: "Failed deliveries sent again by recover."}),
	}
	if reg != nil {
		reg.MustRegister(m.dispatched, m.created, m.attempts, m.finished, m.latency, m.disabled, m.refused, m.recovered)
	}
	return m
}
