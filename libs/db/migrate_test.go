package db

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
)

// SQLite's rebuild of publications (migration 15) keeps every row and every reference to
// it, leaves foreign keys enforced, and puts the large columns last, where reading the
// others never walks their overflow pages. A column added later fails here until it is
// placed before them.
func TestTheSQLiteRebuildOfPublicationsKeepsItsRowsAndPutsLargeColumnsLast(t *testing.T) {
	ctx := context.Background()
	gdb, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "share.db"), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	p, err := provider(gdb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 14); err != nil {
		t.Fatal(err)
	}
	large := strings.Repeat("words of a long note ", 100_000)
	for _, q := range []string{
		`INSERT INTO accounts (cuid, name, email, display_name, created_at) VALUES ('a1', 'ann', 'ann@example.com', 'Ann', '2026-12-01 10:00:00')`,
		`INSERT INTO publications (cuid, account_cuid, title, content, show_properties, created_ms, created_at, updated_at, html, etag, render_id, path, path_key, render_outline, html_bytes)
			VALUES ('p1', 'a1', 'Long', '` + large + `', TRUE, 1, '2026-12-01 10:00:00', '2026-12-01 10:00:00', '<p>` + large + `</p>', '"e1"', 'r1', 'Long.md', 'long.md', '[]', 7)`,
		`INSERT INTO versions (publication_cuid, version, content, show_properties, created_at) VALUES ('p1', 1, 'old', TRUE, '2026-12-01 10:00:00')`,
		`INSERT INTO note_names (publication_cuid, account_cuid, kind, key, created_ms) VALUES ('p1', 'a1', 1, 'long.md', 1)`,
		`INSERT INTO images (account_cuid, publication_cuid, filename, media_type, size, sha256, blob_key, created_at) VALUES ('a1', 'p1', 'x.png', 'image/png', 1, 'h', 'k1', '2026-12-01 10:00:00')`,
	} {
		if err := gdb.Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}

	var row struct {
		Title, Content, HTML, RenderID, Path, PathKey string
		ETag                                          string `gorm:"column:etag"`
		HTMLBytes                                     int
	}
	if err := gdb.Raw(`SELECT title, content, html, etag, render_id, path, path_key, html_bytes FROM publications WHERE cuid = 'p1'`).Scan(&row).Error; err != nil {
		t.Fatal(err)
	}
	if row.Title != "Long" || row.Content != large || row.HTML != "<p>"+large+"</p>" || row.ETag != `"e1"` || row.RenderID != "r1" ||
		row.Path != "Long.md" || row.PathKey != "long.md" || row.HTMLBytes != 7 {
		t.Errorf("the row changed: title %q, etag %q, render %q, path %q %q, html_bytes %d, content %d bytes",
			row.Title, row.ETag, row.RenderID, row.Path, row.PathKey, row.HTMLBytes, len(row.Content))
	}
	var violations []map[string]any
	if err := gdb.Raw(`PRAGMA foreign_key_check`).Scan(&violations).Error; err != nil || len(violations) > 0 {
		t.Errorf("foreign key check: %v %v", violations, err)
	}
	// Enforced again: the version, name and image rows still refer to the note.
	if err := gdb.Exec(`DELETE FROM publications WHERE cuid = 'p1'`).Error; err == nil {
		t.Error("a note its versions refer to was deleted: foreign keys are off")
	}
	var indexes []string
	gdb.Raw(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'publications' AND sql IS NOT NULL ORDER BY name`).Scan(&indexes)
	if want := []string{"publications_list", "publications_names_version", "publications_path", "publications_render_version", "publications_site", "publications_unpublished"}; !slices.Equal(indexes, want) {
		t.Errorf("indexes %v, want %v", indexes, want)
	}
	var columns []struct{ Name string }
	gdb.Raw(`PRAGMA table_info(publications)`).Scan(&columns)
	var names []string
	for _, c := range columns {
		names = append(names, c.Name)
	}
	if tail := names[max(0, len(names)-5):]; !slices.Equal(tail, []string{"render_outline", "render_links", "properties", "html", "content"}) {
		t.Errorf("the columns end %v, want the large ones last: %v", tail, names)
	}
}
