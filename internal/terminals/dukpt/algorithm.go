package dukpt

// Algorithm selects the DUKPT variant a terminal model uses.
type Algorithm uint8

// The DUKPT variants payd supports.
const (
	// TDES is double-length TDES DUKPT per ANSI X9.24-1:2009: 10-byte KSN, 21-bit counter.
	TDES Algorithm = iota + 1
	// AES128 is AES-128 DUKPT per ANSI X9.24-3-2017: 12-byte KSN, 32-bit counter.
	AES128
)

// String returns the algorithm's lowercase name, "tdes" or "aes128".
func (a Algorithm) String() string {
	switch a {
	case TDES:
		return "tdes"
	case AES128:
		return "aes128"
	default:
		return "unknown"
	}
}

// BlockSize returns the cipher block size in bytes: 8 for TDES, 16 for AES-128.
func (a Algorithm) BlockSize() int {
	switch a {
	case TDES:
		return 8
	case AES128:
		return 16
	default:
		return 0
	}
}

// KSNLength returns the length of a key serial number in bytes: 10 for TDES, 12 for AES-128.
func (a Algorithm) KSNLength() int {
	switch a {
	case TDES:
		return tdesKSNLength
	case AES128:
		return aesKSNLength
	default:
		return 0
	}
}

// counterBits is the width of the transaction counter in the KSN.
func (a Algorithm) counterBits() int {
	if a == TDES {
		return tdesCounterBits
	}
	return aesCounterBits
}

// maxOneBits is the most one-bits an originating device lets its counter have;
// counters with more are skipped, so the host rejects them.
func (a Algorithm) maxOneBits() int {
	if a == TDES {
		return tdesMaxOneBits
	}
	return aesMaxOneBits
}

func (a Algorithm) valid() bool { return a == TDES || a == AES128 }

// KeyUsage names the purpose of a working key derived for one transaction.
//
// For TDES the usages are the X9.24-1 variants (the data keys additionally pass
// through the one-way function the standard's examples use); for AES-128 they
// are the X9.24-3 key usage indicators shown beside each constant.
type KeyUsage uint8

// The working key usages. "Request" keys protect data the device sends to the
// host; "response" keys protect the host's reply.
const (
	// PINEncryption protects PIN blocks (AES usage 1000).
	PINEncryption KeyUsage = iota + 1
	// MACRequest authenticates device requests (AES usage 2000, MAC generation).
	MACRequest
	// MACResponse authenticates host responses (AES usage 2001, MAC verification).
	MACResponse
	// DataRequest encrypts card data the device sends; P2PE payloads use it (AES usage 3000).
	DataRequest
	// DataResponse encrypts data the host sends back (AES usage 3001).
	DataResponse
)

// String returns the usage's name.
func (u KeyUsage) String() string {
	switch u {
	case PINEncryption:
		return "pin_encryption"
	case MACRequest:
		return "mac_request"
	case MACResponse:
		return "mac_response"
	case DataRequest:
		return "data_request"
	case DataResponse:
		return "data_response"
	default:
		return "unknown"
	}
}
