//go:build race

package webhooks_test

// raceDetector reports whether the tests run under -race.
const raceDetector = true
