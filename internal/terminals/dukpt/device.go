package dukpt

import (
	"fmt"
	"log/slog"
	"math/bits"
)

// Device is the originating device's side of DUKPT: it holds the initial key
// only until it has derived its future key registers, then one register per
// counter bit, and reaches each transaction key without the chain the host uses.
//
// For TDES these are the 21 future key registers of X9.24-1:2009 A.2; for
// AES-128 the 32 intermediate derivation key registers of X9.24-3-2017. A Device
// is not safe for concurrent use.
type Device struct {
	ksn       KSN                 // initial key ID and the counter of the next transaction
	registers [aesCounterBits]Key // zero Key: register not in use
	exhausted bool
}

// NewDevice loads an initial key (IPEK or AES initial key) and its initial KSN
// (counter 0) into a new device, as key injection does.
func NewDevice(initialKey Key, initialKSN KSN) (*Device, error) {
	if err := checkKey(initialKey, "initial key"); err != nil {
		return nil, err
	}
	if initialKSN.IsZero() {
		return nil, fmt.Errorf("%w: zero KSN", ErrInvalidKSN)
	}
	if !initialKSN.IsInitial() {
		return nil, fmt.Errorf("%w: an initial KSN has counter 0, got %#x", ErrInvalidKSN, initialKSN.Counter())
	}
	d := &Device{ksn: initialKSN}
	// Every future key of a fresh device is a child of the initial key: register
	// i holds the key for counter 1<<i.
	d.fillRegisters(initialKey.raw(), 0, initialKSN.alg.counterBits())
	d.ksn.setCounter(1)
	return d, nil
}

// ResumeDevice rebuilds the state of a device whose next transaction uses next's
// counter, as if it had run every earlier transaction since key injection.
//
// It computes the registers from the initial key with the host's derivation,
// so it is a convenience for simulators, not an independent check.
func ResumeDevice(initialKey Key, next KSN) (*Device, error) {
	if err := checkKey(initialKey, "initial key"); err != nil {
		return nil, err
	}
	if err := next.checkTransaction(); err != nil {
		return nil, err
	}
	d := &Device{ksn: next}
	c := next.Counter()
	low := bits.TrailingZeros32(c)
	for i := low; i < next.alg.counterBits(); i++ {
		if i > low && c&(1<<i) != 0 {
			continue // that key was used and erased before this counter
		}
		// Register i holds the key for c's bits above i plus bit i.
		v := uint32(uint64(c)&^(1<<(i+1)-1)) | 1<<i
		k := next
		k.setCounter(v)
		d.registers[i] = transactionKeyFromInitial(initialKey.raw(), k)
	}
	return d, nil
}

// NextKSN returns the KSN the device's next transaction will use.
func (d *Device) NextKSN() KSN { return d.ksn }

// NextTransaction returns the KSN and transaction key of the device's next
// transaction and advances the device past it.
func (d *Device) NextTransaction() (KSN, Key, error) {
	if d.exhausted {
		return KSN{}, Key{}, ErrDeviceExhausted
	}
	ksn := d.ksn
	c := ksn.Counter()
	current := bits.TrailingZeros32(c)
	key := d.registers[current]
	if key.IsZero() {
		return KSN{}, Key{}, fmt.Errorf("%w: no key in register %d", ErrDeviceExhausted, current)
	}

	next := uint64(c) + 1
	if bits.OnesCount32(c) < ksn.alg.maxOneBits() {
		// Future keys for c plus each lower bit are children of this key.
		d.fillRegisters(key.raw(), c, current)
	} else {
		// Every counter between here and c+lowest bit would have too many one-bits.
		next = uint64(c) + 1<<current
	}
	d.registers[current] = Key{}
	if next>>ksn.alg.counterBits() != 0 {
		d.exhausted = true
	} else {
		d.ksn.setCounter(uint32(next))
	}
	return ksn, key, nil
}

// EncryptData runs the next transaction and encrypts the payload under its
// DataRequest key, CBC with a zero IV, zero-padded to the block size.
func (d *Device) EncryptData(plaintext []byte) (KSN, []byte, error) {
	if len(plaintext) == 0 {
		return KSN{}, nil, ErrEmptyPlaintext
	}
	ksn, tk, err := d.NextTransaction()
	if err != nil {
		return KSN{}, nil, err
	}
	dk, err := WorkingKey(tk, ksn, DataRequest)
	if err != nil {
		return KSN{}, nil, err
	}
	return ksn, encryptCBC(ksn.alg, dk.raw(), plaintext), nil
}

// fillRegisters derives, from the key for counter base, the future key for
// base|1<<i into register i for every i below top.
func (d *Device) fillRegisters(key [KeySize]byte, base uint32, top int) {
	for i := top - 1; i >= 0; i-- {
		counter := base | 1<<i
		if d.ksn.alg == TDES {
			d.registers[i] = keyOf(tdesNonReversibleKey(key, tdesKSNRegister(d.ksn, counter)))
		} else {
			d.registers[i] = keyOf(aesIntermediateKey(key, aesInitialKeyID(d.ksn), counter))
		}
	}
}

// String names the device's algorithm and next KSN, never its keys.
func (d *Device) String() string {
	return fmt.Sprintf("dukpt.Device(%s, next KSN %s)", d.ksn.alg, d.ksn)
}

// Format prints String for every verb, so no verb can reach the key registers.
func (d *Device) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(d.String())) }

// LogValue logs the algorithm and next KSN, never the keys.
func (d *Device) LogValue() slog.Value {
	return slog.GroupValue(slog.String("algorithm", d.ksn.alg.String()), slog.String("next_ksn", d.ksn.String()))
}
