package noteapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"strings"
	"testing"
)

// A note body is decoded once, by one decoder: decodeBody is called once by ReadDraft (a
// publish, in any of its three formats) and once by ReadPatch, outside any loop, and
// nowhere else in the package.
func TestANoteBodyEntersTheDecoderOnce(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var loops []ast.Node
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ForStmt, *ast.RangeStmt, *ast.FuncLit:
					loops = append(loops, n)
				case *ast.CallExpr:
					if !callsDecodeBody(n) {
						return true
					}
					calls[fn.Name.Name]++
					for _, l := range loops {
						if l.Pos() <= n.Pos() && n.End() <= l.End() {
							t.Errorf("%s: %s calls decodeBody inside a loop or a function literal", fset.Position(n.Pos()), fn.Name.Name)
						}
					}
				}
				return true
			})
		}
	}
	if want := map[string]int{"ReadDraft": 1, "ReadPatch": 1}; !maps.Equal(calls, want) {
		t.Errorf("decodeBody is called by %v, want %v", calls, want)
	}
}

// callsDecodeBody reports whether call is decodeBody[T](…).
func callsDecodeBody(call *ast.CallExpr) bool {
	fun := call.Fun
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	id, ok := fun.(*ast.Ident)
	return ok && id.Name == "decodeBody"
}
