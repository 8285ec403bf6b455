//go:build race

package billing

// raceDetector reports whether the tests run under -race, which slows the
// database-heavy runs enough to shrink them (see TestThreeRunners).
const raceDetector = true
