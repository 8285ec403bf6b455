package screening

// Entry types as written in the third column of sdn.csv. A blank column
// (-0-) denotes an entity such as a company or an organisation.
const (
	TypeIndividual = "individual"
	TypeEntity     = "entity"
	TypeVessel     = "vessel"
	TypeAircraft   = "aircraft"
)

// Entry is one record of the sanctions list (a line of sdn.csv) with the
// aliases alt.csv gives for it.
type Entry struct {
	ID          int      // ent_num, the list's identifier of the entry
	Name        string   // primary name as listed; individuals are written "LAST, First Middle"
	Type        string   // TypeIndividual, TypeEntity, TypeVessel or TypeAircraft
	Programs    []string // sanctions programs, e.g. SDGT, IRAN-EO13846
	Title       string   // title of an individual
	CallSign    string   // vessel call sign
	VesselType  string   // vessel type
	Tonnage     string   // vessel tonnage
	GRT         string   // vessel gross registered tonnage
	VesselFlag  string   // vessel flag
	VesselOwner string   // vessel owner
	Remarks     string   // free-form remarks (dates of birth, identifiers, weak aliases)
	Aliases     []Alias  // aliases from alt.csv, in file order
}

// Alias is one alternative name of an entry (a line of alt.csv).
type Alias struct {
	ID      int    // alt_num, the list's identifier of the alias
	Kind    string // "aka", "fka" (formerly known as) or "nka" (now known as)
	Name    string // alias as listed
	Remarks string // free-form remarks, often empty
}
