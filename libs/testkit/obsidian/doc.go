// Package obsidian is the yardstick of sharenote's link handling: an independent reading of
// Obsidian's documented link rules, sharing no code with the service, against which the
// pages the service builds are checked.
//
// Load reads a vault folder the way the client publishes it: every .md file except those in
// hidden folders (.obsidian, .trash, …) is a note, and a note whose frontmatter says
// `publish: false` stays out of the published set. Each note's links (wikilinks, embeds and
// Markdown links to notes or files; never inside code fences, code spans or %%comments%%)
// are resolved by the rules of docs/api.md "Vaults and links", which follow Obsidian's:
//
//  1. a path, relative to the linking note's folder, then from the vault root (and, for
//     attachments, from attachmentFolderPath in .obsidian/app.json), with or without .md;
//  2. a base name; of several, the one in the linking note's folder, then the shortest
//     path, then the smallest path in byte order;
//  3. an alias (a YAML list, or one comma-separated string).
//
// Names compare by NFC and Unicode case folding. A fragment names a heading path (`A#B`:
// the first heading B inside A's section) or a block (`^id`).
//
// CheckPages then takes the pages the service published for the vault and reports, per link
// that resolves, whether the page links to the right page and anchor, with leftovers that
// should never reach a reader (placeholder characters, block markers, raw `[[`).
//
// In an end-to-end test, after publishing a vault folder with the client:
//
//	v, err := obsidian.Load(dir)
//	pages := map[string]obsidian.Page{} // for each published note: path → URL and HTML of /s/<cuid>
//	r := v.CheckPages(pages)
//	t.Log(r) // "links resolved by Obsidian N, working on the pages M (…%); leftovers …"
//	for _, c := range r.Links { if !c.Working { t.Errorf("%s:%d %s: %s", c.From, c.Line, c.Raw, c.Problem) } }
//
// Fixture returns the package's own test vault (testdata/vault): 41 notes in nested folders
// that exercise each rule, with an Attachments folder of tiny PNG, JPEG and SVG files.
// Things git should not hold (a symlink out of the vault, moved and deleted notes) are made
// by the tests that need them, on a copy (CopyFixture).
package obsidian
