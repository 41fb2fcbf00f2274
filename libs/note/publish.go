package note

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sharenote/sharenote/libs/blob"
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

// Publisher publishes, updates and unpublishes an account's notes, and takes the uploads
// of their images.
type Publisher struct {
	*core
	store   PublishStore
	uploads UploadStore
	blobs   blob.Store
	quota   int64
	edits   edits
}

// NewPublisher returns the Publisher over store and uploads, rendering with renderer and
// keeping the images' bytes in blobs; it panics without a renderer or an object store.
func NewPublisher(store PublishStore, uploads UploadStore, renderer Renderer, blobs blob.Store, cfg Config) *Publisher {
	if blobs == nil {
		panic("note: the Publisher needs an object store")
	}
	return &Publisher{core: newCore("the Publisher", cfg, renderer, true), store: store, uploads: uploads, blobs: blobs, quota: cfg.Quota}
}

// Now is the clock's reading as publications store it (to the millisecond): what an
// expiry given in the request is counted from.
func (c *Publisher) Now() time.Time { return c.stamp() }

// Publish creates a publication from a draft: frontmatter becomes properties (request
// properties win per key), a frontmatter title is the title when none was given, image
// wikilinks become image URLs, and the images are stored and charged to the account.
func (c *Publisher) Publish(ctx context.Context, accountCUID string, d Draft) (Publication, error) {
	now := c.stamp()
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
	written, err := c.setContent(&p, d.Content, d.Properties, d.Title != nil, names)
	if err != nil {
		return Publication{}, err
	}
	if err := checkSize(&p); err != nil {
		return Publication{}, err
	}
	look := c.lookUp(ctx, &p, c.store.ResolveNames)
	defer look.close()
	if err := c.render(ctx, &p, &written, look, causePublish); err != nil {
		return Publication{}, err
	}
	p.ETag = newETag()
	// The links are still being looked up: the insert does not wait for them.
	change := publishChange(p)
	if err := c.store.Create(ctx, p, images, reservation, change); err != nil {
		return Publication{}, fmt.Errorf("publish: %w", err)
	}
	c.warnLinks(ctx, &p, look)
	if d.Upload != nil {
		d.Upload.done = true
	}
	c.tell(ctx, change)
	return p, nil
}

// warnLinks warns of p's links that lead nowhere, as look finds them, and of its embeds'
// headings and blocks that do not exist. p is stored by then: a lookup that fails costs
// the warnings, not the publish, and is logged.
func (c *Publisher) warnLinks(ctx context.Context, p *Publication, look *linkLookup) {
	targets, err := c.warnUnknownLinks(p, look)
	if err == nil {
		err = c.warnMissingParts(ctx, p, targets)
	}
	if err != nil {
		c.log.WarnContext(ctx, "publish: the links could not be checked", "cuid", p.CUID, "err", err)
	}
}

// setContent parses content's frontmatter into p: the body without it, the properties
// (request properties merged over the frontmatter's) and, unless the request had a title,
// a frontmatter title. Wikilinks to images named in images become their URLs. Without
// frontmatter or request properties, p keeps its properties. It returns the body as
// written, for the warnings of its references.
func (c *core) setContent(p *Publication, content string, props map[string]any, hasTitle bool, images []string) (written, error) {
	fm, body, err := SplitFrontmatter(content)
	if err != nil {
		return written{}, err
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
	w := written{body: body, urls: make(map[string]string, len(images))}
	for _, name := range images {
		w.urls[name] = routes.ImageRead.URL(c.publicURL, p.AccountCUID, p.CUID, name)
	}
	p.Content = body
	if len(w.urls) > 0 {
		w.refs = render.References(body)
		p.Content = replaceImageLinks(body, w.refs, w.urls)
	}
	return w, nil
}

// written is a note's body as its author wrote it, before its image references became
// URLs.
type written struct {
	body string
	urls map[string]string // the note's images' URLs by name
	// refs are the body's references, found when it has images (their references are
	// rewritten); without images the body is the content, and the render finds them.
	refs []render.Reference
}

// warnings are the warnings of the files w references (referenceWarnings), refs being
// the references of the content's render.
func (w *written) warnings(rendered []render.Reference) []Warning {
	if len(w.urls) == 0 {
		w.refs = rendered
	}
	return referenceWarnings(w.refs, w.body, w.urls)
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
