//go:build race

package payouts

// RaceDetector reports whether the tests run under -race. The race detector
// slows SQLite (modernc's, itself Go) about twentyfold, so the 10,000-row
// tests run 1,000 rows under it; `go test ./internal/payouts` runs them in
// full.
const RaceDetector = true
