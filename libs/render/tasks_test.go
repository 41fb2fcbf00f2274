package render

import "testing"

// The policy lets through the data-task of a done task (see tasks) and nothing like it:
// one letter, digit, punctuation or symbol, on a list item.
func TestThePolicyKeepsOneTaskCharacter(t *testing.T) {
	for in, want := range map[string]string{
		`<li data-task="?">a</li>`:                    `<li data-task="?">a</li>`,
		`<li data-task="&#34;">a</li>`:                `<li data-task="&#34;">a</li>`,
		`<li data-task="✓">a</li>`:                    `<li data-task="✓">a</li>`,
		`<li data-task="ab">a</li>`:                   `<li>a</li>`,
		`<li data-task="">a</li>`:                     `<li>a</li>`,
		`<li data-task=" ">a</li>`:                    `<li>a</li>`,
		"<li data-task=\"\u200b\">a</li>":             `<li>a</li>`,
		`<li data-task="x" onclick="alert(1)">a</li>`: `<li data-task="x">a</li>`,
		`<p data-task="x">a</p>`:                      `<p>a</p>`,
		`<li data-other="x">a</li>`:                   `<li>a</li>`,
	} {
		if got := policy.Sanitize(in); got != want {
			t.Errorf("%s sanitized to %s, want %s", in, got, want)
		}
	}
}
