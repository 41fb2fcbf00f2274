package note_test

import (
	"testing"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/note/notetest"
)

// The fake keeps the store ports' contract (notetest), as notedb's store does on both databases: the
// domain's tests on the fake hold for the real store.
func TestFakeStoreKeepsTheStorerContract(t *testing.T) {
	notetest.StorerContract(t, func(*testing.T) notetest.Subject {
		s := newFakeStore()
		settings := account.DefaultSettings("Ada")
		settings.Theme = "dark"
		s.settings[author] = settings
		return notetest.Subject{Store: s, Owner: author, Other: "accountother000000000000", Settings: settings}
	})
}
