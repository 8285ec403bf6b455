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
// (nothing in common) to 1 (equal). Words of up to 64 runes, which is every
// word of the list, are compared with bit sets and no allocation.
func jaroWinkler(a, b []rune) float64 { return jaroSim(a, b, true) }

// wordSimilarity is the similarity of two words as screening counts it:
// Jaro-Winkler, but without the common-prefix bonus when the words differ
// in length by two runes or more. The bonus rewards a shared beginning,
// which for words of about the same length means the same name spelt
// differently; for a short word and a longer one it mostly means that the
// longer one is another name built on it ("ASAD" and "ASADULA", "NASER" and
// "NASRALA").
func wordSimilarity(a, b []rune) float64 {
	return jaroSim(a, b, abs(len(a)-len(b)) < 2)
}

func jaroSim(a, b []rune, winkler bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		if len(a) == len(b) {
			return 1
		}
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	var matches, transposed int
	if len(b) <= 64 {
		matches, transposed = jaroMatchesShort(a, b)
	} else {
		matches, transposed = jaroMatchesLong(a, b)
	}
	if matches == 0 {
		return 0
	}
	m := float64(matches)
	jaro := (m/float64(len(a)) + m/float64(len(b)) + (m-float64(transposed/2))/m) / 3
	if jaro <= winklerThreshold || !winkler {
		return jaro
	}
	prefix := 0
	for prefix < winklerPrefix && prefix < len(a) && a[prefix] == b[prefix] {
		prefix++
	}
	return jaro + float64(prefix)*winklerScale*(1-jaro)
}

// jaroWindow is how far apart two equal runes may be to count as matching.
func jaroWindow(longer int) int { return max(0, longer/2-1) }

// jaroMatchesShort counts the matching runes of a and b (len(a) <= len(b) <=
// 64) and the matches out of order, tracking matched positions in bit sets.
func jaroMatchesShort(a, b []rune) (matches, transposed int) {
	window := jaroWindow(len(b))
	var aMatched, bMatched uint64
	for i, r := range a {
		lo, hi := max(0, i-window), min(len(b), i+window+1)
		for j := lo; j < hi; j++ {
			if bMatched&(1<<j) == 0 && b[j] == r {
				aMatched |= 1 << i
				bMatched |= 1 << j
				matches++
				break
			}
		}
	}
	j := 0
	for i, r := range a {
		if aMatched&(1<<i) == 0 {
			continue
		}
		for bMatched&(1<<j) == 0 {
			j++
		}
		if b[j] != r {
			transposed++
		}
		j++
	}
	return matches, transposed
}

// jaroMatchesLong is jaroMatchesShort for words longer than 64 runes.
func jaroMatchesLong(a, b []rune) (matches, transposed int) {
	window := jaroWindow(len(b))
	aMatched, bMatched := make([]bool, len(a)), make([]bool, len(b))
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
	j := 0
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
	return matches, transposed
}
