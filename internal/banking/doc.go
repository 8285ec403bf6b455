// Package banking is payd's bank-transfer capability: participant banks send
// customer credit transfers (pacs.008.001.08, XML or the JSON envelope) and
// get a payment status report (pacs.002.001.10) back synchronously; payd
// settles each accepted transaction between the two banks' settlement
// accounts in the ledger, holds screening hits for review, settles deferred
// participants in the background, and takes returns (pacs.004.001.09) and
// cancellations (camt.056.001.08).
//
// The message layer (decoding, the pure profile rules, report encoding) is
// the iso20022 package below; this package adds what needs state: duplicate
// detection on MsgId and UETR, participants, balances, screening, the state
// machine and the ledger. See docs/banking.md.
package banking
