package notedb

import (
	"encoding/json"
	"fmt"

	"github.com/sharenote/sharenote/libs/note"
)

// storedLinks is the JSON of the render_links column: a render's note.Links. A link's
// target is "title", as renders stored before vault paths wrote it.
type storedLinks struct {
	Nonce string       `json:"nonce"`
	List  []storedLink `json:"links"`
}

type storedLink struct {
	Target   string `json:"title"`
	Fragment string `json:"fragment,omitempty"`
	Embed    bool   `json:"embed,omitempty"`
}

// encodeLinks is the render_links column of links: "" when there are none.
func encodeLinks(links note.Links) (string, error) {
	if len(links.List) == 0 {
		return "", nil
	}
	s := storedLinks{Nonce: links.Nonce, List: make([]storedLink, len(links.List))}
	for i, l := range links.List {
		s.List[i] = storedLink(l)
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// decodeLinks reads the render_links column.
func decodeLinks(column string) (note.Links, error) {
	if column == "" {
		return note.Links{}, nil
	}
	var s storedLinks
	if err := json.Unmarshal([]byte(column), &s); err != nil {
		return note.Links{}, fmt.Errorf("stored links: %w", err)
	}
	links := note.Links{Nonce: s.Nonce, List: make([]note.Link, len(s.List))}
	for i, l := range s.List {
		links.List[i] = note.Link(l)
	}
	return links, nil
}
