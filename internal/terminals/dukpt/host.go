package dukpt

import "fmt"

// DeriveInitialKey derives the initial key a device is loaded with: the IPEK for
// TDES, the initial key for AES-128. The KSN's counter is ignored.
func DeriveInitialKey(bdk Key, ksn KSN) (Key, error) {
	if err := checkKey(bdk, "BDK"); err != nil {
		return Key{}, err
	}
	switch ksn.alg {
	case TDES:
		return keyOf(tdesInitialKey(bdk.raw(), ksn)), nil
	case AES128:
		return keyOf(aesInitialKey(bdk.raw(), aesInitialKeyID(ksn))), nil
	default:
		return Key{}, fmt.Errorf("%w: zero KSN", ErrInvalidKSN)
	}
}

// DeriveTransactionKey derives the key of the KSN's transaction from the BDK:
// for TDES the current key register before any variant, for AES-128 the
// intermediate derivation key.
func DeriveTransactionKey(bdk Key, ksn KSN) (Key, error) {
	if err := ksn.checkTransaction(); err != nil {
		return Key{}, err
	}
	ik, err := DeriveInitialKey(bdk, ksn)
	if err != nil {
		return Key{}, err
	}
	return transactionKeyFromInitial(ik.raw(), ksn), nil
}

func transactionKeyFromInitial(ik [KeySize]byte, ksn KSN) Key {
	if ksn.alg == TDES {
		return keyOf(tdesTransactionKey(ik, ksn))
	}
	return keyOf(aesTransactionKey(ik, aesInitialKeyID(ksn), ksn.Counter()))
}

// DeriveWorkingKey derives the working key of the given usage for the KSN's transaction from the BDK.
func DeriveWorkingKey(bdk Key, ksn KSN, usage KeyUsage) (Key, error) {
	tk, err := DeriveTransactionKey(bdk, ksn)
	if err != nil {
		return Key{}, err
	}
	return WorkingKey(tk, ksn, usage)
}

// WorkingKey derives the working key of the given usage from a transaction key
// and its KSN; host and device share this last step.
func WorkingKey(transactionKey Key, ksn KSN, usage KeyUsage) (Key, error) {
	if err := checkKey(transactionKey, "transaction key"); err != nil {
		return Key{}, err
	}
	if err := ksn.checkTransaction(); err != nil {
		return Key{}, err
	}
	switch ksn.alg {
	case TDES:
		k, ok := tdesWorkingKey(transactionKey.raw(), usage)
		if !ok {
			return Key{}, fmt.Errorf("%w: %d", ErrUnsupportedKeyUsage, usage)
		}
		return keyOf(k), nil
	default:
		indicator, ok := aesKeyUsage[usage]
		if !ok {
			return Key{}, fmt.Errorf("%w: %d", ErrUnsupportedKeyUsage, usage)
		}
		return keyOf(aesWorkingKey(transactionKey.raw(), aesInitialKeyID(ksn), ksn.Counter(), indicator, aesAlgorithmAES128)), nil
	}
}

// EncryptData encrypts a payload the way a device does: under the KSN's
// DataRequest key, CBC with a zero IV, the plaintext zero-padded to the block size.
func EncryptData(bdk Key, ksn KSN, plaintext []byte) ([]byte, error) {
	if len(plaintext) == 0 {
		return nil, ErrEmptyPlaintext
	}
	dk, err := DeriveWorkingKey(bdk, ksn, DataRequest)
	if err != nil {
		return nil, err
	}
	return encryptCBC(ksn.alg, dk.raw(), plaintext), nil
}

// DecryptData decrypts a device payload under the KSN's DataRequest key (CBC,
// zero IV); the zero padding is left in place for the caller's parser to skip.
func DecryptData(bdk Key, ksn KSN, ciphertext []byte) ([]byte, error) {
	if err := checkCiphertext(ksn.alg, ciphertext); err != nil {
		return nil, err
	}
	dk, err := DeriveWorkingKey(bdk, ksn, DataRequest)
	if err != nil {
		return nil, err
	}
	return decryptCBC(ksn.alg, dk.raw(), ciphertext), nil
}

func checkKey(k Key, name string) error {
	if k.IsZero() {
		return fmt.Errorf("%w: %s not set", ErrInvalidKey, name)
	}
	return nil
}
