package render

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
)

// delimiterList follows goldmark's list of a block's delimiters as the block is parsed,
// to tell what each closing delimiter will cost: goldmark matches the closing ones (in
// parser.ProcessDelimiters, once the block is parsed) from first to last, each by
// looking back over the list for the nearest opening one of its character that the
// rule of three allows, and removes what lies between. A closing one that matches
// nothing costs a look over the whole list; that is how 64 KiB of "*a_" took 3.8 s.
type delimiterList struct {
	list []listed
	// openers holds the indexes in list of the opening delimiters, by character, the
	// remainder of the run's length by three and whether they can close too: the
	// nearest one of a kind is last.
	openers [4][3][2][]int
	// fences are the indexes in list of the open inline footnotes (see footnotes): when
	// one closes, goldmark matches the closing delimiters within it with the opening
	// ones within it only. (At the end of a block, those of a footnote never closed
	// may match across: the list then holds more than goldmark's, which charges more,
	// never less.)
	fences []int
}

// reset empties l, keeping the room of its slices.
func (l *delimiterList) reset() {
	l.list, l.fences = l.list[:0], l.fences[:0]
	for c := range l.openers {
		for m := range l.openers[c] {
			for k := range l.openers[c][m] {
				l.openers[c][m][k] = l.openers[c][m][k][:0]
			}
		}
	}
}

// listed is a delimiter run in a delimiterList.
type listed struct {
	c      int // the index of its character in delimiterChars
	length int // the characters not yet matched
}

const delimiterChars = "*_~="

// push adds the run d (its character one of delimiterChars) and matches it as goldmark
// will, and returns what that costs goldmark, in list entries looked over.
func (l *delimiterList) push(d *parser.Delimiter) int {
	c := strings.IndexByte(delimiterChars, d.Char)
	cost, length := 0, d.Length
	for length > 0 && d.CanClose {
		at := l.nearest(c, d)
		if at < 0 {
			cost += len(l.list) // a look over the whole list, for nothing
			break
		}
		cost += len(l.list) - at
		consume := 1
		if l.list[at].length >= 2 && length >= 2 {
			consume = 2
		}
		length -= consume
		l.truncate(at + 1) // goldmark removes the delimiters between the two
		if l.list[at].length -= consume; l.list[at].length <= 0 {
			l.truncate(at)
		}
	}
	if length > 0 && (d.CanOpen || d.CanClose) {
		l.list = append(l.list, listed{c: c, length: length})
		if d.CanOpen {
			kind := &l.openers[c][d.OriginalLength%3][b2i(d.CanClose)]
			*kind = append(*kind, len(l.list)-1)
		}
	}
	return cost
}

// nearest is the index of the nearest opener in the list that the run d (of the
// character c) may close by the rule of three that goldmark applies
// (parser.Delimiter.CalcComsumption), or -1.
func (l *delimiterList) nearest(c int, d *parser.Delimiter) int {
	at := -1
	for rest := range 3 {
		for closes := range 2 {
			if (closes == 1 || d.CanOpen) && (rest+d.OriginalLength)%3 == 0 && d.OriginalLength%3 != 0 {
				continue
			}
			if kind := l.openers[c][rest][closes]; len(kind) > 0 {
				at = max(at, kind[len(kind)-1])
			}
		}
	}
	if k := len(l.fences); k > 0 && at < l.fences[k-1] {
		return -1
	}
	return at
}

// fence adds the opening "^[" of an inline footnote, which goldmark's list holds as a
// delimiter that neither opens nor closes, and returns its index for unfence.
func (l *delimiterList) fence() int {
	l.list = append(l.list, listed{c: -1})
	l.fences = append(l.fences, len(l.list)-1)
	return len(l.list) - 1
}

// unfence closes the inline footnote whose fence is at index at: goldmark takes the
// delimiters within it, and its own, out of the list.
func (l *delimiterList) unfence(at int) { l.truncate(at) }

// truncate keeps the first size entries of the list.
func (l *delimiterList) truncate(size int) {
	l.list = l.list[:min(size, len(l.list))]
	for c := range l.openers {
		for rest := range l.openers[c] {
			for closes := range l.openers[c][rest] {
				kind := l.openers[c][rest][closes]
				for len(kind) > 0 && kind[len(kind)-1] >= size {
					kind = kind[:len(kind)-1]
				}
				l.openers[c][rest][closes] = kind
			}
		}
	}
	for len(l.fences) > 0 && l.fences[len(l.fences)-1] >= size {
		l.fences = l.fences[:len(l.fences)-1]
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runOf is the delimiter processor that parser.ScanDelimiter needs to measure a run of
// c; bounds only reads whether the run can open or close.
type runOf byte

func (r runOf) IsDelimiter(b byte) bool { return b == byte(r) }

func (runOf) CanOpenCloser(opener, closer *parser.Delimiter) bool { return opener.Char == closer.Char }

func (runOf) OnMatch(int) ast.Node { return nil }
