// Package tlv parses and encodes BER-TLV data objects as EMV chip cards and
// payment terminals use them: one- to four-byte tags, short and long length
// forms, constructed objects parsed recursively, and 0x00/0xFF padding skipped
// before, between and after objects (a decrypted P2PE payload ends in the zero
// padding of its last cipher block).
//
// Parse enforces hard limits (MaxDepth, MaxSize, MaxObjects) because its input
// comes from outside; every error is a *SyntaxError naming the byte offset.
package tlv
