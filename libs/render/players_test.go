package render_test

import (
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// player is the markup of a player of src at a size.
func player(src, title, size string) string {
	return `<iframe class="player" src="` + src + `" title="` + title + `" ` + size +
		` sandbox="allow-scripts allow-same-origin allow-presentation allow-popups allow-popups-to-escape-sandbox"` +
		` allow="encrypted-media; picture-in-picture; fullscreen" allowfullscreen referrerpolicy="strict-origin-when-cross-origin" loading="lazy"></iframe>`
}

const (
	youTube = "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"
	vimeo   = "https://player.vimeo.com/video/76979871?dnt=1"
	size    = `width="560" height="315"`
)

func TestVideosEmbeddedAsImagesArePlayers(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"watch", "![](https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s)", player(youTube, "YouTube video", size)},
		{"short link", "![](https://youtu.be/dQw4w9WgXcQ?si=abc)", player(youTube, "YouTube video", size)},
		{"shorts", "![](https://youtube.com/shorts/dQw4w9WgXcQ)", player(youTube, "YouTube video", size)},
		{"mobile", "![](http://m.youtube.com/watch?v=dQw4w9WgXcQ)", player(youTube, "YouTube video", size)},
		{"embed", "![](https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ)", player(youTube, "YouTube video", size)},
		{"Vimeo", "![](https://vimeo.com/76979871)", player(vimeo, "Vimeo video", size)},
		{"Vimeo's player", "![](https://player.vimeo.com/video/76979871?h=abc)", player(vimeo, "Vimeo video", size)},
		{"a width", "![|640](https://youtu.be/dQw4w9WgXcQ)", player(youTube, "YouTube video", `width="640" height="360"`)},
		{"a size", "![My video|400x300](https://youtu.be/dQw4w9WgXcQ)", player(youTube, "YouTube video", `width="400" height="300"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			contains(t, tt.src+"\n", []string{"<p>" + tt.want + "</p>"}, []string{"<img"})
		})
	}
	// The scanner of references still finds the image.
	if refs := render.References("![](https://youtu.be/dQw4w9WgXcQ)\n"); len(refs) != 1 || refs[0].Kind != render.RefImage {
		t.Errorf("references %+v", refs)
	}
}

func TestIframesOfVideosArePlayersAndOthersLinks(t *testing.T) {
	checkCases(t, []htmlCase{
		{"a YouTube iframe keeps its size only", `<iframe width="640" height="360" src="https://www.youtube.com/embed/dQw4w9WgXcQ?si=x&autoplay=1" title="t" frameborder="0" allow="camera; microphone; autoplay" sandbox="allow-top-navigation allow-forms" referrerpolicy="unsafe-url" onload="alert(1)" srcdoc="<script>alert(2)</script>" allowfullscreen></iframe>`,
			[]string{player(youTube, "YouTube video", `width="640" height="360"`)}, []string{"autoplay", "camera", "top-navigation", "unsafe-url", "alert", "srcdoc", "si="}},
		{"a Vimeo iframe, inline", `See <iframe src="https://player.vimeo.com/video/76979871?autoplay=1" width="abc">fallback</iframe> here`,
			[]string{"See " + player(vimeo, "Vimeo video", size) + " here"}, []string{"fallback", "autoplay"}},
		{"another iframe is a link", `<iframe src="https://maps.example/embed?pb=1"></iframe>`,
			[]string{`<a href="https://maps.example/embed?pb=1" rel="nofollow">https://maps.example/embed?pb=1</a>`}, []string{"<iframe"}},
		{"a YouTube id of another shape is no player", `<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ&quot;onload=&quot;x"></iframe> <iframe src="https://www.youtube.com/embed/abc"></iframe>`,
			nil, []string{"<iframe", "onload=\""}},
		{"a scriptable iframe is nothing", `<iframe src="javascript:alert(1)"></iframe> <iframe srcdoc="<script>alert(2)</script>"></iframe> <iframe src="data:text/html,x"></iframe> x`,
			[]string{" x"}, []string{"alert", "<iframe", "<a", "data:"}},
	})
}

func TestWebPagesEmbeddedAsImagesAreLinks(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"a post", "![A post](https://x.com/someone/status/1)", `<a href="https://x.com/someone/status/1" rel="nofollow">A post</a>`},
		{"a tweet", "![](https://twitter.com/someone/status/1)", `<a href="https://twitter.com/someone/status/1" rel="nofollow">https://twitter.com/someone/status/1</a>`},
		{"a channel", "![](https://www.youtube.com/@someone)", `<a href="https://www.youtube.com/@someone" rel="nofollow">`},
		{"a site's root", "![Site](https://example.com/)", `<a href="https://example.com/" rel="nofollow">Site</a>`},
		{"a page", "![](https://example.com/a/page.html)", `<a href="https://example.com/a/page.html" rel="nofollow">`},
		{"a video file", "![](https://example.com/v.mp4)", `<a href="https://example.com/v.mp4" rel="nofollow">`},
		{"a PDF", "![](https://example.com/doc.pdf)", `<a href="https://example.com/doc.pdf" rel="nofollow">`},
		{"a video id of another shape", "![](https://www.youtube.com/watch?v=dQw4w9WgXcQ\"onload=\"x)", `<a href="https://www.youtube.com/watch?v=dQw4w9WgXcQ&#34;onload=&#34;x" rel="nofollow">`},
		{"a short id", "![](https://youtu.be/abc)", `<a href="https://youtu.be/abc" rel="nofollow">`},
		{"a Vimeo page", "![](https://vimeo.com/channels/staffpicks)", `<a href="https://vimeo.com/channels/staffpicks" rel="nofollow">`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { contains(t, tt.src+"\n", []string{tt.want}, []string{"<img", "<iframe"}) })
	}
	html := contains(t, "![a](https://images.example/photo/123?w=800) ![b|100](https://example.com/b.png) ![c](c.jpg)\n",
		[]string{`<img src="https://images.example/photo/123?w=800" alt="a">`, `<img src="https://example.com/b.png" alt="b" width="100">`, `<img src="c.jpg" alt="c">`}, nil)
	if strings.Contains(html, "<a ") {
		t.Errorf("an image became a link:\n%s", html)
	}
}
