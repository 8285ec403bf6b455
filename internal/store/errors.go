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
