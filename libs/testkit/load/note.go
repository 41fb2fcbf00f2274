package load

import (
	"fmt"
	"strings"
)

// Note returns the everyday note the load benchmarks publish, about size bytes: headings,
// emphasis, a list, a table, a callout, a highlighted code block and links, then extra
// paragraphs to the size. With an image name it shows that image as an embed.
func Note(size int, image string) string {
	var b strings.Builder
	b.WriteString("# Trip notes\n\nTrams, *pastéis* and **miradouros**: a long weekend in Lisbon, written up on the way home.\n\n")
	if image != "" {
		b.WriteString("![[" + image + "]]\n\n")
	}
	b.WriteString("## Plan\n\n- Day one: Alfama, the castle, fado in the evening\n- Day two: Belém, the tower and the monastery\n- [x] Book the tram tour\n- [ ] Buy tiles\n\n")
	b.WriteString("| Day | Where | Cost |\n| --- | --- | ---: |\n| Fri | Alfama | 12 € |\n| Sat | Belém | 18 € |\n| Sun | Sintra | 25 € |\n\n")
	b.WriteString("> [!tip] Getting around\n> The 28 tram is slow but worth it once; the metro is faster.\n\n")
	b.WriteString("```go\nfunc main() {\n\tfor _, day := range []string{\"fri\", \"sat\", \"sun\"} {\n\t\tfmt.Println(\"walk\", day)\n\t}\n}\n```\n\n")
	b.WriteString("See [the tourist office](https://www.visitlisboa.com/) and ~~the old map~~ the new one.\n\n")
	for i := 1; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Paragraph %d. The city climbs seven hills, so every street ends in a view; we walked until the light went orange and the river turned to brass. ", i)
		b.WriteString("Coffee is cheap, the custard tarts are warm, and nobody hurries.\n\n")
	}
	return b.String()
}

// Sectioned returns a note of about size bytes whose first section, "Small", is the
// sentence small, and whose second, "Big", is lines of words to the size: a large note
// of which a page embeds only a little (![[Note#Small]]).
func Sectioned(small string, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Small\n\n%s\n\n## Big\n\n", small)
	for b.Len() < size {
		fmt.Fprintf(&b, "Line %d of a long note, with nothing but words in it, long enough to be worth a page.\n\n", b.Len())
	}
	return b.String()
}
