//go:build !race

package billing

// raceDetector reports whether the tests run under -race (see race_test.go).
const raceDetector = false
