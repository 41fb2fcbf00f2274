package notedb

import (
	"context"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
)

// FindView implements note.ViewStore.
func (s *Reads) FindView(ctx context.Context, cuid string) (note.View, error) {
	var row struct {
		Pub   publicationRow `gorm:"embedded"`
		Owner ownerRow       `gorm:"embedded"`
	}
	err := s.db.WithContext(ctx).Table("publications p").Select("p.*, "+ownerColumns).
		Joins("JOIN accounts a ON a.cuid = p.account_cuid").Where("p.cuid = ?", cuid).Take(&row).Error
	if err != nil {
		return note.View{}, db.Classify(notFound(err))
	}
	p, err := fromRow(row.Pub)
	if err != nil {
		return note.View{}, err
	}
	return note.View{Publication: p, Owner: row.Owner.settings()}, nil
}

// FindCard implements note.CardStore: the columns a card shows, never the body.
func (s *Reads) FindCard(ctx context.Context, cuid string) (note.View, error) {
	var row struct {
		CUID        string `gorm:"column:cuid"`
		AccountCUID string `gorm:"column:account_cuid"`
		Title       *string
		Summary     *string
		Path        *string
		Properties  *string // for the description (note.Text.Description)
		ExpiresAt   *time.Time
		Unpublished bool
		Owner       ownerRow `gorm:"embedded"`
	}
	err := s.db.WithContext(ctx).Table("publications p").
		Select("p.cuid, p.account_cuid, p.title, p.summary, p.path, p.properties, p.expires_at, p.unpublished, "+ownerColumns).
		Joins("JOIN accounts a ON a.cuid = p.account_cuid").Where("p.cuid = ?", cuid).Take(&row).Error
	if err != nil {
		return note.View{}, db.Classify(notFound(err))
	}
	props, err := decodeProperties(row.Properties)
	if err != nil {
		return note.View{}, err
	}
	p := note.Publication{CUID: row.CUID, AccountCUID: row.AccountCUID, Unpublished: row.Unpublished,
		Text: note.Text{Title: row.Title, Summary: row.Summary, Path: row.Path, Properties: props, ExpiresAt: utc(row.ExpiresAt)}}
	return note.View{Publication: p, Owner: row.Owner.settings()}, nil
}
