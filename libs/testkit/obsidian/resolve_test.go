package obsidian_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit/obsidian"
)

// want is one link of the fixture vault and where Obsidian's rules take it, written by hand
// from the rules, not from the resolver's output.
type want struct {
	from, raw string
	path      string        // "" when unresolved
	rule      obsidian.Rule // which rule resolves it
	heading   string        // the heading the fragment names, "" when none
	block     string        // the block the fragment names, "" when none
	published string        // the resolution among published notes when it differs ("-" for none)
	extra     func(obsidian.Link) string
}

var fixtureLinks = []want{
	// Two notes named Plan: same folder, then the shortest path; a folder path picks either.
	{from: "Projects/Roadmap.md", raw: "[[Plan]]", path: "Projects/Plan.md", rule: obsidian.RulePath},
	{from: "Archive/2024/Review.md", raw: "[[Plan]]", path: "Archive/2024/Plan.md", rule: obsidian.RulePath},
	{from: "Notes/Reading.md", raw: "[[Plan]]", path: "Projects/Plan.md", rule: obsidian.RuleName},
	{from: "Home.md", raw: "[[Plan]]", path: "Projects/Plan.md", rule: obsidian.RuleName},
	{from: "Projects/Roadmap.md", raw: "[[Archive/2024/Plan]]", path: "Archive/2024/Plan.md", rule: obsidian.RulePath},
	{from: "Archive/2024/Review.md", raw: "[[Projects/Plan]]", path: "Projects/Plan.md", rule: obsidian.RulePath},
	{from: "Home.md", raw: "[[Archive/2024/Plan|the 2024 plan]]", path: "Archive/2024/Plan.md", rule: obsidian.RulePath},
	// Equal lengths: the smallest path in byte order.
	{from: "Home.md", raw: "[[Log]]", path: "Alfa/Log.md", rule: obsidian.RuleName},
	// Three notes named Note: none beside Review, so the shortest of Sub/Note.md and
	// Other/Note.md (11 and 13 bytes) and Projects/Sub/Note.md.
	{from: "Archive/2024/Review.md", raw: "[[Note]]", path: "Sub/Note.md", rule: obsidian.RuleName},
	{from: "Sub/Note.md", raw: "[[Note]]", path: "Sub/Note.md", rule: obsidian.RulePath},
	// Case and Unicode normalisation.
	{from: "Home.md", raw: "[[formulas]]", path: "Formulas.md", rule: obsidian.RulePath},
	{from: "Home.md", raw: "[[Café]]", path: "Café.md", rule: obsidian.RulePath},
	{from: "Café.md", raw: "[[home]]", path: "Home.md", rule: obsidian.RulePath},
	// Aliases: a YAML list, a comma-separated string, and an alias with shown text.
	{from: "Home.md", raw: "[[Ada]]", path: "People/Ada Lovelace.md", rule: obsidian.RuleAlias},
	{from: "Home.md", raw: "[[Turing]]", path: "People/Alan Turing.md", rule: obsidian.RuleAlias},
	{from: "Home.md", raw: "[[Alan]]", path: "People/Alan Turing.md", rule: obsidian.RuleAlias},
	{from: "People/Alan Turing.md", raw: "[[Countess of Lovelace|Ada]]", path: "People/Ada Lovelace.md", rule: obsidian.RuleAlias},
	{from: "Home.md", raw: "[[Fragments]]", path: "Links/Fragments.md", rule: obsidian.RuleName},
	// Relative paths: the note's folder first, then the root.
	{from: "Projects/Roadmap.md", raw: "[[../Other/Note]]", path: "Other/Note.md", rule: obsidian.RulePath},
	{from: "Projects/Roadmap.md", raw: "[[Sub/Note]]", path: "Projects/Sub/Note.md", rule: obsidian.RulePath},
	{from: "Home.md", raw: "[[Sub/Note]]", path: "Sub/Note.md", rule: obsidian.RulePath},
	{from: "Projects/Sub/Note.md", raw: "[[../../Home]]", path: "Home.md", rule: obsidian.RulePath},
	{from: "Projects/Roadmap.md", raw: "[[./Plan.md|plan file]]", path: "Projects/Plan.md", rule: obsidian.RulePath},
	{from: "Home.md", raw: "[[Other/Note.md]]", path: "Other/Note.md", rule: obsidian.RulePath},
	{from: "Garden/Trees/Oak.md", raw: "[[../Herbs/Basil]]", path: "Garden/Herbs/Basil.md", rule: obsidian.RulePath},
	// Markdown links, percent-encoded, in angle brackets, without the extension.
	{from: "Home.md", raw: "[the meeting](Projects/Meeting%20notes.md)", path: "Projects/Meeting notes.md", rule: obsidian.RulePath},
	{from: "Home.md", raw: "[the kept notes](<Projects/Meeting notes.md#Decisions>)", path: "Projects/Meeting notes.md", rule: obsidian.RulePath, heading: "Decisions"},
	{from: "Recipes/Bread.md", raw: "[soup](Soup)", path: "Recipes/Soup.md", rule: obsidian.RulePath},
	{from: "Recipes/Bread.md", raw: "[the steps](Soup.md#Step%202%20—%20simmer)", path: "Recipes/Soup.md", rule: obsidian.RulePath, heading: "Step 2 — simmer"},
	// Headings in every script, with punctuation, nested, repeated, missing.
	{from: "Home.md", raw: "[[Languages#Привет, мир]]", path: "Languages.md", rule: obsidian.RulePath, heading: "Привет, мир"},
	{from: "Home.md", raw: "[[Languages#日本語の見出し]]", path: "Languages.md", rule: obsidian.RulePath, heading: "日本語の見出し"},
	{from: "Home.md", raw: "[[Languages#Άλφα και Ωμέγα]]", path: "Languages.md", rule: obsidian.RulePath, heading: "Άλφα και Ωμέγα"},
	{from: "Home.md", raw: "[[Languages#What's new? (v2.0)!]]", path: "Languages.md", rule: obsidian.RulePath, heading: "What's new? (v2.0)!"},
	{from: "Home.md", raw: "[[Languages#Part A#Details]]", path: "Languages.md", rule: obsidian.RulePath, heading: "Details#1"},
	{from: "Home.md", raw: "[[Languages#Part B#Details]]", path: "Languages.md", rule: obsidian.RulePath, heading: "Details#2"},
	{from: "Home.md", raw: "[[Languages#Notes]]", path: "Languages.md", rule: obsidian.RulePath, heading: "Notes#1"},
	{from: "Home.md", raw: "[[Languages#No such heading]]", path: "Languages.md", rule: obsidian.RulePath},
	{from: "Recipes/Bread.md", raw: "[[Soup#Step 1 Chop & stir]]", path: "Recipes/Soup.md", rule: obsidian.RulePath, heading: "Step 1: Chop & stir"},
	{from: "Recipes/Bread.md", raw: "[[Soup#Step 1: Chop & stir]]", path: "Recipes/Soup.md", rule: obsidian.RulePath, heading: "Step 1: Chop & stir"},
	{from: "Recipes/Bread.md", raw: "[[soup#faq notes]]", path: "Recipes/Soup.md", rule: obsidian.RulePath, heading: "FAQ / notes"},
	{from: "Journal/2025/Day two.md", raw: "[[Day one#Day one]]", path: "Journal/2025/Day one.md", rule: obsidian.RulePath, heading: "Day one"},
	{from: "Garden/Herbs/Basil.md", raw: "[[Oak#Soil]]", path: "Garden/Trees/Oak.md", rule: obsidian.RuleName, heading: "Soil"},
	// Blocks: an id at a line's end and on a line of its own, after a list, quote, table.
	{from: "Home.md", raw: "[[Blocks#^para1]]", path: "Blocks.md", rule: obsidian.RulePath, block: "para1"},
	{from: "Home.md", raw: "[[Blocks#^item-2]]", path: "Blocks.md", rule: obsidian.RulePath, block: "item-2"},
	{from: "Home.md", raw: "[[Blocks#^quote3|the quote]]", path: "Blocks.md", rule: obsidian.RulePath, block: "quote3"},
	{from: "Home.md", raw: "[[Blocks#^table4]]", path: "Blocks.md", rule: obsidian.RulePath, block: "table4"},
	// Links within the note.
	{from: "Languages.md", raw: "[[#Part A]]", path: "Languages.md", rule: obsidian.RuleSelf, heading: "Part A"},
	{from: "Languages.md", raw: "[[#Part B#Details]]", path: "Languages.md", rule: obsidian.RuleSelf, heading: "Details#2"},
	{from: "Languages.md", raw: "[[#^langs-block]]", path: "Languages.md", rule: obsidian.RuleSelf, block: "langs-block"},
	{from: "Links/Fragments.md", raw: "[[#^frag-block]]", path: "Links/Fragments.md", rule: obsidian.RuleSelf, block: "frag-block"},
	{from: "Blocks.md", raw: "[[#Blocks]]", path: "Blocks.md", rule: obsidian.RuleSelf, heading: "Blocks"},
	// Table cells escape the pipe.
	{from: "Blocks.md", raw: `[[Plan\|a plan]]`, path: "Projects/Plan.md", rule: obsidian.RuleName,
		extra: shown("a plan")},
	{from: "Blocks.md", raw: `[[Languages#Notes\|notes]]`, path: "Languages.md", rule: obsidian.RulePath, heading: "Notes#1"},
	// Unpublished and missing notes.
	{from: "Home.md", raw: "[[Secret]]", path: "Secret.md", rule: obsidian.RulePath, published: "-"},
	{from: "Home.md", raw: "[[Nowhere]]"},
	{from: "People/Ada Lovelace.md", raw: "[[Charles Babbage]]"},
	// Attachments: bare names, sized, by path, deep in Attachments, missing, anchored.
	{from: "Images.md", raw: "![[pixel.png]]", path: "Attachments/pixel.png", rule: obsidian.RulePath},
	{from: "Images.md", raw: "![[pixel.png|300]]", path: "Attachments/pixel.png", rule: obsidian.RulePath, extra: size("300")},
	{from: "Images.md", raw: "![[Attachments/photo.jpg]]", path: "Attachments/photo.jpg", rule: obsidian.RulePath},
	{from: "Images.md", raw: "![[shape.svg]]", path: "Attachments/shape.svg", rule: obsidian.RulePath},
	{from: "Images.md", raw: "![[flow.svg]]", path: "Attachments/Diagrams/flow.svg", rule: obsidian.RuleName},
	{from: "Images.md", raw: "![[Diagrams/flow.svg|60]]", path: "Attachments/Diagrams/flow.svg", rule: obsidian.RulePath, extra: size("60")},
	{from: "Images.md", raw: "![a pixel](Attachments/pixel.png)", path: "Attachments/pixel.png", rule: obsidian.RulePath},
	{from: "Images.md", raw: "![[missing.png]]"},
	{from: "Images.md", raw: "![[photo.jpg#frame|120x80]]", path: "Attachments/photo.jpg", rule: obsidian.RulePath, extra: size("120x80")},
	{from: "Images.md", raw: "![[Languages#Part A]]", path: "Languages.md", rule: obsidian.RulePath, heading: "Part A"},
	{from: "Images.md", raw: "![[Blocks#^para1]]", path: "Blocks.md", rule: obsidian.RulePath, block: "para1"},
	// Code keeps only the link outside code and comments.
	{from: "Code.md", raw: "[[Formulas]]", path: "Formulas.md", rule: obsidian.RulePath},
}

func shown(s string) func(obsidian.Link) string {
	return func(l obsidian.Link) string {
		if l.Shown != s {
			return "shown " + l.Shown + ", want " + s
		}
		return ""
	}
}

func size(s string) func(obsidian.Link) string {
	return func(l obsidian.Link) string {
		if l.Size != s || l.Shown != "" {
			return "size " + l.Size + " shown " + l.Shown + ", want size " + s
		}
		return ""
	}
}

// headingName names a heading of a note as the table writes it: "Details#2" is the second
// heading of that text.
func headingName(n *obsidian.Note, i int) string {
	if i < 0 {
		return ""
	}
	same, nth := 0, 0
	for j, h := range n.Headings {
		if h.Text == n.Headings[i].Text {
			same++
			if j == i {
				nth = same
			}
		}
	}
	if same > 1 {
		return n.Headings[i].Text + "#" + string(rune('0'+nth))
	}
	return n.Headings[i].Text
}

func loadFixture(t *testing.T) *obsidian.Vault {
	t.Helper()
	v, err := obsidian.Load(obsidian.Fixture())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFixtureLinksResolveAsObsidianDoes(t *testing.T) {
	v := loadFixture(t)
	for _, w := range fixtureLinks {
		t.Run(w.from+" "+w.raw, func(t *testing.T) {
			l, ok := findLink(v, w.from, w.raw)
			if !ok {
				t.Fatalf("no link %s in %s", w.raw, w.from)
			}
			got := want{from: l.From, raw: l.Raw, path: l.ResolvedPath, rule: l.Rule, block: l.Block}
			if n := v.Note(l.ResolvedPath); n != nil {
				got.heading = headingName(n, l.HeadingIndex)
			}
			pub := w.path
			if w.published == "-" {
				pub = ""
			}
			if got.path != w.path || got.rule != w.rule || got.heading != w.heading || got.block != w.block || l.PublishedPath != pub {
				t.Errorf("got %s by %q, heading %q, block %q, published %q;\nwant %s by %q, heading %q, block %q, published %q",
					got.path, got.rule, got.heading, got.block, l.PublishedPath, w.path, w.rule, w.heading, w.block, pub)
			}
			if w.extra != nil {
				if msg := w.extra(l); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

func findLink(v *obsidian.Vault, from, raw string) (obsidian.Link, bool) {
	n := v.Note(from)
	if n == nil {
		return obsidian.Link{}, false
	}
	for _, l := range n.Links {
		if l.Raw == raw {
			return l, true
		}
	}
	return obsidian.Link{}, false
}

// Links inside code fences, code spans and %%comments%% are text, not links.
func TestLinksInCodeAndCommentsStayText(t *testing.T) {
	v := loadFixture(t)
	var raws []string
	for _, l := range v.Note("Code.md").Links {
		raws = append(raws, l.Raw)
	}
	if !slices.Equal(raws, []string{"[[Formulas]]"}) {
		t.Errorf("Code.md links %q, want only [[Formulas]]", raws)
	}
}

func TestFixtureVaultShape(t *testing.T) {
	v := loadFixture(t)
	if len(v.Notes) < 40 {
		t.Errorf("%d notes, want at least 40", len(v.Notes))
	}
	if len(v.Published()) != len(v.Notes)-1 || v.Note("Secret.md").Published {
		t.Errorf("published %d of %d; Secret.md must be the one left out", len(v.Published()), len(v.Notes))
	}
	if v.AttachmentFolder != "Attachments" {
		t.Errorf("attachment folder %q", v.AttachmentFolder)
	}
	if a := v.Note("People/Alan Turing.md").Aliases; !slices.Equal(a, []string{"Turing", "Alan"}) {
		t.Errorf("comma-separated aliases %q", a)
	}
	if a := v.Note("People/Ada Lovelace.md").Aliases; !slices.Equal(a, []string{"Ada", "Countess of Lovelace"}) {
		t.Errorf("listed aliases %q", a)
	}
	if n := v.Note("Languages.md"); n.Title != "Headings in many scripts" {
		t.Errorf("frontmatter title %q", n.Title)
	}
	if n := v.Note("Café.md"); n == nil || n.Title != "Café" {
		t.Errorf("the NFD file name is not found by its NFC path")
	}
	if b := v.Note("Blocks.md").Blocks; !slices.Equal(b, []string{"para1", "item-2", "quote3", "table4"}) {
		t.Errorf("blocks %q", b)
	}
	for _, l := range v.Links() {
		if l.Line <= 0 || l.Raw == "" {
			t.Errorf("link without position: %+v", l)
		}
	}
}

// Hidden folders hold no notes, a symlink leading out of the vault is not followed (one
// inside it is), and a moved note is found at its new path: changes a test makes on a copy.
func TestCopyFixtureTakesChanges(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := obsidian.CopyFixture(dir); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(outside, "Stolen.md"), []byte("# Stolen\n"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "Stolen.md"), filepath.Join(dir, "Stolen.md")))
	must(t, os.Symlink(filepath.Join(dir, "Code.md"), filepath.Join(dir, "Sub", "Linked code.md")))
	must(t, os.MkdirAll(filepath.Join(dir, ".trash"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, ".trash", "Plan.md"), []byte("# Trashed\n"), 0o644))
	must(t, os.Rename(filepath.Join(dir, "Formulas.md"), filepath.Join(dir, "Notes", "Formulas.md")))
	must(t, os.Remove(filepath.Join(dir, "Recipes", "Bread.md")))
	v, err := obsidian.Load(dir)
	must(t, err)
	if v.Note("Stolen.md") != nil || v.Note(".trash/Plan.md") != nil {
		t.Error("a symlink out of the vault or a trashed note counts as a note")
	}
	if v.Note("Sub/Linked code.md") == nil {
		t.Error("a symlink to a note inside the vault is no note")
	}
	if l, _ := findLink(v, "Home.md", "[[formulas]]"); l.ResolvedPath != "Notes/Formulas.md" || l.Rule != obsidian.RuleName {
		t.Errorf("moved note: [[formulas]] → %q by %q", l.ResolvedPath, l.Rule)
	}
	if l, _ := findLink(v, "Recipes/Soup.md", "[[Bread]]"); l.Resolved() {
		t.Errorf("deleted note still resolves: %+v", l)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
