// Package screening checks names against a sanctions list (the OFAC SDN list in
// its legacy CSV format: sdn.csv plus an optional alt.csv of aliases).
//
// Load parses the list and builds an in-memory index; List.Screen normalises a
// name (case, accents, punctuation, word order, company suffixes, common
// transliteration variants) and fuzzy-matches it token by token with
// Jaro-Winkler against every primary name and alias. Screener holds the
// current list behind an atomic pointer so a reload swaps it without blocking
// screening.
//
// The package imports nothing of payd.
package screening
