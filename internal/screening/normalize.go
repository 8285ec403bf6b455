package screening

import (
	"strings"
)

// droppedWords carry no identifying weight in a name: legal forms of
// companies, connecting words, titles and generational suffixes. They are
// removed from both the listed names and the screened name, so "ANGLO-
// CARIBBEAN CO., LTD." and "Anglo Caribbean Company Limited" compare equal.
var droppedWords = setOf(
	// legal forms
	"LTD", "LIMITED", "LLC", "LLP", "LP", "PLC", "INC", "INCORPORATED", "CORP", "CORPORATION",
	"CO", "COMPANY", "CIA", "COMPANIA", "COMPAGNIE", "CIE", "SA", "SAS", "SARL", "SRL", "SPA",
	"SPRL", "SAC", "SAU", "SAL", "CA", "CV", "RL", "LTDA", "EIRL", "SL", "SLU", "SNC", "SCS", "GMBH",
	"AG", "KG", "BV", "NV", "AB", "OY", "OYJ", "PTE", "PVT", "PTY", "TBK", "BHD", "SDN", "JSC",
	"OJSC", "CJSC", "PJSC", "PAO", "OAO", "ZAO", "OOO", "FZE", "FZCO", "FZC", "FZ", "DMCC", "KK",
	// connecting words and articles
	"AND", "OF", "THE", "FOR", "DE", "DEL", "LA", "LE", "LES", "DES", "DU", "DA", "DO", "DOS",
	"DAS", "DI", "Y", "EN", "VAN", "VON", "DER",
	// Arabic articles and filiation ("son of", "daughter of"), spelt in many ways
	"AL", "EL", "UL", "BIN", "BINT", "IBN", "BEN", "OULD",
	// the same read from Arabic script, which writes no short vowels
	"BN", "BNT",
	// titles and generational suffixes
	"MR", "MRS", "MS", "MISS", "MME", "MLLE", "DR", "PROF", "SHEIKH", "SHAYKH", "SHAIKH", "SHEIK",
	"HAJ", "HAJJ", "HADJ", "JR", "SR", "II", "III", "IV",
)

// prefixWords are joined to the word that follows, because they are written
// both apart and together: "Abd al-Rahman", "Abdul Rahman", "Abdulrahman";
// "Abu Bakr", "Abubakar".
// "BD" and "BW" are Abd and Abu read from Arabic script.
var prefixWords = setOf("ABD", "ABDUL", "ABDEL", "ABDOUL", "ABDAL", "ABU", "ABOU", "BD", "BW")

// abbreviations are spelled out before comparison ("DEV'T" reads DEVT once
// the apostrophe is dropped).
var abbreviations = map[string]string{
	"DEVT": "DEVELOPMENT", "INTL": "INTERNATIONAL", "INTERNATL": "INTERNATIONAL",
	"NATL": "NATIONAL", "MGMT": "MANAGEMENT", "MGT": "MANAGEMENT", "SVCS": "SERVICES",
	"TRDG": "TRADING", "BROS": "BROTHERS", "ASSN": "ASSOCIATION", "ASSOC": "ASSOCIATION",
	"INDS": "INDUSTRIES", "MFG": "MANUFACTURING", "INVT": "INVESTMENT", "HLDG": "HOLDING",
	"HLDGS": "HOLDINGS", "GRP": "GROUP", "CTR": "CENTER", "CENTRE": "CENTER",
	"GOVT": "GOVERNMENT", "DEPT": "DEPARTMENT", "MOHD": "MOHAMMED", "MUHD": "MUHAMMAD",
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Normalize returns the normalised form of a name as screening compares it:
// its tokens joined by single spaces. A name written "LAST, First" is turned
// to "First LAST" first. Normalize("Mohammed AL-HASSAN, S.A.") is "MOHAMED
// HASAN".
func Normalize(name string) string {
	words := nameWords(name, true, false)
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.text
	}
	return strings.Join(out, " ")
}

// nameWord is one normalised word of a name.
type nameWord struct {
	text string
	// middle marks a listed individual's given name after the first one
	// (middle names, patronymics, father's names): often left out when the
	// name is written, so its absence costs less.
	middle bool
	// surname marks a word of the part before the comma of a listed
	// individual's name ("MADURO MOROS, Nicolas").
	surname bool
}

// role of a folded word within a name written "LAST, First Middle".
type role uint8

const (
	roleOther role = iota
	roleGiven
	roleSurname
)

type roledWord struct {
	text string
	role role
	kept bool // a dropped word kept because its part has nothing else
}

// nameWords normalises a name into the words screening compares. With
// commaOrder the part before the first comma (the surname of a listed
// individual) is moved behind the next part (the given names), turning
// "LAST, First Middle" into "First Middle LAST" so that prefix words join the
// same neighbour as in a name written naturally; the given names after the
// first are then marked middle. With joinHyphens a hyphen inside a word joins
// its halves instead of splitting it (see foldWords).
func nameWords(name string, commaOrder, joinHyphens bool) []nameWord {
	var words []roledWord
	parts := []string{name}
	if commaOrder {
		parts = strings.Split(name, ",")
	}
	addPart := func(s string, r role) {
		start := len(words)
		for _, w := range foldWords(s, joinHyphens) {
			if long, ok := abbreviations[w]; ok {
				w = long
			}
			words = append(words, roledWord{text: w, role: r})
		}
		keepSurname(words[start:], r)
	}
	if len(parts) >= 2 {
		addPart(parts[1], roleGiven)
		addPart(parts[0], roleSurname)
		for _, p := range parts[2:] {
			addPart(p, roleOther)
		}
	} else {
		addPart(name, roleOther)
	}

	out := make([]nameWord, 0, len(words))
	prefix := ""
	givenSeen := false
	for i, w := range words {
		if droppedWords[w.text] && !w.kept {
			continue
		}
		if prefixWords[w.text] && i < len(words)-1 {
			prefix += w.text
			continue
		}
		nw := nameWord{text: canonicalWord(prefix + w.text), surname: w.role == roleSurname}
		prefix = ""
		if w.role == roleGiven {
			nw.middle = givenSeen
			givenSeen = true
		}
		out = append(out, nw)
	}
	if prefix != "" {
		out = append(out, nameWord{text: canonicalWord(prefix)})
	}
	if len(out) == 0 {
		// A name made only of dropped words ("THE COMPANY") keeps them.
		for _, w := range words {
			out = append(out, nameWord{text: canonicalWord(w.text)})
		}
	}
	return out
}

// articles are the dropped words that stay dropped even from a surname made
// only of dropped words.
var articles = setOf("AL", "EL", "UL")

// keepSurname keeps the words of a surname that would otherwise vanish:
// "AL-SHAYKH, Muhammad" is Muhammad of the al-Shaykh family, not "Muhammad".
func keepSurname(part []roledWord, r role) {
	if r != roleSurname {
		return
	}
	for _, w := range part {
		if !droppedWords[w.text] {
			return
		}
	}
	for i := range part {
		part[i].kept = !articles[part[i].text]
	}
}
