package note_test

import (
	"go/build"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
)

// The note domain is small use cases over small ports (core.go): none of them may grow
// back into one object that does everything.
func TestUseCasesAndPortsStaySmall(t *testing.T) {
	const most = 8
	for _, uc := range []any{&note.Publisher{}, &note.Reader{}, &note.Cards{}, &note.Images{}, &note.Renders{},
		&note.History{}, &note.Reaper{}} {
		if n := reflect.TypeOf(uc).NumMethod(); n > most {
			t.Errorf("%T has %d exported methods, more than %d", uc, n, most)
		}
	}
	for _, port := range []any{(*note.LinkStore)(nil), (*note.ViewStore)(nil), (*note.PublishStore)(nil),
		(*note.UploadStore)(nil), (*note.ReadStore)(nil), (*note.CardStore)(nil), (*note.ImageStore)(nil),
		(*note.RenderStore)(nil), (*note.HistoryStore)(nil), (*note.ReapStore)(nil), (*note.Renderer)(nil),
		(*note.Notifier)(nil)} {
		if typ := reflect.TypeOf(port).Elem(); typ.NumMethod() > most {
			t.Errorf("%s has %d methods, more than %d", typ, typ.NumMethod(), most)
		}
	}
}

// The object store has one owner, the domain: the stores keep rows, and no rule of what
// to do with the objects lives in them.
func TestNoStoreImportsTheObjectStore(t *testing.T) {
	for _, dir := range []string{"notedb", "accountdb"} {
		bp, err := build.ImportDir(filepath.Join("..", dir), 0)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(bp.Imports, module+"libs/blob") {
			t.Errorf("libs/%s imports libs/blob", dir)
		}
	}
}
