package card

import "errors"

// Errors returned by FromTLV and EncodeChipRead; callers test with errors.Is.
// Their messages name tags and lengths, never card data.
var (
	// ErrMalformedTLV reports a payload that is not valid BER-TLV.
	ErrMalformedTLV = errors.New("card: malformed TLV")
	// ErrMissingPAN reports a read with neither tag 57 nor tag 5A.
	ErrMissingPAN = errors.New("card: no PAN (tag 57 or 5A)")
	// ErrMissingExpiry reports a 5A PAN without a 5F24 expiry date.
	ErrMissingExpiry = errors.New("card: no expiry date (tag 5F24)")
	// ErrMissingCryptogram reports a read without the application cryptogram, tag 9F26.
	ErrMissingCryptogram = errors.New("card: no application cryptogram (tag 9F26)")
	// ErrInvalidPAN reports a PAN that is not 12 to 19 digits or fails the Luhn check.
	ErrInvalidPAN = errors.New("card: invalid PAN")
	// ErrInvalidTrack2 reports a malformed track 2 equivalent in tag 57.
	ErrInvalidTrack2 = errors.New("card: invalid track 2 equivalent")
	// ErrInvalidExpiry reports an expiry date that is not a valid year and month.
	ErrInvalidExpiry = errors.New("card: invalid expiry date")
	// ErrInvalidCryptogram reports an application cryptogram that is not 8 bytes.
	ErrInvalidCryptogram = errors.New("card: invalid application cryptogram")
	// ErrInconsistentRead reports a PAN or expiry in tag 57 that differs from tags 5A or 5F24.
	ErrInconsistentRead = errors.New("card: track 2 and chip data disagree")
	// ErrInvalidChipData reports an EncodeChipRead argument that cannot be encoded.
	ErrInvalidChipData = errors.New("card: invalid chip data")
)
