package note

import (
	"reflect"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// Reference warnings name only what the page lacks: one per name, nothing for code.
func TestReferenceWarnings(t *testing.T) {
	body := "![[gone.jpg|200]] [[gone.jpg]] ![[frame.png#a]] ![[song.mp3]] [[doc.pdf|the doc]] ![x](missing.webp)\n\n" +
		"`[[code.png]]` %%![[comment.png]]%% $[[math.png]]$\n\n```\n![[fence.png]]\n```\n\n    ![[indented.png]]\n\n" +
		"[[Some note]] [[Note.md]] ![y](https://e.com/far.png) ![[here.png|300]] ![z]([[there.png]])\n"
	urls := map[string]string{"here.png": "https://s/here.png", "there.png": "https://s/there.png", "spare.png": "https://s/spare.png",
		"pasted.png": "https://s/pasted.png"}
	got := referenceWarnings(render.References(body), body+" https://s/pasted.png", urls)
	var codes [][2]string
	for _, w := range got {
		codes = append(codes, [2]string{w.Code, w.Ref})
	}
	want := [][2]string{
		{WarnUnresolvedReference, "gone.jpg"}, {WarnUnresolvedReference, "frame.png"}, {WarnUnsupportedEmbed, "song.mp3"},
		{WarnUnsupportedEmbed, "doc.pdf"}, {WarnUnresolvedReference, "missing.webp"}, {WarnUnusedImage, "spare.png"},
	}
	if !reflect.DeepEqual(codes, want) {
		t.Errorf("warnings %v, want %v", codes, want)
	}
}
