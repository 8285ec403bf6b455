// Package docsamples holds the test that runs the API reference's code
// samples (package apidocs) against a real payd: every curl and Python
// sample is executed, every Go sample compiled. See docs/api.md, "Samples".
package docsamples
