package render

import (
	"strings"
	"testing"
)

// The policy alone, as if a note's HTML reached it without keepHTML: what must never
// pass does not, and what keepHTML keeps passes.
func TestPolicyAllowsNoFrameScriptOrForeignMarkup(t *testing.T) {
	for _, in := range []string{
		`<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"></iframe>`, `<iframe srcdoc="x"></iframe>`,
		`<script>alert(1)</script>`, `<style>p{}</style>`, `<svg><text>t</text></svg>`, `<math><mi>x</mi></math>`,
		`<object data="x">o</object>`, `<template>t</template>`, `<textarea>t</textarea>`, `<form><button>b</button></form>`,
		`<select><option>o</option></select>`, `<noscript>n</noscript>`, `<video src="x">v</video>`,
	} {
		if out := policy.Sanitize(in); out != "" {
			t.Errorf("%s passes as %q", in, out)
		}
	}
	for in, want := range map[string]string{
		`<a href="javascript:alert(1)">a</a>`:                                "a",
		`<img src="data:image/png;base64,AAAA">`:                             "",
		`<span style="color:red;position:fixed;background:url(x)">s</span>`:  `<span style="color: red">s</span>`,
		`<span style="background-color:expression(alert(1))">s</span>`:       "<span>s</span>",
		`<embed src="x"><p>after an embed</p>`:                               "<p>after an embed</p>",
		`<div onclick="alert(1)" style="text-align:center">d</div>`:          `<div style="text-align: center">d</div>`,
		`<p id="x">the id pattern refuses other ids</p>`:                     "<p>the id pattern refuses other ids</p>",
		`<h2 id="n-x">the renderer's ids pass: keepHTML drops a note's</h2>`: `<h2 id="n-x">the renderer&#39;s ids pass: keepHTML drops a note&#39;s</h2>`,
	} {
		if out := policy.Sanitize(in); out != want {
			t.Errorf("%s is %q, want %q", in, out, want)
		}
	}
}

// Every attribute keepHTML keeps of a note's HTML passes the policy with a valid value.
func TestPolicyAllowsWhatKeepHTMLKeeps(t *testing.T) {
	valid := map[string]string{"title": "t", "dir": "rtl", "lang": "en-GB", "style": "color: red", "href": "https://e.example/",
		"src": "https://e.example/a.png", "alt": "a", "width": "10", "height": "10", "align": "center", "colspan": "2",
		"rowspan": "2", "scope": "row", "span": "2", "start": "3", "reversed": "", "type": "a", "value": "2", "open": "",
		"cite": "https://e.example/", "datetime": "2026-11-27T10:00:00Z"}
	for _, element := range noteElements {
		for _, key := range append(append([]string{}, noteAttrs[""]...), noteAttrs[element]...) {
			in := "<" + element + " " + key + `="` + valid[key] + `">`
			if out := policy.Sanitize(in); !strings.Contains(out, " "+key+`="`) {
				t.Errorf("%s is %q", in, out)
			}
		}
	}
}
