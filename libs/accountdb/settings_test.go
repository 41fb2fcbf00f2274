package accountdb_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/testkit"
)

// TestConcurrentSettingsChangesLoseNoField changes, round after round, every settings
// field at once, each by its own PATCH-like change of that one field. Every round must end
// with every field at the value its change set. A read of the settings that another change
// saves over before this one saves all fields would put that other field back.
func TestConcurrentSettingsChangesLoseNoField(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		ada := f.license(t, "Ada Lovelace", "")
		core := account.NewSettingsCore(f.store, specQuota, nil)
		for round := range 30 {
			want := account.Settings{
				Name:        fmt.Sprintf("Ada %d", round),
				ShowAuthor:  round%2 == 1,
				Theme:       []string{"light", "dark", "system"}[round%3],
				AccentColor: fmt.Sprintf("#0000%02x", round),
				Font:        []string{"serif", "mono", "sans"}[round%3],
				Indexable:   round%2 == 0,
			}
			// One PATCH per field, each giving only its field.
			changes := map[string]account.SettingsChange{
				"name": {Name: &want.Name}, "show_author": {ShowAuthor: &want.ShowAuthor}, "theme": {Theme: &want.Theme},
				"accent_color": {AccentColor: &want.AccentColor}, "font": {Font: &want.Font}, "indexable": {Indexable: &want.Indexable},
			}
			var wg sync.WaitGroup
			for name, change := range changes {
				wg.Go(func() {
					if _, err := core.Change(ctx, ada.UserCUID, change); err != nil {
						t.Errorf("round %d, PATCH %s: %v", round, name, err)
					}
				})
			}
			wg.Wait()
			got, err := core.Get(ctx, ada.UserCUID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Settings != want {
				t.Fatalf("round %d: settings %+v, want %+v: a concurrent change of another field undid one", round, got.Settings, want)
			}
		}
	})
}
