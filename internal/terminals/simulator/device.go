// Package simulator is a card-present terminal in software: it builds a chip
// read, encrypts it the way a countertop (TDES DUKPT) or mobile (AES-128
// DUKPT) device does under the sandbox base derivation key, and posts it to
// POST /v1/terminals/{id}/payments. `payd terminal simulate` and the tests
// use it; it is the tool a POS developer uses against the sandbox.
package simulator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/dukpt"
)

// Device is one simulated terminal device: its initial key (derived from the
// model's public test BDK and an initial KSN of its own) and the DUKPT
// registers of its next transaction. It is not safe for concurrent use.
type Device struct {
	model terminals.Model
	dev   *dukpt.Device
}

// InitialKSN is the initial KSN key injection would load into the simulated
// device of a terminal: derived from the terminal id, so each terminal has a
// device key of its own, counter 0.
func InitialKSN(model terminals.Model, terminalID string) (dukpt.KSN, error) {
	alg, ok := model.Algorithm()
	if !ok {
		return dukpt.KSN{}, fmt.Errorf("simulator: unknown terminal model %q", model)
	}
	sum := sha256.Sum256([]byte("payd simulated device\x00" + string(model) + "\x00" + terminalID))
	b := sum[:alg.KSNLength()]
	clearCounter(alg, b)
	return dukpt.NewKSN(alg, b)
}

func clearCounter(alg dukpt.Algorithm, b []byte) {
	switch alg {
	case dukpt.TDES:
		b[7] &^= 0x1f
		b[8], b[9] = 0, 0
	case dukpt.AES128:
		b[8], b[9], b[10], b[11] = 0, 0, 0, 0
	}
}

// NewDevice returns the terminal's simulated device positioned at a
// transaction counter (1 for a device fresh from key injection). A counter
// the device would skip (too many one-bits) moves to the next one it uses.
func NewDevice(model terminals.Model, terminalID string, counter uint32) (*Device, error) {
	bdk, err := terminals.SandboxBDK(model)
	if err != nil {
		return nil, err
	}
	return NewDeviceWithBDK(model, terminalID, bdk, counter)
}

// NewDeviceWithBDK is NewDevice with its initial key derived from another
// base derivation key (a live BDK, in tests of live mode).
func NewDeviceWithBDK(model terminals.Model, terminalID string, bdk dukpt.Key, counter uint32) (*Device, error) {
	initial, err := InitialKSN(model, terminalID)
	if err != nil {
		return nil, err
	}
	ik, err := dukpt.DeriveInitialKey(bdk, initial)
	if err != nil {
		return nil, err
	}
	if counter == 0 {
		counter = 1
	}
	next, err := nextUsable(initial, counter)
	if err != nil {
		return nil, err
	}
	dev, err := dukpt.ResumeDevice(ik, next)
	if err != nil {
		return nil, err
	}
	return &Device{model: model, dev: dev}, nil
}

// nextUsable returns the KSN of the first counter at or after c that a device uses.
func nextUsable(initial dukpt.KSN, c uint32) (dukpt.KSN, error) {
	for {
		k, err := initial.WithCounter(c)
		if err == nil {
			return k, nil
		}
		low := c & -c // a skipped counter's lowest one-bit: adding it clears a run of ones
		if c+low <= c {
			return dukpt.KSN{}, dukpt.ErrDeviceExhausted
		}
		if initial.Algorithm() == dukpt.TDES && c+low >= 1<<21 {
			return dukpt.KSN{}, dukpt.ErrDeviceExhausted
		}
		c += low
	}
}

// Model returns the device's model.
func (d *Device) Model() terminals.Model { return d.model }

// NextCounter returns the transaction counter the next Encrypt will use.
func (d *Device) NextCounter() uint32 { return d.dev.NextKSN().Counter() }

// Encrypt runs the device's next transaction: it encrypts plaintext under
// that transaction's data key and returns the KSN and ciphertext in hex, as
// the POS application receives them.
func (d *Device) Encrypt(plaintext []byte) (ksn, payload string, err error) {
	k, ct, err := d.dev.EncryptData(plaintext)
	if err != nil {
		return "", "", err
	}
	return k.String(), hex.EncodeToString(ct), nil
}
