package render

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/dlclark/regexp2/v2"
	"github.com/dlclark/regexp2/v2/syntax"
)

// chroma's RegexLexer tries the rules of its state one after another at each position of
// the code, each with a call of regexp2 that costs about half a microsecond whether it
// matches or not: a 6-line Go block took about 750 tries for its 51 tokens. Most rules
// cannot match at a given position, since their first character differs. regexp2 knows
// each pattern's possible first characters (it skips positions without them when it
// searches), but does not use them for an anchored match, which is all a lexer makes.
// tokenise runs chroma's own rules in a copy of chroma's own loop (LexerState.Iterator)
// and tries only the rules whose first characters allow the position's character: 71
// tries for that block. TestHighlightingIsChromas holds its tokens to chroma's on
// chroma's corpus.

// fastLexer is a RegexLexer's rules compiled again, with each rule's first characters.
// A lexer's rules are thus compiled twice (chroma compiles its own when asked for them),
// once per process and lexer: chroma has about 250.
type fastLexer struct {
	lexer *chroma.RegexLexer
	rules chroma.CompiledRules
	// first are the rules' first characters, by state, in the order of rules[state].
	first map[string][]firstChars
}

// firstChars are the characters a match of rule can start with. A nil set lets every
// character through: a rule that may match the empty string, or whose pattern regexp2's
// analysis leaves open. A rule a mutator put in place of rule (Raku's lexer compiles some
// as it goes) is tried at every position.
type firstChars struct {
	rule *chroma.CompiledRule
	set  *syntax.Prefix
}

// fastLexers are the lexers compiled so far, by their RegexLexer.
var fastLexers sync.Map // *chroma.RegexLexer → *fastLexer or error

// tokenise is lexer.Tokenise(nil, text), faster for a RegexLexer.
func tokenise(lexer chroma.Lexer, text string) (chroma.Iterator, error) {
	r, ok := lexer.(*chroma.RegexLexer)
	if !ok {
		return lexer.Tokenise(nil, text)
	}
	v, ok := fastLexers.Load(r)
	if !ok {
		f, err := compileFast(r)
		if err != nil {
			v = err
		} else {
			v = f
		}
		v, _ = fastLexers.LoadOrStore(r, v)
	}
	switch v := v.(type) {
	case *fastLexer:
		return v.tokenise(text), nil
	default:
		return lexer.Tokenise(nil, text)
	}
}

// compileFast compiles r's rules as chroma's RegexLexer does (fetchRules, maybeCompile).
func compileFast(r *chroma.RegexLexer) (*fastLexer, error) {
	raw, err := r.Rules()
	if err != nil {
		return nil, err
	}
	config := r.Config()
	flags := ""
	if !config.NotMultiline {
		flags += "m"
	}
	if config.CaseInsensitive {
		flags += "i"
	}
	if config.DotAll {
		flags += "s"
	}
	f := &fastLexer{lexer: r, rules: chroma.CompiledRules{}, first: map[string][]firstChars{}}
	prefixes := map[*chroma.CompiledRule]*syntax.Prefix{}
	for state, rules := range raw {
		f.rules[state] = nil
		for i, rule := range rules {
			pattern := "(?:" + rule.Pattern + ")"
			if flags != "" {
				pattern = "(?" + flags + ")" + pattern
			}
			pattern = `\G` + pattern
			re, err := regexp2.Compile(pattern)
			if err != nil {
				return nil, fmt.Errorf("failed to compile rule %s.%d: %w", state, i, err)
			}
			re.MatchTimeout = 250 * time.Millisecond // as chroma sets it
			c := &chroma.CompiledRule{Rule: rule, Regexp: re}
			f.rules[state] = append(f.rules[state], c)
			prefixes[c] = firstCharSet(pattern)
		}
	}
	if err := mutateLexer(f.rules); err != nil {
		return nil, err
	}
	for state, rules := range f.rules {
		first := make([]firstChars, len(rules))
		for i, rule := range rules {
			first[i] = firstChars{rule, prefixes[rule]}
		}
		f.first[state] = first
	}
	return f, nil
}

// mutateLexer applies the rules' compile-time mutators (Include, Combined) as chroma's
// RegexLexer does: one at a time, looking again from the start after each, since each
// changes the rules.
func mutateLexer(rules chroma.CompiledRules) error {
	for {
		state, i, m := lexerMutator(rules)
		if m == nil {
			return nil
		}
		if err := m.MutateLexer(rules, state, i); err != nil {
			return err
		}
	}
}

// lexerMutator finds a rule with a compile-time mutator: its state, index and mutator.
func lexerMutator(rules chroma.CompiledRules) (string, int, chroma.LexerMutator) {
	for state, rs := range rules {
		for i, rule := range rs {
			if m, ok := rule.Mutator.(chroma.LexerMutator); ok {
				return state, i, m
			}
		}
	}
	return "", 0, nil
}

// firstCharSet is the set of characters a match of pattern can start with, nil when any.
func firstCharSet(pattern string) *syntax.Prefix {
	tree, err := syntax.Parse(pattern, syntax.ParseOptions{})
	if err != nil {
		return nil
	}
	code, err := syntax.Write(tree)
	if err != nil || code.FcPrefix == nil {
		return nil
	}
	code.PrepareCharSetASCIIBitmaps()
	return code.FcPrefix
}

// fastState is one lexing of text: chroma's LexerState and what its Iterator keeps in
// unexported fields.
type fastState struct {
	*chroma.LexerState
	f         *fastLexer
	end       int
	iterators []chroma.Iterator
}

// rootState is the state a lexing starts in (chroma's default TokeniseOptions.State).
const rootState = "root"

func (f *fastLexer) tokenise(text string) chroma.Iterator {
	text = ensureLF(text)
	added := 0
	if f.lexer.Config().EnsureNL && !strings.HasSuffix(text, "\n") {
		text += "\n"
		added = 1
	}
	runes := []rune(text)
	s := &fastState{
		LexerState: &chroma.LexerState{
			Lexer:          f.lexer,
			Registry:       lexers.GlobalLexerRegistry, // where every lexer here comes from
			Text:           runes,
			Stack:          []string{rootState},
			Rules:          f.rules,
			MutatorContext: map[any]any{},
		},
		f:   f,
		end: len(runes) - added, // as chroma: no token starts at the newline it adds
	}
	return s.next
}

// next is chroma's LexerState.Iterator with the rules filtered by their first characters.
// A rule that only emits its whole match as one token type, with no mutator, gives its
// token at once: what chroma's emitter would give through an iterator of its own, without
// the groups nobody reads.
func (l *fastState) next() chroma.Token {
	for l.Pos < l.end && len(l.Stack) > 0 {
		if t, ok := l.drain(); ok {
			return t
		}
		l.State = l.Stack[len(l.Stack)-1]
		rules, ok := l.Rules[l.State]
		if !ok {
			panic("unknown state " + l.State)
		}
		index, rule, match := l.match(rules)
		if match == nil {
			// As chroma (and Pygments) do: an unmatched newline empties the stack.
			if l.Text[l.Pos] == '\n' && l.State != rootState {
				l.Stack = []string{rootState}
				continue
			}
			l.Pos++
			return chroma.Token{Type: chroma.Error, Value: string(l.Text[l.Pos-1 : l.Pos])}
		}
		l.Rule = index
		l.Pos += match.RuneLength
		if t, plain := rule.Type.(chroma.TokenType); plain && rule.Mutator == nil {
			if token := (chroma.Token{Type: t, Value: match.String()}); t != chroma.Ignore && token != chroma.EOF {
				return token
			}
			continue
		}
		l.Groups, l.NamedGroups = groups(match)
		if rule.Mutator != nil {
			if err := rule.Mutator.Mutate(l.LexerState); err != nil {
				panic(err)
			}
		}
		if rule.Type != nil {
			l.iterators = append(l.iterators, rule.Type.Emit(l.Groups, l.LexerState))
		}
	}
	if t, ok := l.drain(); ok {
		return t
	}
	if l.Pos != len(l.Text) && len(l.Stack) == 0 {
		value := string(l.Text[l.Pos:])
		l.Pos = len(l.Text)
		return chroma.Token{Type: chroma.Error, Value: value}
	}
	return chroma.EOF
}

// drain returns the next token of the emitters' iterators, if any is left.
func (l *fastState) drain() (chroma.Token, bool) {
	for len(l.iterators) > 0 {
		n := len(l.iterators) - 1
		t := l.iterators[n]()
		if t.Type == chroma.Ignore {
			continue
		}
		if t == chroma.EOF {
			l.iterators = l.iterators[:n]
			continue
		}
		return t, true
	}
	return chroma.Token{}, false
}

// match is chroma's matchRules, skipping the rules that cannot start with the
// position's character. A lexer whose mutators change its rules as it goes (Raku's)
// changes them for every lexing of the process, as it does chroma's own.
func (l *fastState) match(rules []*chroma.CompiledRule) (int, *chroma.CompiledRule, *regexp2.Match) {
	first := l.f.first[l.State]
	ch := l.Text[l.Pos]
	for i, rule := range rules {
		if i < len(first) && first[i].rule == rule && first[i].set != nil && !first[i].set.PrefixSet.CharIn(ch) {
			continue
		}
		match, err := rule.Regexp.FindRunesMatchStartingAt(l.Text, l.Pos)
		if match != nil && err == nil && match.RuneIndex == l.Pos {
			return i, rule, match
		}
	}
	return 0, nil, nil
}

// groups are a match's groups as chroma's matchRules gives them: by number and by name.
func groups(match *regexp2.Match) ([]string, map[string]string) {
	matched := match.Groups()
	groups := make([]string, len(matched))
	named := make(map[string]string, len(matched))
	for i, g := range matched {
		groups[i] = g.String()
		named[g.Name] = groups[i]
	}
	return groups, named
}

// ensureLF is chroma's: \r\n and \r become \n.
func ensureLF(text string) string {
	if !strings.Contains(text, "\r") {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}
