package screening

// givenNameShortForms maps short forms and abbreviations of given names to
// the full names they stand for, as written on sanctions lists. The list is
// small on purpose: each entry is a form that fuzzy matching cannot reach
// (too short, or spelt too differently) yet is commonly used for the full
// name. A screened word found here is also compared as each full name, at a
// small discount (givenNameFactor). Both sides are folded by canonicalWord
// when the table is built.
var givenNameShortForms = map[string][]string{
	// Muhammad and its abbreviations in South and South-East Asian and
	// Gulf usage ("Mohd", "Md", "Mhd" are spelled out before: see
	// abbreviations)
	"MD": {"MUHAMMAD", "MOHAMED"}, "MHD": {"MUHAMMAD", "MOHAMED"}, "MOHD": {"MUHAMMAD", "MOHAMED"},
	"MUHD":    {"MUHAMMAD", "MOHAMED"},
	"MAHOMED": {"MUHAMMAD"}, "MEHMET": {"MUHAMMAD"}, "MEHMED": {"MUHAMMAD"},
	// Abd al- and Abu names shortened to their second half in speech are
	// not expanded: "Rahman" alone is a name of its own.
	"AHMET": {"AHMAD"}, "AHMEDOU": {"AHMAD"}, "YUSUF": {"YOUSSEF", "JOSEPH"}, "YOUSSOUF": {"YUSUF"},
	"IBRAHIMA": {"IBRAHIM"}, "ABRAHAM": {"IBRAHIM"}, "SULEIMAN": {"SULAYMAN"}, "SOLIMAN": {"SULAYMAN"},
	// English
	"BOB": {"ROBERT"}, "BOBBY": {"ROBERT"}, "ROB": {"ROBERT"}, "BILL": {"WILLIAM"}, "BILLY": {"WILLIAM"},
	"WILL": {"WILLIAM"}, "JIM": {"JAMES"}, "JIMMY": {"JAMES"}, "MIKE": {"MICHAEL"}, "TOM": {"THOMAS"},
	"JOE": {"JOSEPH"}, "DICK": {"RICHARD"}, "RICK": {"RICHARD"}, "TED": {"EDWARD"}, "ED": {"EDWARD"},
	"ALEX": {"ALEXANDER", "ALEKSANDR"}, "TONY": {"ANTHONY"}, "DAN": {"DANIEL"}, "DAVE": {"DAVID"},
	"CHRIS": {"CHRISTOPHER"}, "PETE": {"PETER"}, "NICK": {"NICHOLAS", "NIKOLAI"}, "STEVE": {"STEVEN", "STEPHEN"},
	// Russian and Ukrainian diminutives
	"SASHA": {"ALEKSANDR", "ALEXANDER"}, "VOLODYA": {"VLADIMIR"}, "VOVA": {"VLADIMIR"}, "DIMA": {"DMITRY"},
	"MISHA": {"MIKHAIL"}, "KOLYA": {"NIKOLAI"}, "SERYOZHA": {"SERGEI"}, "SEREZHA": {"SERGEI"},
	"ZHENYA": {"YEVGENIY", "EVGENY"}, "VANYA": {"IVAN"}, "ALYOSHA": {"ALEKSEI"}, "LYOSHA": {"ALEKSEI"},
	"KOSTYA": {"KONSTANTIN"}, "PASHA": {"PAVEL"}, "YURA": {"YURI"}, "TOLYA": {"ANATOLY"}, "SLAVA": {"VYACHESLAV"},
	"VITYA": {"VIKTOR"}, "GRISHA": {"GRIGORY"}, "TANYA": {"TATIANA"}, "NATASHA": {"NATALIA"}, "KATYA": {"EKATERINA"},
}

// givenNameIndex is givenNameShortForms with both sides folded by
// canonicalWord.
var givenNameIndex = func() map[string][]string {
	m := make(map[string][]string, len(givenNameShortForms))
	for short, fulls := range givenNameShortForms {
		k := canonicalWord(short)
		for _, f := range fulls {
			m[k] = append(m[k], canonicalWord(f))
		}
	}
	return m
}()

// givenNameVariants returns the full given names a screened word (already
// folded by canonicalWord) is a short form of.
func givenNameVariants(w string) []string { return givenNameIndex[w] }
