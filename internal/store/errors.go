package store

import "database/sql"

var sqlNoRows = sql.ErrNoRows

// IsNotFound reports whether err means no row matched.
func IsNotFound(err error) bool {
	return err == ErrNotFound || err == sql.ErrNoRows || isErr(err, ErrNotFound)
}

// IsConflict reports whether err is a unique-constraint violation.
func IsConflict(err error) bool { return isErr(err, ErrConflict) }

func isErr(err, target error) bool {
	for err != nil {
		if err == target {
			return true
		}
		if j, ok := err.(interface{ Is(error) bool }); ok && j.Is(target) {
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// Owned narrows a row read by its primary key alone (row and err are the
// read's answer) to the merchant and mode asking for it: a row of another
// merchant or mode is ErrNotFound, exactly like a missing one. Reading by the
// key alone, rather than with the owner in the WHERE clause, keeps
// PostgreSQL's cached plan on the key: for "id = ? AND merchant_id = ? AND
// livemode = ?" on a table not analysed yet, it may take the merchant's index
// and read every row of the merchant to find one.
func Owned[T interface{ Owner() (string, bool) }](row T, err error, merchantID string, livemode bool) (T, error) {
	if err != nil {
		return row, err
	}
	if m, l := row.Owner(); m != merchantID || l != livemode {
		var none T
		return none, ErrNotFound
	}
	return row, nil
}
