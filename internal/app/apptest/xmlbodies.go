package apptest

import "github.com/getkin/kin-openapi/openapi3filter"

// XML bodies (the ISO 20022 messages of /banking/v1) are documented as
// strings; kin-openapi has no XML decoder, so responses are read as text and
// checked against that string schema.
func init() {
	openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.PlainBodyDecoder)
}
