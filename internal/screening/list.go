package screening

import (
	"sync"
	"time"
)

// List is a parsed sanctions list with its search index. A List is immutable
// once built and safe for concurrent use.
type List struct {
	source        string
	loadedAt      time.Time
	entries       []Entry
	byID          map[entryKey]int // (list, identifier) -> index in entries
	orphanAliases int
	idx           index
	scratch       sync.Pool // *scratch, per-screening work space
	words         wordCache // close terms of recently screened words
}

// newList indexes entries.
func newList(entries []Entry, orphanAliases int) *List {
	l := &List{
		entries:       entries,
		byID:          make(map[entryKey]int, len(entries)),
		orphanAliases: orphanAliases,
		loadedAt:      time.Now().UTC(),
	}
	for i := range entries {
		l.byID[entryKey{entries[i].List, entries[i].ID}] = i
	}
	l.idx = buildIndex(entries)
	return l
}

// Source returns the path or URL the list was loaded from; empty for a list
// made by Parse.
func (l *List) Source() string { return l.source }

// LoadedAt returns when the list was parsed, in UTC.
func (l *List) LoadedAt() time.Time { return l.loadedAt }

// Lists returns how many entries each list contributed, by list name.
func (l *List) Lists() map[string]int {
	out := map[string]int{}
	for i := range l.entries {
		out[l.entries[i].List]++
	}
	return out
}

// Size returns the number of entries (primary records) on the list.
func (l *List) Size() int { return len(l.entries) }

// AliasCount returns the number of aliases attached to entries.
func (l *List) AliasCount() int {
	n := 0
	for i := range l.entries {
		n += len(l.entries[i].Aliases)
	}
	return n
}

// OrphanAliases returns how many aliases of alt.csv named an entry missing
// from sdn.csv and were skipped.
func (l *List) OrphanAliases() int { return l.orphanAliases }

// Entry returns the OFAC entry with the identifier id (ent_num).
func (l *List) Entry(id int) (Entry, bool) { return l.EntryOf(ListOFAC, id) }

// EntryOf returns the entry of list (ListOFAC, ListUN, ListEU) with the
// list's identifier id.
func (l *List) EntryOf(list string, id int) (Entry, bool) {
	i, ok := l.byID[entryKey{list, id}]
	if !ok {
		return Entry{}, false
	}
	return l.entries[i], true
}
