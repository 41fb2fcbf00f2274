package site_test

import (
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/site"
)

// TestContains: the one rule of membership, by match key (any case, NFC or NFD), a
// root's own folder and not its neighbours, active notes only, and `site: false`.
func TestContains(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	garden := site.Settings{Enabled: true, Roots: []string{"Garden", "Notes/Café"}}
	for _, tc := range []struct {
		name string
		s    site.Settings
		m    site.Member
		want bool
	}{
		{"a note under a root", garden, site.Member{Path: new("Garden/A.md")}, true},
		{"deeper under a root", garden, site.Member{Path: new("Garden/x/y/A.md")}, true},
		{"another case", garden, site.Member{Path: new("garden/A.md")}, true},
		{"NFD against an NFC root", garden, site.Member{Path: new("Notes/Cafe\u0301/A.md")}, true},
		{"a folder that starts with the root's name", garden, site.Member{Path: new("Gardening/A.md")}, false},
		{"a note beside the root folder", garden, site.Member{Path: new("Garden.md")}, false},
		{"no path", garden, site.Member{}, false},
		{"expired", garden, site.Member{Path: new("Garden/A.md"), ExpiresAt: &past}, false},
		{"expiring later", garden, site.Member{Path: new("Garden/A.md"), ExpiresAt: &future}, true},
		{"site: false", garden, site.Member{Path: new("Garden/A.md"), Excluded: site.Excluded(map[string]any{"site": false})}, false},
		{"site: true", garden, site.Member{Path: new("Garden/A.md"), Excluded: site.Excluded(map[string]any{"site": true})}, true},
		{"site: a string is not false", garden, site.Member{Path: new("Garden/A.md"), Excluded: site.Excluded(map[string]any{"site": "false"})}, true},
		{"the whole vault", site.Settings{Enabled: true, Roots: []string{""}}, site.Member{Path: new("A.md")}, true},
		{"a disabled site lists nothing", site.Settings{Roots: []string{""}}, site.Member{Path: new("A.md")}, false},
	} {
		if got := tc.s.Contains(tc.m, now); got != tc.want {
			t.Errorf("%s: Contains = %v, want %v", tc.name, got, tc.want)
		}
	}
}
