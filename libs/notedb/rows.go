package notedb

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/site"
	"gorm.io/gorm"
)

// textColumns are a note's text (note.Text) as publications and versions store it: the
// properties as a JSON object.
type textColumns struct {
	Title          *string
	Summary        *string
	Content        string
	Properties     *string
	ShowProperties bool
	ExpiresAt      *time.Time
	Path           *string
}

type publicationRow struct {
	CUID          string      `gorm:"column:cuid;primaryKey"`
	AccountCUID   string      `gorm:"column:account_cuid"`
	Text          textColumns `gorm:"embedded"`
	Unpublished   bool
	NextVersion   int64
	CreatedMS     int64     `gorm:"column:created_ms"`
	CreatedAt     time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt     time.Time `gorm:"autoUpdateTime:false"`
	HTML          string    `gorm:"column:html"`
	HTMLBytes     int       `gorm:"column:html_bytes"` // len(HTML), sized without reading it
	RenderVersion int
	RenderID      string `gorm:"column:render_id"`
	RenderLinks   string `gorm:"column:render_links"`
	RenderTries   int
	RenderMisses  int
	RenderRetryMS int64 `gorm:"column:render_retry_ms"`
	RenderOutline string
	ETag          string `gorm:"column:etag"`
	// PathKey is the match key of Text.Path, unique per account among the publications
	// that are not unpublished; NamesVersion says which rules wrote the publication's
	// rows of the link index (note_names).
	PathKey      *string
	NamesVersion int
	// SiteExcluded: the note's properties keep it out of every site (site.Excluded).
	SiteExcluded bool
}

func (publicationRow) TableName() string { return "publications" }

// ownerColumns are the owner's settings a public read shows, selected beside a
// publication's columns; ownerRow receives them.
const ownerColumns = "a.display_name AS owner_name, a.show_author AS owner_show_author, a.theme AS owner_theme, " +
	"a.accent_color AS owner_accent_color, a.font AS owner_font, a.indexable AS owner_indexable"

type ownerRow struct {
	OwnerName        string
	OwnerShowAuthor  bool
	OwnerTheme       string
	OwnerAccentColor string
	OwnerFont        string
	OwnerIndexable   bool
}

func (o ownerRow) settings() account.Settings {
	return account.Settings{Name: o.OwnerName, ShowAuthor: o.OwnerShowAuthor, Theme: o.OwnerTheme,
		AccentColor: o.OwnerAccentColor, Font: o.OwnerFont, Indexable: o.OwnerIndexable}
}

type versionRow struct {
	PublicationCUID string      `gorm:"column:publication_cuid;primaryKey"`
	Version         int64       `gorm:"primaryKey"`
	Text            textColumns `gorm:"embedded"`
	CreatedAt       time.Time   `gorm:"autoCreateTime:false"`
}

func (versionRow) TableName() string { return "versions" }

type imageRow struct {
	ID              int64  `gorm:"primaryKey"`
	AccountCUID     string `gorm:"column:account_cuid"`
	PublicationCUID string `gorm:"column:publication_cuid"`
	Filename        string
	MediaType       string
	Size            int64
	SHA256          string `gorm:"column:sha256"`
	BlobKey         string
	Released        bool
	CreatedAt       time.Time `gorm:"autoCreateTime:false"`
}

func (imageRow) TableName() string { return "images" }

// toText encodes a note's text for its columns.
func toText(t note.Text) (textColumns, error) {
	var props *string
	if t.Properties != nil {
		b, err := json.Marshal(t.Properties)
		if err != nil {
			return textColumns{}, fmt.Errorf("%w: %v", note.ErrInvalidProperties, err)
		}
		s := string(b)
		props = &s
	}
	return textColumns{Title: t.Title, Summary: t.Summary, Content: t.Content, Properties: props,
		ShowProperties: t.ShowProperties, ExpiresAt: t.ExpiresAt, Path: t.Path}, nil
}

// fromText decodes a note's text from its columns.
func fromText(c textColumns) (note.Text, error) {
	props, err := decodeProperties(c.Properties)
	if err != nil {
		return note.Text{}, err
	}
	return note.Text{Title: c.Title, Summary: c.Summary, Content: c.Content, Properties: props,
		ShowProperties: c.ShowProperties, ExpiresAt: utc(c.ExpiresAt), Path: c.Path}, nil
}

func toRow(p note.Publication) (publicationRow, error) {
	text, err := toText(p.Text)
	if err != nil {
		return publicationRow{}, err
	}
	links, err := encodeLinks(p.Links)
	if err != nil {
		return publicationRow{}, err
	}
	retry := int64(0)
	if !p.RenderRetry.IsZero() {
		retry = p.RenderRetry.UnixMilli()
	}
	var pathKey *string
	if p.Path != nil {
		k := note.MatchKey(*p.Path)
		pathKey = &k
	}
	return publicationRow{CUID: p.CUID, AccountCUID: p.AccountCUID, Text: text, Unpublished: p.Unpublished,
		CreatedMS: p.CreatedAt.UnixMilli(), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		HTML: p.HTML, HTMLBytes: len(p.HTML), RenderVersion: p.RenderVersion, RenderID: p.RenderID, RenderLinks: links, RenderOutline: p.Outline,
		RenderTries: p.RenderTries, RenderMisses: p.RenderMisses, RenderRetryMS: retry, ETag: p.ETag,
		PathKey: pathKey, NamesVersion: note.NamesVersion, SiteExcluded: site.Excluded(p.Properties)}, nil
}

func fromRow(r publicationRow) (note.Publication, error) {
	text, err := fromText(r.Text)
	if err != nil {
		return note.Publication{}, err
	}
	p := note.Publication{CUID: r.CUID, AccountCUID: r.AccountCUID, Text: text, Unpublished: r.Unpublished,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), HTML: r.HTML, RenderVersion: r.RenderVersion, RenderID: r.RenderID,
		RenderTries: r.RenderTries, RenderMisses: r.RenderMisses, ETag: r.ETag, Outline: r.RenderOutline}
	if r.RenderRetryMS != 0 {
		p.RenderRetry = time.UnixMilli(r.RenderRetryMS).UTC()
	}
	p.Links, err = decodeLinks(r.RenderLinks)
	return p, err
}

func decodeProperties(s *string) (map[string]any, error) {
	if s == nil {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(*s), &m); err != nil {
		return nil, fmt.Errorf("stored properties: %w", err)
	}
	return m, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return note.ErrNotFound
	}
	return err
}
