package card

// LuhnValid reports whether a string of digits passes the Luhn (mod 10) check.
func LuhnValid(pan string) bool {
	if !allDigits(pan) {
		return false
	}
	sum := 0
	double := false
	for i := len(pan) - 1; i >= 0; i-- {
		d := int(pan[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// validPAN reports whether pan has a plausible length and passes the Luhn check.
func validPAN(pan string) bool {
	return len(pan) >= minPANLength && len(pan) <= maxPANLength && LuhnValid(pan)
}
