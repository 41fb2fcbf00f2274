package notedb

import (
	"context"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
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
