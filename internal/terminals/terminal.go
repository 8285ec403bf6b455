package terminals

import (
	"time"

	"github.com/payd/payd/internal/terminals/dukpt"
)

// Status is a terminal's state.
type Status string

// A terminal is inactive after registration, active once activated (it can
// then take payments) and deregistered once deleted (it never takes a payment
// again; the row stays so the history can be read).
const (
	Inactive     Status = "inactive"
	Active       Status = "active"
	Deregistered Status = "deregistered"
)

// valid reports whether s names a status.
func (s Status) valid() bool { return s == Inactive || s == Active || s == Deregistered }

// Model is a supported terminal hardware model; it selects the decryption
// profile.
type Model string

// The two supported models.
const (
	// Countertop terminals encrypt with TDES DUKPT (ANSI X9.24-1, data
	// encryption key variant).
	Countertop Model = "countertop"
	// Mobile terminals encrypt with AES-128 DUKPT (ANSI X9.24-3).
	Mobile Model = "mobile"
)

// Models lists the supported models.
var Models = []Model{Countertop, Mobile}

// Algorithm returns the DUKPT algorithm of the model, and false for an unknown model.
func (m Model) Algorithm() (dukpt.Algorithm, bool) {
	switch m {
	case Countertop:
		return dukpt.TDES, true
	case Mobile:
		return dukpt.AES128, true
	}
	return 0, false
}

// Terminal is a registered card-present device, as the API returns it.
type Terminal struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"` // "terminal"
	Status         Status            `json:"status"`
	SerialNumber   string            `json:"serial_number"`
	Model          Model             `json:"model"`
	OutletID       *string           `json:"outlet_id"`
	Label          *string           `json:"label"`
	Metadata       map[string]string `json:"metadata"`
	Livemode       bool              `json:"livemode"`
	CreatedAt      time.Time         `json:"created_at"`
	ActivatedAt    *time.Time        `json:"activated_at"`
	DeregisteredAt *time.Time        `json:"deregistered_at"`

	MerchantID string `json:"-"`
	// KSNKeyID is the initial key id of the device's DUKPT key, learnt from
	// its first accepted payment; KSNCounter the highest counter accepted.
	KSNKeyID   string `json:"-"`
	KSNCounter uint32 `json:"-"`
}

// Deleted is the answer of DELETE /v1/terminals/{id}.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "terminal"
	Deleted bool   `json:"deleted"`
}
