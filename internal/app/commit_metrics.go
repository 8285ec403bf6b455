package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd/payd/internal/store"
)

// commitMetrics exports the database's commit counters,
// payd_db_commits_total and payd_db_committed_units_total, from one read of
// store.DB.CommitCounts per scrape, so that a scrape never shows a commit
// without its units (two counter functions, read at different moments and
// concurrently by the registry, could show one more commit than units).
type commitMetrics struct {
	db             *store.DB
	commits, units *prometheus.Desc
}

func newCommitMetrics(db *store.DB) *commitMetrics {
	return &commitMetrics{db: db,
		commits: prometheus.NewDesc("payd_db_commits_total",
			"Database transactions committed by this process (on SQLite one commit carries a group of units of work).", nil, nil),
		units: prometheus.NewDesc("payd_db_committed_units_total",
			"Units of work committed by this process (a request's writes, a background job's transaction); divided by payd_db_commits_total, the units per commit.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (m *commitMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.commits
	ch <- m.units
}

// Collect implements prometheus.Collector.
func (m *commitMetrics) Collect(ch chan<- prometheus.Metric) {
	commits, units := m.db.CommitCounts()
	ch <- prometheus.MustNewConstMetric(m.commits, prometheus.CounterValue, float64(commits))
	ch <- prometheus.MustNewConstMetric(m.units, prometheus.CounterValue, float64(units))
}
