// Package iso20022 is payd's ISO 20022 message layer: it reads customer credit
// transfers (pacs.008.001.08, XML or the JSON envelope), returns
// (pacs.004.001.09 and .10) and cancellation requests (camt.056.001.08), checks them
// against the payd profile, and writes payment status reports
// (pacs.002.001.10, XML or JSON).
//
// The package is pure: it imports nothing of payd and touches no database.
// Rules that need state (duplicates across messages, unknown agents,
// balances, screening) belong to the banking service.
//
// XML is validated against the complete official schema, carried as Go
// tables generated from the XSD files (see internal/xsdgen and
// docs/iso20022.md); a schema-invalid XML message is rejected as a whole with
// reason FF01.
package iso20022

//go:generate go run ./internal/xsdgen/cmd/xsdgen -xsd ../../../testdata/iso20022/xsd -out .
