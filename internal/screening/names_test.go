package screening

import (
	"math/rand/v2"
	"strings"
)

// latencyNames returns n names to screen: half derived from listed names,
// half invented from common given names and surnames of the region.
func latencyNames(l *List, n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	given := []string{"Mohamed", "Ahmed", "Ali", "Hassan", "Fatouma", "Amina", "Abdi", "Omar", "Ismail",
		"Houssein", "Kadra", "Youssouf", "Abebe", "Tigist", "Dawit", "Jean", "Marie", "Pierre", "Khalid", "Layla"}
	family := []string{"Farah", "Guelleh", "Robleh", "Djama", "Waberi", "Bouh", "Tesfaye", "Bekele", "Haile",
		"Dubois", "Moreau", "Al-Rashid", "Haddad", "Warsame", "Jama", "Egal", "Daoud", "Kamil", "Okieh", "Dabar"}
	out := make([]string, 0, n)
	for len(out) < n {
		if len(out)%2 == 0 {
			e := l.entries[rng.IntN(len(l.entries))]
			out = append(out, perturb(rng, e.Name))
			continue
		}
		words := []string{given[rng.IntN(len(given))]}
		for range 1 + rng.IntN(3) {
			words = append(words, family[rng.IntN(len(family))])
		}
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// perturb applies a random realistic change to a listed name: a typo, a
// dropped word, swapped words, or none.
func perturb(rng *rand.Rand, name string) string {
	words := strings.Fields(strings.ReplaceAll(name, ",", ""))
	switch rng.IntN(4) {
	case 0: // typo
		k := rng.IntN(len(words))
		if w := []rune(words[k]); len(w) > 2 {
			w[1+rng.IntN(len(w)-1)] = rune('a' + rng.IntN(26))
			words[k] = string(w)
		}
	case 1: // dropped word
		if len(words) > 2 {
			i := rng.IntN(len(words))
			words = append(words[:i], words[i+1:]...)
		}
	case 2: // swapped order
		rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	}
	return strings.Join(words, " ")
}
