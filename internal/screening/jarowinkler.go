package screening

// Jaro-Winkler parameters: the common-prefix bonus applies to at most four
// runes at 0.1 each, and only when the Jaro similarity already exceeds 0.7
// (Winkler's "boost threshold"), so unrelated words sharing a first letter are
// not lifted.
const (
	winklerPrefix    = 4
	winklerScale     = 0.1
	winklerThreshold = 0.7
)

// jaroWinkler returns the Jaro-Winkler similarity of two rune strings, from 0
// (nothing in common) to 1 (equal). It does not allocate for words of up to
// 64 runes.
func jaroWinkler(a, b []rune) float64 {
	if len(a) == 0 || len(b) == 0 {
		if len(a) == len(b) {
			return 1
		}
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	window := len(b)/2 - 1
	if window < 0 {
		window = 0
	}
	var aBuf, bBuf [64]bool
	aMatched, bMatched := aBuf[:0], bBuf[:0]
	if len(b) <= len(bBuf) {
		aMatched, bMatched = aBuf[:len(a)], bBuf[:len(b)]
	} else {
		aMatched, bMatched = make([]bool, len(a)), make([]bool, len(b))
	}
	matches := 0
	for i, r := range a {
		lo, hi := max(0, i-window), min(len(b), i+window+1)
		for j := lo; j < hi; j++ {
			if !bMatched[j] && b[j] == r {
				aMatched[i], bMatched[j] = true, true
				matches++
				break
			}
		}
	}
	if matches == 0 {
		return 0
	}
	transposed, j := 0, 0
	for i, r := range a {
		if !aMatched[i] {
			continue
		}
		for !bMatched[j] {
			j++
		}
		if b[j] != r {
			transposed++
		}
		j++
	}
	m := float64(matches)
	jaro := (m/float64(len(a)) + m/float64(len(b)) + (m-float64(transposed/2))/m) / 3
	if jaro <= winklerThreshold {
		return jaro
	}
	prefix := 0
	for prefix < winklerPrefix && prefix < len(a) && a[prefix] == b[prefix] {
		prefix++
	}
	return jaro + float64(prefix)*winklerScale*(1-jaro)
}
