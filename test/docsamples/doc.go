// Package docsamples holds the tests that run the API reference's code
// samples (package apidocs) against a real payd: every operation's curl, Go,
// TypeScript and Python sample is executed, on objects made for it through
// the API. See docs/api.md, "Samples".
package docsamples
