package screening

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by LoadError and returned by Screener.
var (
	// ErrNoSource means no list source was configured.
	ErrNoSource = errors.New("no sanctions list source configured")
	// ErrUnsupportedSource means the source is neither a file path, an https
	// URL nor an http URL on a loopback address.
	ErrUnsupportedSource = errors.New("unsupported sanctions list source")
	// ErrTooLarge means a file or a record exceeds the size limits.
	ErrTooLarge = errors.New("too large")
	// ErrMalformed means a record does not follow its list's format.
	ErrMalformed = errors.New("malformed record")
	// ErrUnknownFormat means a list file is XML of neither the UN
	// Consolidated List nor the EU Financial Sanctions Files.
	ErrUnknownFormat = errors.New("not a sanctions list payd reads (OFAC sdn.csv, UN CONSOLIDATED_LIST XML, EU export XML)")
	// ErrDuplicateList means two sources hold the same list.
	ErrDuplicateList = errors.New("the same list is configured twice")
	// ErrEmptyList means sdn.csv held no entries; an empty list is refused so
	// that a truncated download cannot silently disable screening.
	ErrEmptyList = errors.New("sanctions list has no entries")
	// ErrUnavailable means no list is loaded, so names cannot be screened;
	// live payouts and transfers are refused rather than sent unscreened.
	ErrUnavailable = errors.New("sanctions screening unavailable: no sanctions list is loaded (PAYD_SANCTIONS_LIST)")
)

// LoadError reports why a list could not be loaded: the source, the file
// (sdn.csv, alt.csv, or the UN or EU XML file's name), the line when the
// fault is in a record, and the cause (which names the UN or EU entry).
type LoadError struct {
	Source string // the list source that failed (one of the comma-separated sources given to Load)
	File   string // "sdn.csv", "alt.csv" or the XML file's name; empty when the fault is not in a file
	Line   int    // 1-based line number; 0 when the fault is not in a record
	Err    error  // the cause; often wraps one of the sentinel errors
}

// Error describes the failure, naming the file and line when known.
func (e *LoadError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("screening: load %s: %s line %d: %v", e.Source, e.File, e.Line, e.Err)
	case e.File != "":
		return fmt.Sprintf("screening: load %s: %s: %v", e.Source, e.File, e.Err)
	default:
		return fmt.Sprintf("screening: load %s: %v", e.Source, e.Err)
	}
}

// Unwrap returns the cause.
func (e *LoadError) Unwrap() error { return e.Err }
