package clientcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sharenote/sharenote/libs/cli"
)

// Everything the client prints passes through here: file names, reference targets and
// paths come from a vault that may be someone else's, and messages and titles from the
// server, so any of them may hold an escape sequence that would drive the terminal (set
// its title, clear it, rewrite what was printed) or bidi controls that make a name read
// as another. Such a string is printed quoted, as a Go string literal.

// acts reports whether r would act on a terminal rather than show as itself: the C0
// controls (tab and newline among them: in a field they would forge another column or
// line), DEL, the C1 controls, the line and paragraph separators, the bidi controls, and
// a byte that is not UTF-8 (decoded as utf8.RuneError).
func acts(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f, r == utf8.RuneError:
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f', r == '\u2028', r == '\u2029',
		r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// printable is s as it may be printed as one field: s itself when no character of it
// acts on a terminal, else s quoted ("evil\x1b[2J.md"). A printable string is its own
// printable form, so a string built of printable parts passes through unchanged.
func printable(s string) string {
	if strings.IndexFunc(s, acts) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// printableLines is text of several lines (a message, a note) as it may be printed: a
// line that holds a character that acts on a terminal, a tab aside, is quoted.
func printableLines(s string) string {
	if strings.IndexFunc(s, actsInText) < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.IndexFunc(l, actsInText) >= 0 {
			lines[i] = strconv.Quote(l)
		}
	}
	return strings.Join(lines, "\n")
}

// actsInText is acts, less the newline and the tab that lay text out.
func actsInText(r rune) bool { return r != '\n' && r != '\t' && acts(r) }

// printableArgs returns args with each string, error and fmt.Stringer printable (an
// error's lines each); numbers and the like are left to the format.
func printableArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = printable(v)
		case error:
			out[i] = printableLines(v.Error())
		case fmt.Stringer:
			out[i] = printable(v.String())
		default:
			out[i] = a
		}
	}
	return out
}

// sprintf is fmt.Sprintf with its arguments printable; the format is the client's own.
func sprintf(format string, args ...any) string {
	return fmt.Sprintf(format, printableArgs(args)...)
}

// fprintf is fmt.Fprintf with its arguments printable; the format is the client's own.
func fprintf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, printableArgs(args)...)
}

// printableError is an error whose message is printed printable: what a command returns,
// which the program prints (cli.Program.Main), may carry a path or the server's message.
type printableError struct{ err error }

func (e printableError) Error() string { return printableLines(e.err.Error()) }
func (e printableError) Unwrap() error { return e.err }

// printableErrors makes the errors of a command's run printable.
func printableErrors(run func(ctx context.Context, env cli.Env, args []string) error) func(ctx context.Context, env cli.Env, args []string) error {
	return func(ctx context.Context, env cli.Env, args []string) error {
		if err := run(ctx, env, args); err != nil {
			return printableError{err}
		}
		return nil
	}
}

// jsonPrintable escapes, in JSON text, the characters that act on a terminal and that
// encoding/json leaves as they are (DEL, the C1 and bidi controls): inside a string,
// where alone they can occur, \uXXXX is the same character to a JSON reader.
func jsonPrintable(b []byte) []byte {
	if bytes.IndexFunc(b, func(r rune) bool { return r != '\n' && acts(r) }) < 0 {
		return b
	}
	var out bytes.Buffer
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != '\n' && acts(r) && r != utf8.RuneError {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.Bytes()
}
