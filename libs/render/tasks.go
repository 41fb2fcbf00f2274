package render

import (
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// tasks is the goldmark extension for Obsidian's tasks: a list item that starts with
// "[c]" and white space (or nothing) is a task, open for a space and done for any other
// character c, as Obsidian's reading view shows it. Its <li> gets the classes
// "task-list-item" and, when done, "is-checked", and a done task keeps c in data-task
// when c is a letter, digit, punctuation or symbol (see taskChar), as Obsidian's themes
// read it to draw "[?]", "[-]" or "[>]" their own way. It replaces goldmark's GFM task
// list, which knows only " ", "x" and "X".
type tasks struct{}

var kindTask = ast.NewNodeKind("Task")

// taskNode is the checkbox of a task.
type taskNode struct {
	ast.BaseInline
	Char rune
}

func (n *taskNode) Kind() ast.NodeKind { return kindTask }

func (n *taskNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Char": string(n.Char)}, nil)
}

// done reports whether the task is done: its character is not a space.
func (n *taskNode) done() bool { return n.Char != ' ' }

// taskChar reports whether c is kept as a done task's data-task: one letter, digit,
// punctuation or symbol. The sanitizer's policy allows data-task with this value only.
func taskChar(c rune) bool {
	return unicode.In(c, unicode.L, unicode.N, unicode.P, unicode.S)
}

func (tasks) Trigger() []byte { return []byte{'['} }

// Parse reads the task marker at the start of a list item's first block, before any
// other inline parser (a "[?]" could be a shortcut link).
func (tasks) Parse(parent ast.Node, block text.Reader, _ parser.Context) ast.Node {
	item, ok := parent.Parent().(*ast.ListItem)
	if !ok || item.FirstChild() != parent || parent.HasChildren() {
		return nil
	}
	line, _ := block.PeekLine()
	c, size := utf8.DecodeRune(line[min(1, len(line)):])
	if c == utf8.RuneError || c == '\n' || c == '\r' || 1+size >= len(line) || line[1+size] != ']' {
		return nil
	}
	rest := line[2+size:]
	if len(rest) > 0 && !util.IsSpace(rest[0]) {
		return nil
	}
	skip := 2 + size
	for skip < len(line) && (line[skip] == ' ' || line[skip] == '\t') {
		skip++
	}
	block.Advance(skip)
	n := &taskNode{Char: c}
	classes := "task-list-item"
	if n.done() {
		classes += " is-checked"
		if taskChar(c) {
			item.SetAttributeString("data-task", []byte(string(c)))
		}
	}
	item.SetAttributeString("class", []byte(classes))
	return n
}

func (tasks) Extend(m goldmark.Markdown) {
	// Before every other inline parser: goldmark's GFM task list had priority 0 too.
	addInline(m, tasks{}, 0)
}

func (tasks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindTask, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if n.(*taskNode).done() {
			_, _ = w.WriteString(`<input checked="" disabled="" type="checkbox"> `)
		} else {
			_, _ = w.WriteString(`<input disabled="" type="checkbox"> `)
		}
		return ast.WalkContinue, nil
	})
}
