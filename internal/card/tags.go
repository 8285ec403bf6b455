package card

import "github.com/payd/payd/internal/terminals/tlv"

// EMV tags a card-present payment reads or writes (EMV Book 3 Annex A).
const (
	TagTrack2Equivalent      tlv.Tag = 0x57   // Track 2 Equivalent Data
	TagPAN                   tlv.Tag = 0x5A   // Application Primary Account Number
	TagExpiryDate            tlv.Tag = 0x5F24 // Application Expiration Date, YYMMDD
	TagApplicationCryptogram tlv.Tag = 0x9F26 // Application Cryptogram (ARQC, TC or AAC)
	TagCryptogramInfo        tlv.Tag = 0x9F27 // Cryptogram Information Data
	TagATC                   tlv.Tag = 0x9F36 // Application Transaction Counter
	TagAmountAuthorised      tlv.Tag = 0x9F02 // Amount, Authorised, n12 in minor units
	TagCurrencyCode          tlv.Tag = 0x5F2A // Transaction Currency Code, ISO 4217 numeric
	TagTransactionDate       tlv.Tag = 0x9A   // Transaction Date, YYMMDD
	TagTransactionType       tlv.Tag = 0x9C   // Transaction Type, 00 for a purchase
	TagTVR                   tlv.Tag = 0x95   // Terminal Verification Results
	TagAIP                   tlv.Tag = 0x82   // Application Interchange Profile
	TagPOSEntryMode          tlv.Tag = 0x9F39 // Point-of-Service Entry Mode
)

const (
	posEntryModeContactless byte = 0x07 // 9F39 value of a contactless chip read
	cryptogramLength             = 8
	amountAuthorisedLength       = 6 // n12
	currencyCodeLength           = 2 // n4: a leading 0 and the 3-digit code
	minPANLength                 = 12
	maxPANLength                 = 19
)
