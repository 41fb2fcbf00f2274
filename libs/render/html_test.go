package render_test

import (
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/render"
)

// contains checks that the HTML of src, as a page shows it when no link resolves, has
// each of want and none of not, and that src rendered without fallbacks.
func contains(t *testing.T, src string, want, not []string) string {
	t.Helper()
	res := markdown(t, src)
	html := render.ResolveLinks(string(res.HTML), res.Nonce, res.Links, make([]string, len(res.Links)))
	for _, w := range want {
		if !strings.Contains(html, w) {
			t.Errorf("HTML lacks %q:\n%s", w, html)
		}
	}
	for _, n := range not {
		if strings.Contains(html, n) {
			t.Errorf("HTML has %q:\n%s", n, html)
		}
	}
	if len(res.Fallbacks) != 0 {
		t.Errorf("fallbacks: %v", res.Fallbacks)
	}
	return html
}

// htmlCase is a note whose HTML has each of want and none of not.
type htmlCase struct {
	name, src string
	want, not []string
}

func checkCases(t *testing.T, cases []htmlCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { contains(t, c.src, c.want, c.not) })
	}
}

func TestRawHTMLIsKeptWithItsText(t *testing.T) {
	checkCases(t, []htmlCase{
		{"headings", "<h1>One</h1>\n<h6>Six</h6>\n", []string{"<h1>One</h1>", "<h6>Six</h6>"}, nil},
		{"Markdown in an HTML block stays text, as in CommonMark and Obsidian", "<div>This **will not** be bold.</div>\n",
			[]string{"<div>This **will not** be bold.</div>"}, []string{"<strong>"}},
		{"a <br> separates words", "a<br>b and c<br/>d\n", []string{"a<br>b and c<br>d"}, nil},
		{"a <p/> starts a paragraph", "Matches any file in the vault.<p/>Example: file:.jpg\n",
			[]string{"<p>Matches any file in the vault.</p><p>Example: file:.jpg</p>"}, []string{"<p></p>"}},
		{"phrasing elements", "<u>u</u> <s>s</s> H<sub>2</sub>O x<sup>3</sup> <kbd>Ctrl</kbd> <mark>m</mark> <span>sp</span> <b>b</b> <i>i</i> <small>sm</small> <abbr title=\"HyperText\">HTML</abbr>\n",
			[]string{"<u>u</u> <s>s</s> H<sub>2</sub>O x<sup>3</sup> <kbd>Ctrl</kbd> <mark>m</mark> <span>sp</span> <b>b</b> <i>i</i> <small>sm</small> <abbr title=\"HyperText\">HTML</abbr>"}, nil},
		{"details around Markdown", "<details open>\n<summary>More</summary>\n\nSome **bold** text.\n\n</details>\n",
			[]string{"<details open=\"\">\n<summary>More</summary>\n<p>Some <strong>bold</strong> text.</p>\n</details>"}, nil},
		{"a table", "<table><thead><tr><th scope=\"col\" align=\"center\">H</th></tr></thead><tbody><tr><td colspan=\"2\" rowspan=\"x\">d</td></tr></tbody></table>\n",
			[]string{`<table><thead><tr><th scope="col" align="center">H</th></tr></thead><tbody><tr><td colspan="2">d</td></tr></tbody></table>`}, []string{"rowspan"}},
		{"an image and a link", "<img src=\"https://e.example/a.png\" alt=\"A\" width=\"100\" onerror=\"alert(1)\" loading=\"eager\"> <a href=\"https://e.example/\" target=\"_top\">e</a>\n",
			[]string{`<img src="https://e.example/a.png" alt="A" width="100">`, `<a href="https://e.example/" rel="nofollow">e</a>`}, []string{"onerror", "loading", "target"}},
		{"lists", "<ol start=\"3\" type=\"a\" reversed><li value=\"7\">x</li></ol><ul><li>y</li></ul><dl><dt>t</dt><dd>d</dd></dl>\n",
			[]string{`<ol start="3" type="a" reversed="">`, `<li value="7">x</li>`, "<ul><li>y</li></ul><dl><dt>t</dt><dd>d</dd></dl>"}, nil},
		{"other elements lose their tags, not their text", "<font color=red>red</font> <center>mid</center> <marquee>moving</marquee> <article>art</article> <body onload=alert(1)>body</body>\n",
			[]string{"red mid moving art body"}, []string{"<font", "<center", "<marquee", "<article", "<body", "onload"}},
		{"entities and text stay text", "<div>a &lt; b &amp; &quot;c&quot; &#x41; \ue000x</div>\n", []string{"<div>a &lt; b &amp; &#34;c&#34; A \ue000x</div>"}, nil},
		{"comments are dropped", "a <!-- secret --> b\n\n<!--\nblock secret\n-->\n", []string{"<p>a  b</p>"}, []string{"secret"}},
	})
}

func TestRawHTMLDropsWhatItMustWithItsContent(t *testing.T) {
	checkCases(t, []htmlCase{
		{"script and style blocks", "<script>\nalert(1)\n</script>\n\n<style>\nbody{display:none}\n</style>\n\nafter\n", []string{"<p>after</p>"}, []string{"alert", "display", "<script", "<style"}},
		{"inline script, style and textarea", "a <script>alert(1)</script> b <style>p{}</style> c <textarea>text</textarea> d\n", []string{"<p>a  b  c  d</p>"}, []string{"alert", "p{}", "text<"}},
		{"template, object, embed", "<template><p>t</p></template> <object data=x>o</object> <embed src=x> e\n", []string{"e"}, []string{"<p>t", ">o<", "<template", "<object", "<embed"}},
		{"forms and their controls", "<form action=x><p>inside</p><input value=v><button>b</button></form>\n\n<select><option>opt</option></select> <label>lab</label> <input type=checkbox checked> end\n",
			[]string{"end"}, []string{"inside", "<input", ">b<", "opt", "lab", "<form", "<button", "<select"}},
		{"SVG and MathML", "<svg><text>svg text</text><script>alert(1)</script></svg> <math><mi>x</mi></math> end\n", []string{"end"}, []string{"svg text", "<svg", "<math", "<mi>", "alert"}},
		{"media", "<video src=x><p>no video</p></video> <audio src=x>no audio</audio> end\n", []string{"end"}, []string{"no video", "no audio"}},
		{"an unclosed one hides the rest of its paragraph only", "a <textarea> b *c*\n\nnext paragraph\n", []string{"<p>a </p>", "<p>next paragraph</p>"}, []string{"b ", "<em>"}},
		{"an unclosed one hides the rest of its HTML block only", "<div><script>alert(1)\n\nshown\n", []string{"<p>shown</p>"}, []string{"alert"}},
		{"a wikilink inside is no link", "<script>[[Secret]]</script> x\n", []string{"x"}, []string{"Secret"}},
	})
	if res := markdown(t, "<script>[[Secret]]</script>\n\na <script>[[Other]]</script>\n"); len(res.Links) != 0 {
		t.Errorf("links in dropped content: %+v", res.Links)
	}
}

func TestRawHTMLAttributesAndStylesAreAllowlisted(t *testing.T) {
	checkCases(t, []htmlCase{
		{"kept style properties", `<span style="color:#c00; background-color: rgb(255, 240, 0); text-align:center; font-weight:700; font-style:italic; text-decoration:underline wavy red">s</span>` + "\n",
			[]string{`<span style="color: #c00; background-color: rgb(255, 240, 0); text-align: center; font-weight: 700; font-style: italic; text-decoration: underline wavy red">s</span>`}, nil},
		{"other properties are dropped", `<span style="color:red;position:fixed;top:0;width:100%;display:none">s</span>` + "\n",
			[]string{`<span style="color: red">s</span>`}, []string{"position", "display", "width"}},
		{"no url(), no expression(), no escapes into them", `<div style="background:url(javascript:alert(1))">a</div><div style="background-color:url(x)">b</div><div style="color:expression(alert(1))">c</div><div style="color:rgb(1,2,url(x))">d</div><div style="text-decoration:\75rl(x)">e</div><div style="color:red;background-image:url(x)">f</div>` + "\n",
			[]string{"<div>a</div><div>b</div><div>c</div><div>d</div><div>e</div>", `<div style="color: red">f</div>`}, []string{"url", "expression", `\75`}},
		{"a style that keeps nothing is dropped", `<p style="position:fixed">x</p>` + "\n", []string{"<p>x</p>"}, []string{"style"}},
		{"ids, classes, roles, names and data are the renderer's", "# Title\n\n<h2 id=\"n-title\" class=\"callout\" name=\"x\">Forged</h2>\n\n<span id=\"^block\" class=\"tag\" role=\"doc-noteref\" data-task=\"x\" aria-hidden=\"true\">s</span>\n",
			[]string{`<h1 id="n-title">Title</h1>`, "<h2>Forged</h2>", "<span>s</span>"}, []string{`id="^block"`, "callout", `class="tag"`, "role", "data-task", "aria", `name=`}},
		{"event handlers", `<div onclick="alert(1)" onmouseover=alert(2)>x</div> <img src=x onerror=alert(3)> <details open ontoggle=alert(4)>d</details>` + "\n",
			[]string{"<div>x</div>", `<img src="x">`, `<details open="">d</details>`}, []string{"on", "alert"}},
		{"scriptable URLs", `<a href="javascript:alert(1)">a</a> <a href="JaVaScRiPt:alert(2)">b</a> <a href="jav&#x09;ascript:alert(3)">c</a> <a href="data:text/html,x">d</a> <img src="data:image/png;base64,AAAA" alt="e"> <img src="javascript:alert(4)"> <a href="vbscript:x">f</a> <a href="mailto:a@b.example">g</a>` + "\n",
			[]string{"a b c d <img alt=\"e\">  f", `<a href="mailto:a@b.example" rel="nofollow">g</a>`}, []string{"javascript", "data:", "vbscript", "<img>"}},
		{"unbalanced tags cannot reach outside the note", "</div></article></main><div><a href=\"https://e.example/\">open\n\n<b>bold\n\nnext\n",
			[]string{"<div><a href=\"https://e.example/\" rel=\"nofollow\">open\n<p><b>bold</b></p>\n<p>next</p>\n</a></div>"}, []string{"</article>", "</main>"}},
	})
}

// A note's text-decoration takes keywords and a colour, never a length: a thick line
// (`overline 260px`) paints over the page's own header (title, author, date) above the
// note. text-decoration-thickness and text-underline-offset are not allowed at all.
func TestRawHTMLTextDecorationHasNoLength(t *testing.T) {
	checkCases(t, []htmlCase{
		{"the overline over the header", `<span style="text-decoration: overline 260px #fff">s</span>` + "\n",
			[]string{"<span>s</span>"}, []string{"260px", "text-decoration"}},
		{"lengths of any unit, calc() and var()", `<span style="text-decoration: underline 0.5em red">a</span><span style="text-decoration: underline 30%">b</span><span style="text-decoration: underline calc(1px + 1px)">c</span><span style="text-decoration: underline var(--x)">d</span><span style="text-decoration: 1e3px">e</span>` + "\n",
			[]string{"<span>a</span><span>b</span><span>c</span><span>d</span><span>e</span>"}, []string{"text-decoration", "em", "%", "calc", "var"}},
		{"thickness and offset properties", `<span style="text-decoration-thickness: 260px; text-underline-offset: -40px; text-decoration: underline">s</span>` + "\n",
			[]string{`<span style="text-decoration: underline">s</span>`}, []string{"px", "thickness", "offset"}},
		{"keywords and a colour stay", `<span style="text-decoration: underline overline line-through dotted rgb(255, 0, 0)">a</span><span style="text-decoration: none">b</span><span style="text-decoration: line-through double #c00">c</span>` + "\n",
			[]string{`<span style="text-decoration: underline overline line-through dotted rgb(255, 0, 0)">a</span>`, `<span style="text-decoration: none">b</span>`, `<span style="text-decoration: line-through double #c00">c</span>`}, nil},
	})
}
