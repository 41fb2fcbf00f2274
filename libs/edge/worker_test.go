package edge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
)

// TestWorkerErrorsShowNoCredential: the purge job logs the worker's errors, so an edge
// that refuses a purge or does not answer is named without the password or token of its
// purge URL.
func TestWorkerErrorsShowNoCredential(t *testing.T) {
	refusing, down := testkit.BrokenEdges(t)
	cases := []struct{ name, host string }{
		{"an edge that refuses the purge", refusing},
		{"an edge that does not answer", down},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gdb := testkit.OpenDB(t, testkit.SQLiteBackend(t))
			w, _ := newWorker(t, gdb, "http://purger:Edge-s3cret@"+tc.host+"/?token=Tok-s3cret", testBounds)
			write(t, gdb, note.Change{Account: "A", Note: "n1", References: true})
			err := w.Run(context.Background())
			if err == nil {
				t.Fatal("Run against a failing edge: no error")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("the purge error shows a credential: %v", err)
			}
			if !strings.Contains(err.Error(), tc.host) {
				t.Errorf("the purge error %q does not name the edge %s", err, tc.host)
			}
		})
	}
}
