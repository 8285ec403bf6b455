// Package dukpt implements Derived Unique Key Per Transaction key management
// for payd's point-to-point encryption: TDES DUKPT (ANSI X9.24-1:2009) for the
// countertop terminal model and AES-128 DUKPT (ANSI X9.24-3-2017) for the mobile
// model.
//
// The host side (ParseKSN, DeriveInitialKey, DeriveTransactionKey,
// DeriveWorkingKey, EncryptData, DecryptData) derives any transaction's keys
// directly from the base derivation key (BDK) and the key serial number (KSN).
// The device side (Device) is the originating device's register algorithm: it
// holds future keys and never the BDK, and reaches the same keys by a different
// route. Tests cross-check the two.
//
// Key material is held in Key, which never prints, logs or marshals its bytes.
package dukpt
