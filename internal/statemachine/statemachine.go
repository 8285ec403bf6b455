// Package statemachine is the one shape of payd's state machines: payment
// intents, refunds, payouts, payout batches, disputes and bank transfers
// each declare a Table of named Moves, and write every status change after
// creation as a compare-and-set whose condition the table gives (Cond), so
// two racing requests never both move the same row and a move the table
// does not list cannot be written.
package statemachine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A Move is one named transition: from any of From to To, emitting Events
// (in order; none for a move the outside does not see).
type Move[S ~string] struct {
	Name   string
	From   []S
	To     S
	Events []string
}

// Event is the move's first event, or "" for a move that emits none.
func (m Move[S]) Event() string {
	if len(m.Events) == 0 {
		return ""
	}
	return m.Events[0]
}

// Cond is the compare-and-set condition of m: "status IN ('a', 'b')".
func (m Move[S]) Cond() string { return cond(m.From) }

// Args are m's source states as query arguments, for a condition written
// with placeholders ("status IN (" + store.Placeholders(len(m.From)) + ")").
func (m Move[S]) Args() []any {
	out := make([]any, len(m.From))
	for i, f := range m.From {
		out[i] = string(f)
	}
	return out
}

// A Table is a state machine: the states a row is created in, its moves,
// and its terminal states (which no move leaves).
type Table[S ~string] struct {
	Name     string
	Initial  []S
	Terminal []S
	Moves    []Move[S]
}

// Allowed reports whether a move of the table goes from a to b.
func (t *Table[S]) Allowed(a, b S) bool {
	for _, m := range t.Moves {
		if m.To == b && slices.Contains(m.From, a) {
			return true
		}
	}
	return false
}

// IsTerminal reports whether s is one of the table's terminal states.
func (t *Table[S]) IsTerminal(s S) bool { return slices.Contains(t.Terminal, s) }

// Cond is the compare-and-set condition "status IN (...)" for moving to `to`
// from any of from, after checking that the table has each move: a move it
// does not have is a programming error, caught by the tests of every path.
func (t *Table[S]) Cond(to S, from ...S) string {
	for _, f := range from {
		if !t.Allowed(f, to) {
			panic(fmt.Sprintf("%s: the state machine has no move %s → %s", t.Name, f, to))
		}
	}
	return cond(from)
}

// States lists every state the table names, initial ones first.
func (t *Table[S]) States() []S {
	var out []S
	add := func(s S) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, s := range t.Initial {
		add(s)
	}
	for _, m := range t.Moves {
		for _, f := range m.From {
			add(f)
		}
		add(m.To)
	}
	for _, s := range t.Terminal {
		add(s)
	}
	return out
}

// Check reports what is wrong with the table: a move without a name, with
// a name another move has, or without a source state; a state no row is
// created in and no move reaches (unreachable); a terminal state a move
// leaves.
func (t *Table[S]) Check() error {
	var errs []error
	names := map[string]bool{}
	reached := map[S]bool{}
	for _, s := range t.Initial {
		reached[s] = true
	}
	for _, m := range t.Moves {
		switch {
		case m.Name == "":
			errs = append(errs, fmt.Errorf("%s: a move to %s has no name", t.Name, m.To))
		case names[m.Name]:
			errs = append(errs, fmt.Errorf("%s: two moves are named %s", t.Name, m.Name))
		}
		names[m.Name] = true
		if len(m.From) == 0 {
			errs = append(errs, fmt.Errorf("%s: move %s has no source state", t.Name, m.Name))
		}
		for _, f := range m.From {
			if t.IsTerminal(f) {
				errs = append(errs, fmt.Errorf("%s: move %s leaves the terminal state %s", t.Name, m.Name, f))
			}
		}
	}
	// Reachable: from the initial states along the moves.
	for changed := true; changed; {
		changed = false
		for _, m := range t.Moves {
			if reached[m.To] {
				continue
			}
			for _, f := range m.From {
				if reached[f] {
					reached[m.To], changed = true, true
					break
				}
			}
		}
	}
	for _, s := range t.States() {
		if !reached[s] {
			errs = append(errs, fmt.Errorf("%s: state %s is unreachable (no row is created in it and no move leads to it)", t.Name, s))
		}
	}
	if len(t.Initial) == 0 {
		errs = append(errs, fmt.Errorf("%s: no initial state", t.Name))
	}
	return errors.Join(errs...)
}

func cond[S ~string](from []S) string {
	quoted := make([]string, len(from))
	for i, f := range from {
		quoted[i] = "'" + string(f) + "'"
	}
	return "status IN (" + strings.Join(quoted, ", ") + ")"
}
