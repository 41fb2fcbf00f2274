package notedb_test

import (
	"testing"

	"github.com/sharenote/sharenote/libs/note/notetest"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
)

// The store keeps the store ports' contract (notetest) on both databases, each case on a database of
// its own.
func TestStoreKeepsTheStorerContract(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		notetest.StorerContract(t, func(t *testing.T) notetest.Subject {
			fresh := b
			if b.Name == "postgres" {
				fresh.DatabaseURL = testkit.NewPostgresDB(t)
			} else {
				fresh.DatabaseURL = testkit.SQLiteBackend(t).DatabaseURL
			}
			gdb := testkit.OpenDB(t, fresh)
			owner, settings := newAccount(t, gdb, "Ada")
			other, _ := newAccount(t, gdb, "Bob")
			return notetest.Subject{Store: notedb.New(gdb, testkit.Changes()), Owner: owner, Other: other, Settings: settings}
		})
	})
}
