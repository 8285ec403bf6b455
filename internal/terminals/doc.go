// Package terminals owns card-present terminals: the registry (register,
// activate, deregister, with one transition table and compare-and-set SQL)
// and the card-present payment pipeline, which turns a device's encrypted
// chip read into a payment intent:
//
//	KSN → base derivation key of the model → DUKPT data key → decrypt →
//	BER-TLV → card checks → replay check (KSN counter) → card gateway →
//	IntentRecorder (payment intent, ledger, payment_intent.succeeded)
//
// The cryptography lives in the pure packages below it (dukpt, tlv, card).
// Card data lives only in memory for one request: no PAN, track data,
// cryptogram or key reaches a log line, a database row, an error or a
// response; only brand and last4 do.
package terminals
