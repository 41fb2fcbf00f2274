package render_test

import (
	"slices"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

func TestAllowancesNameTheStylesAndPlayersOfAPage(t *testing.T) {
	res := markdown(t, "<span style=\"color:red\">a</span> <b style='color: red'>b</b> <i style=\"font-style:italic\">c</i> `style=\"x\"` style=\"y\" <p style=\"position:fixed\">p</p>\n\n![](https://youtu.be/dQw4w9WgXcQ)\n")
	got := render.AllowancesOf(string(res.HTML))
	if want := []string{"color: red", "font-style: italic"}; !slices.Equal(got.Styles, want) || !got.Players {
		t.Errorf("allowances %+v, want styles %q and players", got, want)
	}
	if got := render.AllowancesOf(string(markdown(t, "plain *text* `<iframe class=\"player\">` <iframe src=\"https://e.example/\"></iframe>\n").HTML)); got.Styles != nil || got.Players {
		t.Errorf("a note without styles or players needs %+v", got)
	}
}
