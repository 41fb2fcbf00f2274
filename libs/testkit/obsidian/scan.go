package obsidian

import (
	"net/url"
	"regexp"
	"strings"
)

// Link is one link or embed of a note, as written and as Obsidian resolves it.
type Link struct {
	From     string // path of the linking note
	Line     int    // 1-based line of the note (frontmatter lines count)
	Raw      string // as written: "[[Plan|the plan]]", "![[x.png|300]]", "[x](Plan.md)"
	Markdown bool   // a Markdown link or image rather than a wikilink
	Embed    bool   // written with a leading '!'
	Target   string // the name part, percent-decoded; "" for a link within the note
	Fragment string // what follows the first '#', without it; "" when none
	Shown    string // the text Obsidian shows for it; "" for an embed without one
	Size     string // "300" or "300x200" after the '|' of an attachment embed

	// Obsidian's resolution, over every file of the vault (published or not).
	ResolvedPath string // "" when the link resolves to nothing
	Rule         Rule
	Attachment   bool // resolved to a file that is not a note
	// HeadingIndex is the index in the target's Headings of the heading the fragment names,
	// -1 when the fragment names no heading (or none is found).
	HeadingIndex int
	Block        string // the block id the fragment names, when the target has it
	// PublishedPath is the resolution among the published notes (and every attachment):
	// what the page can link to. "" when nothing published matches.
	PublishedPath string
}

// Rule says which rule of docs/api.md "Vaults and links" resolved a link.
type Rule string

// The rules, in the order they are tried.
const (
	RuleNone  Rule = ""
	RuleSelf  Rule = "self"  // [[#Heading]], [[#^id]]: the linking note itself
	RulePath  Rule = "path"  // 1: a path relative to the note's folder, the root, attachments
	RuleName  Rule = "name"  // 2: a base name, with the tie-breaks
	RuleAlias Rule = "alias" // 3: an alias
)

// Resolved reports whether Obsidian resolves the link.
func (l Link) Resolved() bool { return l.ResolvedPath != "" }

// FragmentFound reports whether the fragment names a heading or block the target has.
func (l Link) FragmentFound() bool { return l.HeadingIndex >= 0 || l.Block != "" }

var (
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	blockRE   = regexp.MustCompile(`(?:^|\s)\^([A-Za-z0-9-]+)\s*$`)
	fenceRE   = regexp.MustCompile("^[ \t]*(```+|~~~+)")
	quoteRE   = regexp.MustCompile(`^[ \t]*(?:>[ \t]?)+`)
	sizeRE    = regexp.MustCompile(`^\s*\d+(x\d+)?\s*$`)
	schemeRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// scanNote reads the headings, block ids and links of a note's body, line by line, skipping
// fenced code, code spans and %%comments%%.
func scanNote(n *Note, body []byte) {
	var fence string // the opening fence while inside fenced code
	comment := false
	for i, line := range strings.Split(string(body), "\n") {
		line = strings.TrimSuffix(line, "\r")
		content := quoteRE.ReplaceAllString(line, "")
		if fence != "" {
			if m := fenceRE.FindStringSubmatch(content); m != nil && m[1][0] == fence[0] &&
				len(m[1]) >= len(fence) && strings.TrimSpace(content[len(m[0]):]) == "" {
				fence = ""
			}
			continue
		}
		if m := fenceRE.FindStringSubmatch(content); m != nil && !comment &&
			!(m[1][0] == '`' && strings.Contains(content[len(m[0]):], "`")) {
			fence = m[1]
			continue
		}
		var masked string
		masked, comment = mask(line, comment)
		scanLine(n, i+1, line, masked)
	}
}

// mask returns the line with code spans, comments and escaped characters replaced by
// spaces (byte for byte, so offsets stay), and whether a %%comment%% is still open after it.
func mask(line string, comment bool) (string, bool) {
	b := []byte(line)
	blank := func(from, to int) {
		for k := from; k < to; k++ {
			b[k] = ' '
		}
	}
	for i := 0; i < len(line); {
		switch {
		case comment:
			end := strings.Index(line[i:], "%%")
			if end < 0 {
				blank(i, len(line))
				return string(b), true
			}
			blank(i, i+end+2)
			i, comment = i+end+2, false
		case line[i] == '\\' && i+1 < len(line):
			blank(i, i+2)
			i += 2
		case line[i] == '`':
			run := 1
			for i+run < len(line) && line[i+run] == '`' {
				run++
			}
			end := closingRun(line, i+run, run)
			if end < 0 {
				i += run
				continue
			}
			blank(i, end+run)
			i = end + run
		case strings.HasPrefix(line[i:], "%%"):
			blank(i, i+2)
			i, comment = i+2, true
		default:
			i++
		}
	}
	return string(b), comment
}

// closingRun finds a run of exactly n backticks at or after from, or -1.
func closingRun(line string, from, n int) int {
	for j := from; j < len(line); {
		if line[j] != '`' {
			j++
			continue
		}
		k := j
		for k < len(line) && line[k] == '`' {
			k++
		}
		if k-j == n {
			return j
		}
		j = k
	}
	return -1
}

func scanLine(n *Note, lineNo int, line, masked string) {
	// The mask tells a heading from a '#' in code; the text is the line's, code and all.
	if m := headingRE.FindStringSubmatch(line); m != nil && headingRE.MatchString(masked) {
		n.Headings = append(n.Headings, Heading{Level: len(m[1]), Text: strings.TrimSpace(m[2])})
	}
	if m := blockRE.FindStringSubmatch(masked); m != nil {
		n.Blocks = append(n.Blocks, m[1])
	}
	masked = scanWikilinks(n, lineNo, line, masked)
	scanMarkdownLinks(n, lineNo, line, masked)
}

// scanWikilinks adds the line's [[…]] and ![[…]] and returns the mask with them blanked.
func scanWikilinks(n *Note, lineNo int, line, masked string) string {
	b := []byte(masked)
	for from := 0; ; {
		open := strings.Index(masked[from:], "[[")
		if open < 0 {
			break
		}
		open += from
		end := strings.Index(masked[open+2:], "]]")
		if end < 0 {
			break
		}
		end += open + 2
		start := open
		if open > 0 && masked[open-1] == '!' {
			start = open - 1
		}
		inner := strings.ReplaceAll(line[open+2:end], `\|`, "|")
		n.Links = append(n.Links, wikilink(n.Path, lineNo, line[start:end+2], inner, start < open))
		for k := start; k < end+2; k++ {
			b[k] = ' '
		}
		from = end + 2
	}
	return string(b)
}

func wikilink(from string, lineNo int, raw, inner string, embed bool) Link {
	l := Link{From: from, Line: lineNo, Raw: raw, Embed: embed, HeadingIndex: -1}
	target, shown, hasShown := strings.Cut(inner, "|")
	l.Target, l.Fragment, _ = strings.Cut(target, "#")
	l.Target = strings.TrimSpace(l.Target)
	switch {
	case embed && sizeRE.MatchString(shown):
		l.Size = shown
	case hasShown:
		l.Shown = shown
	case !embed:
		l.Shown = strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(target), "#", " > "), " > ")
	}
	return l
}

// scanMarkdownLinks adds the line's [text](dest) and ![alt](dest) whose destination is a
// path inside the vault (no scheme, not only a fragment).
func scanMarkdownLinks(n *Note, lineNo int, line, masked string) {
	for from := 0; ; {
		mid := strings.Index(masked[from:], "](")
		if mid < 0 {
			return
		}
		mid += from
		from = mid + 2
		open := openingBracket(masked, mid)
		destEnd, dest := destination(masked, line, mid+2)
		if open < 0 || destEnd < 0 {
			continue
		}
		from = destEnd
		start := open
		if open > 0 && masked[open-1] == '!' {
			start = open - 1
		}
		target, frag, _ := strings.Cut(dest, "#")
		if target == "" || schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
			continue
		}
		if t, err := url.PathUnescape(target); err == nil {
			target = t
		}
		if f, err := url.PathUnescape(frag); err == nil {
			frag = f
		}
		l := Link{From: n.Path, Line: lineNo, Raw: line[start:destEnd], Markdown: true,
			Embed: start < open, Target: target, Fragment: frag, Shown: line[open+1 : mid], HeadingIndex: -1}
		if l.Embed {
			l.Shown, l.Size, _ = strings.Cut(l.Shown, "|")
		}
		n.Links = append(n.Links, l)
	}
}

// maxSpan bounds how far a link's text or destination is looked for, so that a line of
// brackets costs linear time; no link of a real note comes near it.
const maxSpan = 2000

// openingBracket finds the '[' that the ']' at close closes, or -1.
func openingBracket(masked string, close int) int {
	depth := 0
	for i := close - 1; i >= 0 && i >= close-maxSpan; i-- {
		switch masked[i] {
		case ']':
			depth++
		case '[':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// destination reads a link destination starting at i (just after "]("), returning the index
// after the closing ')' and the destination without its title, or -1.
func destination(masked, line string, i int) (int, string) {
	if i < len(masked) && masked[i] == '<' {
		end := strings.IndexByte(masked[i:min(len(masked), i+maxSpan)], '>')
		if end < 0 || i+end+1 >= len(masked) {
			return -1, ""
		}
		close := strings.IndexByte(masked[i+end:], ')')
		if close < 0 {
			return -1, ""
		}
		return i + end + close + 1, line[i+1 : i+end]
	}
	depth, stop := 0, -1
	for j := i; j < len(masked) && j < i+maxSpan; j++ {
		switch c := masked[j]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ')':
			if stop < 0 {
				stop = j
			}
			return j + 1, strings.TrimSpace(line[i:stop])
		case (c == ' ' || c == '\t') && stop < 0:
			stop = j
		}
	}
	return -1, ""
}
