package note

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/libs/routes"
)

// Draft is a publish request after its body format was parsed.
type Draft struct {
	Content string
	Title   *string
	Summary *string
	// Properties from the request; they are merged over the frontmatter's, key by key.
	Properties     map[string]any
	ShowProperties bool
	ExpiresAt      *time.Time
	// Path is where the note lives in its vault (CheckPath); nil for none.
	Path *string
	// Upload holds the request's images, already stored; nil when it has none.
	Upload *Upload
}

// Publish creates a publication from a draft: frontmatter becomes properties (request
// properties win per key), a frontmatter title is the title when none was given, image
// wikilinks become image URLs, and the images are stored and charged to the account.
func (c *Core) Publish(ctx context.Context, accountCUID string, d Draft) (Publication, error) {
	now := c.Now()
	p := Publication{CUID: cuid.New(), AccountCUID: accountCUID, CreatedAt: now, UpdatedAt: now,
		Text: Text{Title: d.Title, Summary: d.Summary, ShowProperties: d.ShowProperties, ExpiresAt: d.ExpiresAt, Path: d.Path}}
	if d.Path != nil {
		if err := CheckPath(*d.Path); err != nil {
			return Publication{}, err
		}
	}
	var images []StoredImage
	reservation := ""
	if d.Upload != nil {
		p.CUID, images, reservation = d.Upload.cuid, d.Upload.images, d.Upload.id
	}
	names := make([]string, len(images))
	for i, img := range images {
		names[i] = img.Filename
	}
	if err := c.setContent(&p, d.Content, d.Properties, d.Title != nil, names); err != nil {
		return Publication{}, err
	}
	if err := checkSize(&p); err != nil {
		return Publication{}, err
	}
	if err := c.render(ctx, &p, c.store.ResolveNames, causePublish); err != nil {
		return Publication{}, err
	}
	p.ETag = newETag()
	if err := c.store.Create(ctx, p, images, reservation); err != nil {
		return Publication{}, fmt.Errorf("publish: %w", err)
	}
	if d.Upload != nil {
		d.Upload.done = true
	}
	// A process may have cached that this cuid does not exist.
	c.notify(ctx, p.CUID)
	if len(p.Names()) > 0 {
		c.notifyLinks(ctx, accountCUID)
	}
	return p, nil
}

// setContent parses content's frontmatter into p: the body without it, the properties
// (request properties merged over the frontmatter's) and, unless the request had a title,
// a frontmatter title. Wikilinks to images named in images become their URLs. Without
// frontmatter or request properties, p keeps its properties.
func (c *Core) setContent(p *Publication, content string, props map[string]any, hasTitle bool, images []string) error {
	fm, body, err := SplitFrontmatter(content)
	if err != nil {
		return err
	}
	if fm != nil || props != nil {
		merged := make(map[string]any, len(fm)+len(props))
		maps.Copy(merged, fm)
		maps.Copy(merged, props)
		p.Properties = merged
	}
	if t, ok := fm["title"].(string); ok && !hasTitle {
		p.Title = &t
	}
	urls := make(map[string]string, len(images))
	for _, name := range images {
		urls[name] = routes.ImageRead.URL(c.publicURL, p.AccountCUID, p.CUID, name)
	}
	refs := render.References(body)
	p.Content = replaceImageLinks(body, refs, urls)
	p.Warnings = append(p.Warnings, referenceWarnings(refs, body, urls)...)
	return nil
}

// checkSize enforces MaxNoteBytes on the stored note data, and refuses text no text
// column of Postgres can hold (invalid UTF-8, NUL), so that SQLite, which would store it,
// behaves the same.
func checkSize(p *Publication) error {
	n := 0
	for name, s := range map[string]*string{"content": &p.Content, "title": p.Title, "summary": p.Summary} {
		if s == nil {
			continue
		}
		n += len(*s)
		if !utf8.ValidString(*s) || strings.ContainsRune(*s, 0) {
			return fmt.Errorf("%w: %s contains a NUL character or invalid UTF-8", ErrInvalidText, name)
		}
	}
	if p.Properties != nil {
		b, err := json.Marshal(p.Properties)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidProperties, err)
		}
		n += len(b)
	}
	if n > MaxNoteBytes {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrNoteTooLarge, n, MaxNoteBytes)
	}
	return nil
}
