package render

import (
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// sink is the writer of one pass. It keeps at most limit bytes, and it carries the pass's
// state to the node renderers, which goldmark hands nothing but the writer.
type sink struct {
	*run
	buf      []byte
	limit    int   // the cap of the unsanitized HTML
	err      error // errTooLarge or the context's error: the pass is over
	plain    map[*ast.FencedCodeBlock]bool
	allPlain bool

	fallbacks []Fallback
	seen      map[Fallback]bool
	gen       placeholders // the generated markup of the pass
	// highlighted is the highlighted code of the pass, which the sanitizer need not read:
	// chroma writes nothing but its own classes and escaped text. held is its bytes.
	highlighted placeholders
	held        int
	raw         bool // some of the note's own HTML was kept (keepHTML)
}

// check reports whether the pass is over, noticing a done context.
func (s *sink) check() error {
	if s.err == nil {
		select {
		case <-s.ctx.Done():
			s.err = s.ctx.Err()
		default:
		}
	}
	return s.err
}

// room reports whether n more bytes fit, ending the pass when they do not.
func (s *sink) room(n int) bool {
	if s.err == nil && len(s.buf)+s.held+n > s.limit {
		s.err = errTooLarge
	}
	return s.err == nil
}

func (s *sink) Write(p []byte) (int, error) {
	if !s.room(len(p)) {
		return 0, s.err
	}
	s.buf = append(s.buf, p...)
	return len(p), nil
}

func (s *sink) WriteString(p string) (int, error) {
	if !s.room(len(p)) {
		return 0, s.err
	}
	s.buf = append(s.buf, p...)
	return len(p), nil
}

func (s *sink) WriteByte(c byte) error {
	if !s.room(1) {
		return s.err
	}
	s.buf = append(s.buf, c)
	return nil
}

func (s *sink) WriteRune(c rune) (int, error) {
	n := utf8.RuneLen(c)
	if n < 0 {
		n = utf8.RuneLen(utf8.RuneError)
	}
	if !s.room(n) {
		return 0, s.err
	}
	s.buf = utf8.AppendRune(s.buf, c)
	return n, nil
}

// Available is the room left under the cap.
func (s *sink) Available() int { return s.limit - len(s.buf) - s.held }

// Buffered is zero: everything written is in the result at once.
func (s *sink) Buffered() int { return 0 }

// Flush reports why the pass ended early, if it did.
func (s *sink) Flush() error { return s.err }

// fallback records a block shown as plain text, once per reference and reason.
func (s *sink) fallback(ref, reason string) {
	f := Fallback{Ref: ref, Reason: reason}
	if len(s.fallbacks) >= maxFallbacks || s.seen[f] {
		return
	}
	s.seen[f] = true
	s.fallbacks = append(s.fallbacks, f)
}
