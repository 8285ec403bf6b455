// Package card turns a decrypted card-present chip read (BER-TLV) into what a
// payment needs: the PAN and expiry, the application cryptogram, the brand and
// the last four digits. It also builds such reads for the terminal simulator.
//
// A Read never reveals the PAN, track data or cryptogram when printed, logged
// or marshalled: only the brand and last four digits appear.
package card
