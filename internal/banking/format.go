package banking

import (
	"bytes"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/errs"
)

// Format is the wire format of a request, and so of its answer.
type Format int

// The two formats: the ISO 20022 XML messages and their JSON mirrors.
const (
	FormatJSON Format = iota
	FormatXML
)

// MaxBodyBytes is the largest request body the transfer endpoints read: the
// iso20022 package's message limit (a multi-transaction pacs.008 of a few
// thousand transactions).
const MaxBodyBytes = iso20022.MaxMessageBytes

// FormatOf picks the format from a Content-Type: application/json (or
// +json) or application/xml, text/xml (or +xml). Anything else is 415.
func FormatOf(contentType string) (Format, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return FormatJSON, nil
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		return FormatXML, nil
	}
	return 0, &errs.Error{Kind: errs.KindUnsupportedMedia, Code: "unsupported_media_type",
		Message: "Content-Type must be application/xml (an ISO 20022 message) or application/json"}
}

// AcceptsXML reports whether an Accept header asks for XML rather than JSON.
func AcceptsXML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch {
		case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
			return true
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			return false
		}
	}
	return false
}

// ReadTransferMessage reads a pacs.008 body in the format its Content-Type
// names. It returns the message and, for a message that is readable but
// breaks its schema, the *iso20022.SchemaError to reject it with (FF01). A
// body that cannot be read at all is an *errs.Error (400, 413 or 415) whose
// message never quotes the body.
func ReadTransferMessage(contentType string, body []byte) (Format, iso20022.Message, *iso20022.SchemaError, error) {
	f, err := FormatOf(contentType)
	if err != nil {
		return f, iso20022.Message{}, nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return f, iso20022.Message{}, nil, errs.Invalid("", "body_missing", "a pacs.008.001.08 Document or the JSON envelope is required")
	}
	var msg iso20022.Message
	if f == FormatXML {
		msg, err = iso20022.DecodeXML(body)
	} else {
		msg, err = iso20022.DecodeJSON(body)
	}
	var schemaErr *iso20022.SchemaError
	if errors.As(err, &schemaErr) {
		return f, msg, schemaErr, nil
	}
	if err != nil {
		return f, iso20022.Message{}, nil, parseError(err)
	}
	return f, msg, nil, nil
}

// ReadReturnRequest reads a return or cancellation body: the JSON body
// or a pacs.004.001.09 / pacs.004.001.10 / camt.056.001.08 Document. Every problem is an
// *errs.Error: 400 naming the field (or the XML path), 413, 415.
func ReadReturnRequest(contentType string, body []byte) (iso20022.ReturnRequest, error) {
	f, err := FormatOf(contentType)
	if err != nil {
		return iso20022.ReturnRequest{}, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return iso20022.ReturnRequest{}, errs.Invalid("", "body_missing", "a body with reason_code and reason_text, or a pacs.004 / camt.056 Document, is required")
	}
	var req iso20022.ReturnRequest
	if f == FormatXML {
		req, err = iso20022.DecodeReturnXML(body)
	} else {
		req, err = iso20022.DecodeReturnJSON(body)
	}
	var schemaErr *iso20022.SchemaError
	var fieldErr *iso20022.FieldError
	switch {
	case err == nil:
		return req, nil
	case errors.As(err, &schemaErr):
		code, param := "schema_invalid", ""
		if len(schemaErr.Problems) > 0 {
			param = schemaErr.Problems[0].Path
			if f == FormatJSON {
				code = "parameter_invalid"
				if schemaErr.Problems[0].Reason == "unknown member" {
					code = "parameter_unknown"
				}
			}
		}
		return req, errs.Invalid(param, code, "%s", schemaErr.Error())
	case errors.As(err, &fieldErr):
		if fieldErr.Reason == "missing" && f == FormatJSON {
			return req, errs.Missing(fieldErr.Path)
		}
		return req, errs.Invalid(fieldErr.Path, "parameter_invalid", "%s", fieldErr.Error())
	}
	return req, parseError(err)
}

// parseError maps an *iso20022.ParseError to the HTTP error: 413 for a body
// over the limit, 400 otherwise.
func parseError(err error) error {
	var pe *iso20022.ParseError
	if !errors.As(err, &pe) {
		return errs.Internal(err)
	}
	code := "message_malformed"
	switch {
	case errors.Is(err, iso20022.ErrTooLarge):
		return &errs.Error{Kind: errs.KindTooLarge, Code: "request_too_large", Message: pe.Error(), Status: http.StatusRequestEntityTooLarge}
	case errors.Is(err, iso20022.ErrForbiddenMarkup):
		code = "xml_markup_forbidden"
	case errors.Is(err, iso20022.ErrTooDeep):
		code = "message_too_deep"
	case errors.Is(err, iso20022.ErrUnsupportedMessage):
		code = "message_unsupported"
	}
	return errs.Invalid("", code, "%s", pe.Error())
}
