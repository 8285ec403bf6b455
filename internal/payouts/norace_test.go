//go:build !race

package payouts

// RaceDetector reports whether the tests run under -race (see race_test.go).
const RaceDetector = false
