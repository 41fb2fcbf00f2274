package notedb

import (
	"context"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// FindView implements note.Storer.
func (s *Store) FindView(ctx context.Context, cuid string) (note.View, error) {
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

// ResolveTitles implements note.Storer.
func (s *Store) ResolveTitles(ctx context.Context, accountCUID string, titles []string, now time.Time) (map[string]note.LinkTarget, error) {
	return resolveTitles(s.db.WithContext(ctx), accountCUID, titles, now)
}

// resolveTitles is ResolveTitles on tx (the store's handle, or a transaction's).
func resolveTitles(tx *gorm.DB, accountCUID string, titles []string, now time.Time) (map[string]note.LinkTarget, error) {
	var rows []struct {
		CUID      string `gorm:"column:cuid"`
		Title     string
		ExpiresAt *time.Time
	}
	err := tx.Model(&publicationRow{}).Select("cuid, title, expires_at").
		Where("account_cuid = ? AND NOT unpublished AND title IN ?", accountCUID, titles).
		Order("updated_at DESC, cuid DESC").Scan(&rows).Error
	if err != nil {
		return nil, db.Classify(err)
	}
	found := make(map[string]note.LinkTarget, len(rows))
	for _, r := range rows {
		if _, ok := found[r.Title]; !ok && (r.ExpiresAt == nil || now.Before(*r.ExpiresAt)) {
			found[r.Title] = note.LinkTarget{CUID: r.CUID, ExpiresAt: utc(r.ExpiresAt)}
		}
	}
	return found, nil
}
