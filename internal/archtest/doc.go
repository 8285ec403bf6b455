// Package archtest holds payd's structure check: a test that reads every Go
// file of the module and fails on an arrow that runs the wrong way (an
// import from a lower floor to a higher one), a branch on the database
// engine outside internal/store, an init function in internal/app, and an
// import of internal/idempotency outside the HTTP layer and the wiring. It
// has no code of its own.
package archtest
