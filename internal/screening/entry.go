package screening

// Entry types as written in the third column of sdn.csv. A blank column
// (-0-) denotes an entity such as a company or an organisation.
const (
	TypeIndividual = "individual"
	TypeEntity     = "entity"
	TypeVessel     = "vessel"
	TypeAircraft   = "aircraft"
)

// Entry is one record of a sanctions list (a line of sdn.csv with the
// aliases alt.csv gives for it, a UN INDIVIDUAL or ENTITY, an EU
// sanctionEntity).
type Entry struct {
	ID          int      // the list's identifier of the entry: OFAC ent_num, UN DATAID, EU logicalId
	List        string   // the list the entry is on: ListOFAC, ListUN or ListEU
	Reference   string   // the list's reference, when it has one besides ID: UN REFERENCE_NUMBER, EU euReferenceNumber
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

// Alias is one alternative name of an entry (a line of alt.csv, a UN alias or
// original-script name, an EU nameAlias after the first).
type Alias struct {
	ID      int    // alt_num, the list's identifier of the alias; for UN and EU entries its number within the entry
	Kind    string // "aka", "fka" (formerly known as), "nka" (now known as), "weak aka" (UN quality Low, EU strong="false") or "original_script" (UN)
	Name    string // alias as listed
	Remarks string // free-form remarks, often empty
}
