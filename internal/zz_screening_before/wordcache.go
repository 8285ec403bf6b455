package screening

import (
	"slices"
	"sync"
)

// wordCacheSize bounds the words a list remembers. Payee names are made of a
// small vocabulary (Mohamed, Ali, Hassan, Fatouma, ...), so a few thousand
// words cover most screenings; when the cache is full it is emptied and
// refills with the words in use.
const wordCacheSize = 4096

// closeTerm is a listed word close to a screened word, with their similarity.
type closeTerm struct {
	term int32
	sim  float32
}

// wordCache remembers, per screened word, the listed words close to it. It
// belongs to one List, so a reload starts with an empty cache.
type wordCache struct {
	mu    sync.Mutex
	words map[string][]closeTerm
}

// get returns the close terms remembered for word.
func (c *wordCache) get(word string) ([]closeTerm, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	near, ok := c.words[word]
	return near, ok
}

// put remembers a copy of the close terms of word.
func (c *wordCache) put(word string, near []closeTerm) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.words == nil || len(c.words) >= wordCacheSize {
		c.words = make(map[string][]closeTerm)
	}
	c.words[word] = slices.Clone(near)
}

// reset forgets every word.
func (c *wordCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.words = nil
}
