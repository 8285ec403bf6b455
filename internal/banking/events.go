package banking

import (
	"context"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
)

// Event types of bank transfers.
const (
	EventSettled  = "transfer.settled"  // ACSC reached (at once, after deferred settlement, or on release)
	EventRejected = "transfer.rejected" // a stored transfer ended RJCT
	EventReturned = "transfer.returned" // a return or cancellation moved money back
)

// ObjectType is the object type of transfer events.
const ObjectType = "transfer"

// emit records an event about t for each of its agents (the debtor agent,
// and the creditor agent once the transfer has reached it), with the
// transfer row as the object and the UETR as the object id.
func emit(ctx context.Context, tx *store.Tx, t *Transfer, typ string) error {
	row := t.Row()
	if _, err := events.Emit(ctx, tx, t.DebtorMerchantID, t.Livemode, typ, ObjectType, t.UETR, row); err != nil {
		return err
	}
	if t.CreditorMerchantID != "" && t.CreditorMerchantID != t.DebtorMerchantID {
		if _, err := events.Emit(ctx, tx, t.CreditorMerchantID, t.Livemode, typ, ObjectType, t.UETR, row); err != nil {
			return err
		}
	}
	return nil
}
