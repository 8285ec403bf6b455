package banking

import "github.com/payd/payd/internal/screening"

// NameScreener screens a party name against the sanctions list. The wiring
// passes a *screening.Screener (PAYD_SANCTIONS_LIST); tests may pass a stub.
type NameScreener interface {
	Screen(name string) screening.Result
}

// ScreenHit is the stored outcome of a name that matched the list (the
// others are screening.StatusClear and screening.StatusNotScreened).
const ScreenHit = screening.StatusHit

// NameScreening is the stored outcome of screening one name.
type NameScreening struct {
	Status  string            `json:"status"`
	Matches []screening.Match `json:"matches,omitempty"`
}

// screenParties screens both names of a transaction. A nil screener screens
// nothing.
func screenParties(s NameScreener, debtor, creditor string) *ScreeningRecord {
	if s == nil {
		return nil
	}
	one := func(name string) NameScreening {
		r := s.Screen(name)
		return NameScreening{Status: r.Status, Matches: r.Matches}
	}
	return &ScreeningRecord{Debtor: one(debtor), Creditor: one(creditor)}
}
