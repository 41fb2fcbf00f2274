package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
)

// A target is given a use case of the note domain only when its own Needs declare what
// the use case needs: one that renders without declaring the renderer fails the start,
// naming it, even in a process where another target declares it (the all-in-one).
func TestAUseCaseNeedsWhatItsTargetDeclares(t *testing.T) {
	b := testkit.SQLiteBackend(t)
	cfg, err := config.Load(func(k string) string { return map[string]string{"SHARE_DATABASE_URL": b.DatabaseURL}[k] })
	if err != nil {
		t.Fatal(err)
	}
	// cards is the og-renderer's needs with a handler that would publish.
	cards := app.Target{Name: routes.OGRenderer, Needs: app.Needs{Database: app.ReadOnly},
		New: func(d app.Deps) (app.Parts, error) {
			_, err := d.Publisher()
			return app.Parts{}, err
		}}
	for _, tc := range []struct {
		name    string
		targets []app.Target
	}{
		{"alone", []app.Target{cards}},
		{"beside a target that declares it", []app.Target{notesTarget(nil), cards}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := app.New(context.Background(), cfg, app.Options{Process: "test", Targets: tc.targets,
				Getenv: func(string) string { return "" }, Logs: &testkit.SyncBuffer{}})
			want := "target og-renderer: the note domain's Publisher needs a read-write database and the object store and the renderer, which the target's Needs do not declare"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("New = %v, want %q", err, want)
			}
		})
	}
}
