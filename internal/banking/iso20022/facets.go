package iso20022

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// check validates a text value against the simple type's built-in and facets.
// It returns "" when the value is valid, else a reason that never quotes the
// value itself (error messages must not echo the message body).
func (st *simpleType) check(raw string) string {
	value := raw
	switch st.base {
	case xsDecimal:
		value = strings.Trim(raw, xmlSpace)
		if reason := checkDecimal(value, st); reason != "" {
			return reason
		}
	case xsBoolean:
		value = strings.Trim(raw, xmlSpace)
		switch value {
		case "true", "false", "1", "0":
		default:
			return "not an xs:boolean"
		}
	case xsDate:
		if !validDateTime(value, isoDate) {
			return "not an ISO date (xs:date)"
		}
	case xsDateTime:
		if !validDateTime(value, isoDateTime) {
			return "not an ISO date-time (xs:dateTime)"
		}
	case xsTime:
		if !validDateTime(value, isoTime) {
			return "not an ISO time (xs:time)"
		}
	case xsBase64Binary:
		return checkBase64(raw, st)
	}
	if st.base == xsString {
		n := utf8.RuneCountInString(value)
		if st.minLength >= 0 && n < st.minLength {
			return fmt.Sprintf("length %d is below minLength %d", n, st.minLength)
		}
		if st.maxLength >= 0 && n > st.maxLength {
			return fmt.Sprintf("length %d exceeds maxLength %d", n, st.maxLength)
		}
	}
	if st.re != nil && !st.re.MatchString(value) {
		return "does not match the pattern of " + st.name
	}
	if st.allowed != nil && !st.allowed[value] {
		return "is not a code of " + st.name
	}
	return ""
}

// xmlSpace is the XML white space set that xs:decimal collapses.
const xmlSpace = " \t\r\n"

var decimalLexical = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// checkDecimal applies the xs:decimal lexical rule and the totalDigits,
// fractionDigits and minInclusive facets. Digits are counted on the value
// (leading and trailing zeros are not significant), as the XSD rules and
// libxml2 do.
func checkDecimal(v string, st *simpleType) string {
	if !decimalLexical.MatchString(v) {
		return "not an xs:decimal"
	}
	d := parseDecimalText(v)
	if st.totalDigits >= 0 && len(d.intDigits)+len(d.fracDigits) > st.totalDigits {
		return fmt.Sprintf("more than %d digits", st.totalDigits)
	}
	if st.fractionDigits >= 0 && len(d.fracDigits) > st.fractionDigits {
		return fmt.Sprintf("more than %d fraction digits", st.fractionDigits)
	}
	if st.minInclusive != "" && compareDecimal(d, parseDecimalText(st.minInclusive)) < 0 {
		return "below minInclusive " + st.minInclusive
	}
	return ""
}

// decimalText is a decimal split into its significant digits: no leading
// zeros in intDigits, no trailing zeros in fracDigits. Zero is never negative.
type decimalText struct {
	negative   bool
	intDigits  string
	fracDigits string
}

func (d decimalText) isZero() bool { return d.intDigits == "" && d.fracDigits == "" }

// parseDecimalText splits a lexically valid xs:decimal.
func parseDecimalText(v string) decimalText {
	var d decimalText
	switch {
	case strings.HasPrefix(v, "-"):
		d.negative, v = true, v[1:]
	case strings.HasPrefix(v, "+"):
		v = v[1:]
	}
	ip, fp, _ := strings.Cut(v, ".")
	d.intDigits = strings.TrimLeft(ip, "0")
	d.fracDigits = strings.TrimRight(fp, "0")
	if d.isZero() {
		d.negative = false
	}
	return d
}

// compareDecimal orders two decimals: -1, 0 or +1.
func compareDecimal(a, b decimalText) int {
	if a.negative != b.negative {
		if a.negative {
			return -1
		}
		return 1
	}
	c := compareMagnitude(a, b)
	if a.negative {
		return -c
	}
	return c
}

func compareMagnitude(a, b decimalText) int {
	if len(a.intDigits) != len(b.intDigits) {
		if len(a.intDigits) < len(b.intDigits) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.intDigits, b.intDigits); c != 0 {
		return c
	}
	return strings.Compare(a.fracDigits, b.fracDigits)
}

type dateTimeForm uint8

const (
	isoDate dateTimeForm = iota
	isoDateTime
	isoTime
)

var (
	xsdTimezone = `(Z|[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00))?`
	xsdDatePart = `-?([1-9][0-9]{3,}|0[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])`
	xsdTimePart = `(([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?|24:00:00(\.0+)?)`
	dateRE      = regexp.MustCompile(`^` + xsdDatePart + xsdTimezone + `$`)
	dateTimeRE  = regexp.MustCompile(`^` + xsdDatePart + `T` + xsdTimePart + xsdTimezone + `$`)
	timeRE      = regexp.MustCompile(`^` + xsdTimePart + xsdTimezone + `$`)
)

// validDateTime checks the XSD lexical form and that the day exists in its
// month. Like libxml2, it does not trim surrounding white space.
func validDateTime(v string, form dateTimeForm) bool {
	switch form {
	case isoTime:
		return timeRE.MatchString(v)
	case isoDate:
		if !dateRE.MatchString(v) {
			return false
		}
	default:
		if !dateTimeRE.MatchString(v) {
			return false
		}
	}
	s := strings.TrimPrefix(v, "-")
	dash := strings.IndexByte(s, '-')
	year := s[:dash]
	if strings.Trim(year, "0") == "" {
		return false // year 0000 does not exist in XSD 1.0
	}
	month := int(s[dash+1]-'0')*10 + int(s[dash+2]-'0')
	day := int(s[dash+4]-'0')*10 + int(s[dash+5]-'0')
	return day <= daysIn(month, year)
}

func daysIn(month int, year string) int {
	switch month {
	case 2:
		if leapYear(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// leapYear decides on the decimal digits, so a year of any length works.
func leapYear(year string) bool {
	mod := func(m int) int {
		r := 0
		for i := 0; i < len(year); i++ {
			r = (r*10 + int(year[i]-'0')) % m
		}
		return r
	}
	return mod(4) == 0 && (mod(100) != 0 || mod(400) == 0)
}

// checkBase64 applies the xs:base64Binary lexical rule (white space between
// the base64 characters is allowed) and the length facets, which count the
// decoded octets.
func checkBase64(raw string, st *simpleType) string {
	compact := strings.Map(func(r rune) rune {
		if strings.ContainsRune(xmlSpace, r) {
			return -1
		}
		return r
	}, raw)
	data, err := base64.StdEncoding.DecodeString(compact)
	if err != nil {
		return "not an xs:base64Binary"
	}
	if st.minLength >= 0 && len(data) < st.minLength {
		return fmt.Sprintf("length %d is below minLength %d", len(data), st.minLength)
	}
	if st.maxLength >= 0 && len(data) > st.maxLength {
		return fmt.Sprintf("length %d exceeds maxLength %d", len(data), st.maxLength)
	}
	return ""
}
