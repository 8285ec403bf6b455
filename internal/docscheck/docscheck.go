// Package docscheck checks payd's Markdown documentation: no path of the
// machine it was written on (a home or temporary directory, a workspace) and
// no relative link to a file or heading that does not exist.
package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// machinePath matches an absolute path under a directory that belongs to one
// machine: a workspace, a temporary directory or a home directory. It must
// follow the start of a line or a character that can precede a path (space,
// quote, backtick, parenthesis, '=' or ':' as in sqlite:/tmp/x.db).
var machinePath = regexp.MustCompile("(?:^|[\\s\"'`(=:,\\[])((?:/work|/tmp|/root|/home/[a-z_][a-z0-9_-]*|/Users/[^/\\s]+|/var/folders|/private/var)/[^\\s\"'`)]*)")

// link matches an inline Markdown link or image: [text](target) or
// [text](target "title").
var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// heading matches an ATX heading and captures its text.
var heading = regexp.MustCompile(`^#{1,6} +(.*?)#*\s*$`)

// A Problem is one finding, with the file and line it is on.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// MachinePaths returns the machine paths in text, one Problem per path.
func MachinePaths(file, text string) []Problem {
	var out []Problem
	for i, line := range strings.Split(text, "\n") {
		for _, m := range machinePath.FindAllStringSubmatch(line, -1) {
			out = append(out, Problem{file, i + 1, fmt.Sprintf("machine path %q", m[1])})
		}
	}
	return out
}

// Links returns the relative links of the Markdown file at path (read from
// text) whose target file does not exist, or whose #fragment names no heading
// of the target Markdown file. Links to other sites (a scheme such as https:
// or mailto:) are not followed. root bounds the repository: a link leaving it
// is a problem too.
func Links(root, path, text string) []Problem {
	var out []Problem
	rel, _ := filepath.Rel(root, path)
	inFence := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, ":") && !strings.HasPrefix(target, "#") {
				continue // https:, mailto:, ...
			}
			file, frag, _ := strings.Cut(target, "#")
			if file == "" {
				if !Anchors(text)[frag] {
					out = append(out, Problem{rel, i + 1, fmt.Sprintf("link %q: no heading #%s in this file", target, frag)})
				}
				continue
			}
			dest := filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
			if r, err := filepath.Rel(root, dest); err != nil || strings.HasPrefix(r, "..") {
				out = append(out, Problem{rel, i + 1, fmt.Sprintf("link %q leaves the repository", target)})
				continue
			}
			if _, err := os.Stat(dest); err != nil {
				out = append(out, Problem{rel, i + 1, fmt.Sprintf("link %q: no such file", target)})
				continue
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			b, err := os.ReadFile(dest)
			if err != nil {
				out = append(out, Problem{rel, i + 1, fmt.Sprintf("link %q: %v", target, err)})
				continue
			}
			if !Anchors(string(b))[frag] {
				out = append(out, Problem{rel, i + 1, fmt.Sprintf("link %q: no heading #%s there", target, frag)})
			}
		}
	}
	return out
}

// Anchors returns the fragment names of a Markdown file's headings as GitHub
// forms them: lower case, punctuation dropped, spaces as hyphens, a repeated
// name numbered -1, -2, ...
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		m := heading.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		title := strings.TrimSpace(m[1])
		slug := Slug(title)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Slug is GitHub's anchor of a heading's text.
func Slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case unicode.IsLetter(r), unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
